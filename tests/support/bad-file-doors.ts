import { Readable } from "node:stream";
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { I18nextProvider } from "react-i18next";
import { createStaticHandler, createStaticRouter, StaticRouterProvider } from "react-router-dom/server";
import AudioPage, { action as audioAction, loader as audioLoader } from "~/routes/_app._index/route";
import { action as uploadUrlAction } from "~/routes/api.get-upload-url";
import { action as metadataAction } from "~/routes/api.update-file-metadata";
import { action as completeAction } from "~/routes/api.upload-parts.complete";
import { action as startAction } from "~/routes/api.upload-parts.start";
import { action as urlsAction } from "~/routes/api.upload-parts.urls";
import { action as storagePut } from "~/routes/resources.storage.$";
import { createI18n, languageCookie } from "~/services/web/i18n.server";
import { getStorage, ownerPrefix, STORAGE_AREAS } from "~/services/storage/storage.server";
import type { ApiClient } from "./api-client";
import type { BadFile } from "./bad-file-fixtures";
import { snapshotOf } from "./access-matrix-fixture";
import { callRoute, request } from "../setup/app";

// The upload doors as a client meets them, for hostile files: the form without JavaScript (its answer and the
// page it renders), get-upload-url + PUT + update-file-metadata, and the resumable multipart upload. Each gives
// back the status and the message the client would show. `storedState` is what "nothing half-stored" means:
// every row the user owns (the audit trail and the usage meter aside, which rightly record the attempt) and
// every object under the user's prefixes — in either store.

export type Outcome = { status: number; message: string };

export async function storedState(userId: string) {
  const { tables } = await snapshotOf(userId, "/nonexistent-local-store");
  delete tables.audit_events;
  delete tables.usage_events;
  const objects: string[] = [];
  for (const area of STORAGE_AREAS) objects.push(...(await getStorage().list(ownerPrefix(area, userId))));
  return { tables, objects: objects.sort() };
}

// ---------------------------------------------------------------------------------------------------------------
// The form door

const BOUNDARY = "----skribent-bad-files-7d1f";

/** A multipart/form-data body written by hand, so a file name reaches the server byte for byte. */
export function formBody(file: { name: string; type: string }, fields: Record<string, string> = {}) {
  const head = Object.entries(fields)
    .map(([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
    .join("");
  const fileHead = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="audio"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`;
  return { head: Buffer.from(head + fileHead, "utf8"), tail: Buffer.from(`\r\n--${BOUNDARY}--\r\n`, "utf8") };
}

/** The form's POST; `data` may be a stream (a sparse file of 70 MB is never read into memory). */
export function formRequest(
  cookie: string,
  file: BadFile | (Omit<BadFile, "bytes"> & { stream: Readable }),
  fields: Record<string, string> = { language: "de-DE", mode: "transcript" },
) {
  const { head, tail } = formBody(file, fields);
  const body =
    "bytes" in file
      ? Buffer.concat([head, file.bytes, tail])
      : (Readable.toWeb(Readable.from(chain(head, file.stream, tail))) as ReadableStream<Uint8Array>);
  return request("/?index", {
    method: "POST",
    cookie,
    headers: { "Content-Type": `multipart/form-data; boundary=${BOUNDARY}`, "Sec-Fetch-Site": "same-origin" },
    body,
    ...(body instanceof Buffer ? {} : { duplex: "half" }),
  } as RequestInit & { cookie: string });
}

async function* chain(head: Buffer, stream: Readable, tail: Buffer) {
  yield head;
  for await (const chunk of stream) yield chunk as Buffer;
  yield tail;
}

/** The form's answer, in English (the SPEC's wording) unless `language` says "de". */
export async function formUpload(
  cookie: string,
  file: Parameters<typeof formRequest>[1],
  language: "en" | "de" = "en",
): Promise<Outcome> {
  const response = await callRoute(audioAction, formRequest(await cookieIn(cookie, language), file));
  if (response.status === 302) return { status: 302, message: "" };
  return { status: response.status, message: (await response.json()).error };
}

async function cookieIn(cookie: string, language: "en" | "de") {
  return language === "de" ? cookie : `${cookie}; ${(await languageCookie().serialize("en")).split(";")[0]}`;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- Remix loaders handed to React Router's static handler */
const handler = createStaticHandler([
  {
    id: "routes/_app._index",
    path: "/",
    loader: (a: any) => audioLoader(a),
    action: (a: any) => audioAction(a),
    Component: AudioPage,
  },
]);
/* eslint-enable @typescript-eslint/no-explicit-any */

/** The Audio page as the server renders it in English: after the form's POST when `file` is given. */
export async function audioPage(cookie: string, file?: BadFile) {
  const english = await cookieIn(cookie, "en");
  const req = file ? formRequest(english, file) : request("/", { cookie: english });
  const context = await handler.query(req);
  if (context instanceof Response) return { status: context.status, html: "" };
  const router = createStaticRouter(handler.dataRoutes, context);
  const i18n = await createI18n("en");
  const page = createElement(StaticRouterProvider, { router, context, hydrate: false });
  const html = renderToString(createElement(I18nextProvider, { i18n }, page));
  return { status: context.statusCode, html };
}

/** Text as React writes it into HTML (one escaper for the suites: injection-payloads.ts). */
export { escapeHtml as escaped } from "./injection-payloads";

// ---------------------------------------------------------------------------------------------------------------
// The API doors

/** PUT as the browser does: the app's storage route for the local store, S3 over HTTP. */
export async function putTo(url: string, body: Buffer | Readable, contentType: string | null) {
  const headers = new Headers();
  if (contentType) headers.set("Content-Type", contentType);
  const data = body instanceof Readable ? (Readable.toWeb(body) as ReadableStream<Uint8Array>) : new Uint8Array(body);
  const init = { method: "PUT", headers, body: data, duplex: "half" } as RequestInit;
  const parsed = new URL(url);
  if (!parsed.pathname.startsWith("/resources/storage/")) return fetch(url, init);
  const key = decodeURIComponent(parsed.pathname.replace(/^\/resources\/storage\//, ""));
  return callRoute(storagePut, new Request(url, init), { "*": key });
}

async function post(route: Parameters<typeof callRoute>[0], client: ApiClient, path: string, json: unknown) {
  const response = await callRoute(route, client(path, { method: "POST", json }));
  const body = await response.json();
  return { status: response.status, body, message: typeof body.detail === "string" ? body.detail : "" };
}

/** get-upload-url → PUT → update-file-metadata; the first refusal is the outcome. */
export async function presignedUpload(
  client: ApiClient,
  file: { name: string; type: string; bytes: Buffer | Readable },
): Promise<Outcome & { key?: string; step: "slot" | "put" | "confirm" }> {
  const slot = await post(uploadUrlAction, client, "/api/get-upload-url", {
    file_name: file.name,
    file_type: file.type,
    language_code: "de",
  });
  if (slot.status !== 200) return { status: slot.status, message: slot.message, step: "slot" };
  const key = slot.body.key as string;
  const put = await putTo(slot.body.url, file.bytes, file.type);
  if (put.status !== 200)
    return { status: put.status, message: `Upload failed with status: ${put.status}`, key, step: "put" };
  const confirmed = await post(metadataAction, client, "/api/update-file-metadata", { s3_key: key, metadata: {} });
  return { status: confirmed.status, message: confirmed.message, key, step: "confirm" };
}

/** upload-parts start → part URLs → PUT each part → complete → update-file-metadata. */
export async function multipartUpload(
  client: ApiClient,
  file: { name: string; type: string; bytes: Buffer; declaredSize?: number },
): Promise<Outcome & { key?: string; step: "start" | "confirm" }> {
  const started = await post(startAction, client, "/api/upload-parts/start", {
    file_name: file.name,
    file_type: file.type,
    file_size: file.declaredSize ?? file.bytes.length,
    language_code: "de",
  });
  if (started.status !== 200) return { status: started.status, message: started.message, step: "start" };
  const {
    key,
    part_size: size,
    part_count: count,
  } = started.body as { key: string; part_size: number; part_count: number };
  const numbers = Array.from({ length: count }, (_, i) => i + 1);
  const urls = await post(urlsAction, client, "/api/upload-parts/urls", { key, part_numbers: numbers });
  for (const { part_number: n, url } of urls.body.parts as Array<{ part_number: number; url: string }>) {
    const put = await putTo(url, file.bytes.subarray((n - 1) * size, n * size), null);
    if (put.status !== 200) throw new Error(`part ${n}: ${put.status}`);
  }
  const completed = await post(completeAction, client, "/api/upload-parts/complete", { key });
  if (completed.status !== 200) throw new Error(`complete: ${completed.status} ${completed.message}`);
  const confirmed = await post(metadataAction, client, "/api/update-file-metadata", { s3_key: key, metadata: {} });
  return { status: confirmed.status, message: confirmed.message, key, step: "confirm" };
}
