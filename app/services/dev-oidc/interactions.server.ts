import type http from "node:http";

import type { Interaction, interactionPolicy as InteractionPolicyModule, Provider } from "oidc-provider";

import { DEV_ACR, demoAccounts, findDemoAccount, type DemoAccount } from "./accounts";
import {
  languageFromAcceptLanguage,
  languageFromUiLocales,
  renderAccountListPage,
  renderErrorPage,
} from "./pages.server";

// The provider's own sign-in pages (devInteractions is off): the list of demo accounts, the login form they
// post, and consent, which development accounts always give.

/** Auth0's wording; the app matches it to show its "verify your e-mail" waiting screen (SPEC §2). */
export const UNVERIFIED_EMAIL_DESCRIPTION = "Please verify your email before logging in.";

const INTERACTION_ROUTE = /^\/interaction\/([A-Za-z0-9_-]+)(\/login)?\/?$/;
const FORM_BODY_LIMIT = 16 * 1024;

export type InteractionRoute = { uid: string; login: boolean };

/** The interaction `path` (without query) names, or undefined for a path oidc-provider serves itself. */
export function matchInteractionRoute(path: string): InteractionRoute | undefined {
  const match = INTERACTION_ROUTE.exec(path);
  if (!match) return undefined;
  return { uid: match[1] ?? "", login: match[2] !== undefined };
}

async function readFormBody(req: http.IncomingMessage): Promise<URLSearchParams> {
  const type = req.headers["content-type"] ?? "";
  if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    return new URLSearchParams();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > FORM_BODY_LIMIT) throw new Error("form body too large");
    chunks.push(buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function sendHtml(res: http.ServerResponse, status: number, html: string) {
  res.statusCode = status;
  res.setHeader("Content-Type", "text/html; charset=utf-8");
  res.setHeader("Cache-Control", "no-store");
  res.end(html);
}

type ProviderErrorShape = { statusCode?: unknown; error?: unknown; error_description?: unknown };

function asProviderError(error: unknown): { status: number; error: string; description?: string } | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { statusCode, error: code, error_description: description } = error as ProviderErrorShape;
  if (typeof statusCode !== "number" || statusCode >= 500 || typeof code !== "string") return undefined;
  return {
    status: statusCode,
    error: code,
    description: typeof description === "string" ? description : undefined,
  };
}

function asksForSecondFactor(acrValues: unknown) {
  return typeof acrValues === "string" && acrValues.split(" ").includes(DEV_ACR.multiFactor);
}

/**
 * How the account signs in: like a provider's step-up, the second factor is shown only when the client asks for it
 * in `acr_values`, and only an account that has one can show it; otherwise the password alone.
 */
function acrFor(account: DemoAccount, acrValues: unknown): string {
  return account.secondFactor && asksForSecondFactor(acrValues) ? DEV_ACR.multiFactor : DEV_ACR.password;
}

/**
 * oidc-provider's prompts with a step-up: a client asking for the second factor, where this browser's provider
 * session signed in with the password alone, gets the account list again, as a real provider would ask for the
 * factor then. Without it the weaker sign-in came back unasked until the session ended (12 h), and a deployment with
 * OIDC_ACR_VALUES refused it each time. The interaction just finished never asks again, or an account without a
 * second factor would loop.
 */
export function policyWithStepUp(policies: typeof InteractionPolicyModule) {
  const policy = policies.base();
  const { Check } = policies;
  const stepUp = new Check("second_factor", "the second factor asked for was not shown", ({ oidc }) =>
    oidc.session?.accountId && !oidc.result?.login && asksForSecondFactor(oidc.params?.acr_values)
      ? oidc.acr !== DEV_ACR.multiFactor
      : Check.NO_NEED_TO_PROMPT,
  );
  policy.get("login")?.checks.push(stepUp);
  return policy;
}

async function grantConsent(provider: Provider, interaction: Interaction): Promise<string> {
  // Development accounts consent to everything the registered client asks for.
  const accountId = interaction.session?.accountId;
  const clientId = interaction.params.client_id;
  if (!accountId || typeof clientId !== "string") throw new Error("consent without a signed-in account");
  const existing = interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined;
  const grant = existing ?? new provider.Grant({ accountId, clientId });
  const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = interaction.prompt.details;
  if (missingOIDCScope?.length) grant.addOIDCScope(missingOIDCScope.join(" "));
  if (missingOIDCClaims?.length) grant.addOIDCClaims(missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(" "));
  }
  return grant.save();
}

async function handleInteraction(
  provider: Provider,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  route: InteractionRoute,
) {
  const interaction = await provider.interactionDetails(req, res);
  const lang = languageFromUiLocales(interaction.params.ui_locales) ?? "de";
  if (interaction.uid !== route.uid) {
    sendHtml(res, 400, renderErrorPage({ lang, error: "invalid_request", description: "interaction mismatch" }));
    return;
  }

  if (route.login) {
    if (req.method !== "POST") {
      res.setHeader("Allow", "POST");
      sendHtml(res, 405, renderErrorPage({ lang, error: "method_not_allowed" }));
      return;
    }
    const accountId = (await readFormBody(req)).get("accountId") ?? "";
    const account = findDemoAccount(accountId);
    if (interaction.prompt.name !== "login" || !account) {
      sendHtml(res, 400, renderErrorPage({ lang, error: "invalid_request", description: "unknown account" }));
      return;
    }
    if (!account.emailVerified) {
      await provider.interactionFinished(
        req,
        res,
        { error: "access_denied", error_description: UNVERIFIED_EMAIL_DESCRIPTION },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: account.id, acr: acrFor(account, interaction.params.acr_values) } },
      { mergeWithLastSubmission: false },
    );
    return;
  }

  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("Allow", "GET, HEAD");
    sendHtml(res, 405, renderErrorPage({ lang, error: "method_not_allowed" }));
    return;
  }
  if (interaction.prompt.name === "login") {
    const clientId = interaction.params.client_id;
    sendHtml(
      res,
      200,
      renderAccountListPage({
        lang,
        action: `/interaction/${interaction.uid}/login`,
        accounts: demoAccounts,
        clientName: typeof clientId === "string" ? clientId : undefined,
      }),
    );
    return;
  }
  if (interaction.prompt.name === "consent") {
    const grantId = await grantConsent(provider, interaction);
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    return;
  }
  sendHtml(
    res,
    400,
    renderErrorPage({
      lang,
      error: "invalid_request",
      description: `unsupported prompt ${interaction.prompt.name}`,
    }),
  );
}

/** Answers an interaction request; failures become an error page (or a dropped connection once headers went out). */
export function serveInteraction(
  provider: Provider,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  route: InteractionRoute,
): void {
  handleInteraction(provider, req, res, route).catch((error: unknown) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const lang = languageFromAcceptLanguage(req.headers["accept-language"]) ?? "de";
    const known = asProviderError(error);
    if (known) {
      sendHtml(res, known.status, renderErrorPage({ lang, error: known.error, description: known.description }));
      return;
    }
    console.error("[dev-oidc] interaction failed", error);
    sendHtml(res, 500, renderErrorPage({ lang, error: "server_error" }));
  });
}
