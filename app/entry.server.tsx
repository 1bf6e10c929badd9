import { Writable } from "node:stream";
import type { EntryContext, HandleDataRequestFunction } from "@remix-run/node";
import { isRouteErrorResponse, RemixServer } from "@remix-run/react";
import { renderToPipeableStream } from "react-dom/server";
import { I18nextProvider } from "react-i18next";
import { NonceProvider } from "~/components/nonce";
import { boot } from "~/services/boot.server";
import { getConfig } from "~/services/config/config.server";
import { createI18n, getLanguage } from "~/services/web/i18n.server";
import { CLIENT_ADDRESS_HEADER } from "~/services/audit/audit.server";
import { auditAccess } from "~/services/audit/events.server";
import { auditNotFound } from "~/services/audit/not-found-audit.server";
import { applySecurityHeaders, createNonce, isCrossSiteWrite } from "~/services/web/security.server";
import { wholeAnswer } from "~/services/web/known-body.server";

export { knownBody } from "~/services/web/known-body.server";

// Boot before the first request: an invalid configuration stops the process
// with a readable list of problems (STYLE.md §10).
if (process.env.SKRIBENT_SKIP_BOOT !== "1") await boot();

// The custom server (server/index.mjs, ADR 0013) hands WebSocket upgrades of /live/ws to this, inside the build,
// so the live door shares the app's configuration, database and sessions.
export { handleLiveUpgrade } from "~/services/live/transport-ws.server";

/**
 * server/index.mjs asks this before Remix routes a request, for pages, resource routes and the JSON API alike:
 * - a state-changing request from another site gets 403 (audited). Without this, Remix's own origin check meets a
 *   cross-site post to a page first and answers an empty 500, logged as an error. A call with an Authorization
 *   header carries no ambient credential of a browser: the API checks its token as before.
 * - a URL with a NUL character (%00) gets 400: no stored id or key can hold one (PostgreSQL text cannot), and
 *   looking one up would fail in the database with a 500.
 * - a path with an encoded percent sign (%25) gets 400 (ASVS 1.1.1, decoded once): no path of Skribent holds a "%",
 *   and the router turns a "%2F" left after its one decoding into "/", so "%252F" would be read as a slash: decoded
 *   twice. Query strings are not affected; a search may hold a "%".
 */
export async function refuseBeforeRouting(request: Request): Promise<Response | null> {
  const { appUrl } = getConfig();
  const url = new URL(request.url);
  const refuse = (status: number, text: string) => {
    const headers = new Headers({ "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" });
    return new Response(text, { status, headers: applySecurityHeaders(headers, { appUrl }) });
  };
  if (/%00/.test(`${url.pathname}${url.search}`) || /%25/.test(url.pathname)) return refuse(400, "Bad request");
  // A presigned storage URL (resources.storage.$.tsx) is its own credential — its signature, never the session
  // cookie a browser also sends there: a PUT without Origin, Fetch-Metadata or Referer is not refused for the cookie.
  const cookieAuthenticated = !url.pathname.startsWith("/resources/storage/");
  if (request.headers.has("Authorization") || !isCrossSiteWrite(request, appUrl, { cookieAuthenticated })) return null;
  await auditAccess(request, null, "csrf.rejected", "denied");
  return refuse(403, "Cross-site request refused");
}

/**
 * What the Express layer (server/app.mjs) takes from the app's validated configuration: which proxies Express may
 * believe about the client's address (TRUST_PROXY), the header in which it hands that address to the app, and the
 * security headers of every answer that sets none itself — the static files, which never reach Remix, and resource
 * routes: the rules of an API answer (nosniff, Referrer-Policy, no framing, HSTS under an https APP_URL).
 */
export function serverOptions() {
  const { appUrl, trustProxy } = getConfig();
  return {
    trustProxy,
    clientAddressHeader: CLIENT_ADDRESS_HEADER,
    securityHeaders: [...applySecurityHeaders(new Headers(), { appUrl })],
  };
}

const ABORT_DELAY = 5_000;

export default async function handleRequest(
  request: Request,
  responseStatusCode: number,
  responseHeaders: Headers,
  remixContext: EntryContext,
) {
  const config = getConfig();
  // A page answered 404 — another user's id, or none — to a signed-in user is a denied attempt (ASVS 16.3.2).
  if (responseStatusCode === 404) await auditNotFound(request).catch(() => undefined);
  const nonce = createNonce();
  const i18n = await createI18n(await getLanguage(request));
  applySecurityHeaders(responseHeaders, {
    appUrl: config.appUrl,
    nonce,
    formTargets: [new URL(config.oidc.issuer).origin],
    // Direct-mode live recognition: the browser opens Speechmatics' socket itself (ADR 0013).
    connectTargets:
      config.speech.live.mode === "direct" ? [new URL(config.speech.speechmatics.realtimeUrl).origin] : [],
  });
  responseHeaders.set("Cache-Control", "private, no-store");
  // The whole page is rendered before it is sent (onAllReady), into one buffer: nothing on these pages suspends, so
  // nothing is sent sooner by streaming, and the gzip in front (server/app.mjs) sent nothing before the end anyway.
  // Streamed, React's 2 KB chunks each went through a web stream and a gzip write of their own on the thread pool
  // (some 60 for a workspace page of 130 KiB); buffered, the page is one write with its length (docs/performance.md).
  return new Promise((resolve, reject) => {
    let rendered = false;
    const chunks: Uint8Array[] = [];
    const page = new Writable({
      write(chunk: Uint8Array, _encoding, done) {
        chunks.push(chunk);
        done();
      },
      final(done) {
        clearTimeout(timeout);
        responseHeaders.set("Content-Type", "text/html; charset=utf-8");
        resolve(wholeAnswer(Buffer.concat(chunks), { headers: responseHeaders, status: responseStatusCode }));
        done();
      },
    });
    const { pipe, abort } = renderToPipeableStream(
      <NonceProvider value={nonce}>
        <I18nextProvider i18n={i18n}>
          <RemixServer context={remixContext} url={request.url} abortDelay={ABORT_DELAY} nonce={nonce} />
        </I18nextProvider>
      </NonceProvider>,
      {
        nonce,
        onAllReady() {
          rendered = true;
          pipe(page);
        },
        onShellError(error: unknown) {
          clearTimeout(timeout);
          reject(error);
        },
        onError(error: unknown) {
          responseStatusCode = 500;
          if (rendered) console.error(error);
        },
      },
    );
    const timeout = setTimeout(abort, ABORT_DELAY);
  });
}

export const handleDataRequest: HandleDataRequestFunction = (response) => {
  applySecurityHeaders(response.headers, { appUrl: getConfig().appUrl });
  response.headers.set("Cache-Control", "private, no-store");
  return response;
};

export function handleError(error: unknown, { request }: { request: Request }) {
  if (request.signal.aborted) return;
  // Remix's own answers to an unknown address or a missing action (404, 405) are not failures. Logged as errors,
  // each one a stack trace, any visitor could fill the error log and bury real failures (docs/security.md, Scans).
  if (isRouteErrorResponse(error) && error.status < 500) return;
  // Never patient text in logs: the message and the path only.
  console.error(
    `[error] ${request.method} ${new URL(request.url).pathname}:`,
    error instanceof Error ? (error.stack ?? error.message) : error,
  );
}
