import { redirect, type LoaderFunctionArgs } from "@remix-run/node";
import { apiErrorResponse } from "~/services/web/api.server";
import { auditAccess } from "~/services/audit/events.server";
import { clientAddress } from "~/services/audit/audit.server";
import { getAuthenticator, returnToCookie } from "~/services/web/auth.server";
import { getConfig } from "~/services/config/config.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { hitRateLimit } from "~/services/web/rate-limit.server";
import { safeRedirect } from "~/services/web/security.server";

// Starts the authorization code + PKCE flow (remix-auth-oauth2 stores state and
// verifier in a short-lived cookie); where to return afterwards rides along in
// another short-lived cookie, checked again on the way back.

/**
 * Too many sign-in starts from this address (issue 22): a browser is sent to the sign-in page, which says — in the
 * user's language, without JavaScript — how long to wait and offers the way back here; any other client gets the
 * JSON API's `{detail}`. Both carry Retry-After.
 */
async function tooManyStarts(request: Request, seconds: number, redirectTo: string) {
  const retryAfter = { "Retry-After": String(seconds) };
  if (wantsPage(request)) {
    const query = new URLSearchParams({ tooMany: String(seconds), redirectTo });
    return redirect(`/login?${query}`, { status: 303, headers: { ...retryAfter, "Cache-Control": "no-store" } });
  }
  const t = await getFixedTFor(await getLanguage(request));
  return apiErrorResponse(429, t("login.tooManyWait", { count: seconds }), retryAfter);
}

/** A browser's navigation asks for HTML; fetch(), curl and API clients ask for anything or for JSON. */
function wantsPage(request: Request) {
  return /\btext\/html\b/i.test(request.headers.get("Accept") ?? "");
}

export async function loader({ request }: LoaderFunctionArgs) {
  const config = getConfig();
  const limit = await hitRateLimit({
    bucket: `signin:ip:${clientAddress(request) ?? "direct"}`,
    limit: config.rateLimits.signInPerMinute,
    windowSeconds: 60,
  });
  const redirectTo = safeRedirect(new URL(request.url).searchParams.get("redirectTo"));
  if (!limit.allowed) {
    await auditAccess(request, null, "auth.signin.start", "denied");
    throw await tooManyStarts(request, limit.retryAfterSeconds, redirectTo);
  }
  const authenticator = await getAuthenticator();
  try {
    await authenticator.authenticate("oidc", request);
  } catch (thrown) {
    if (thrown instanceof Response && thrown.status >= 300 && thrown.status < 400) {
      // The provider's sign-in page speaks the user's language.
      const location = new URL(thrown.headers.get("Location") ?? "", config.oidc.issuer);
      location.searchParams.set("ui_locales", await getLanguage(request));
      thrown.headers.set("Location", location.toString());
      thrown.headers.append("Set-Cookie", await returnToCookie().serialize(redirectTo));
      throw thrown;
    }
    throw thrown;
  }
  throw new Response("Unexpected sign-in state", { status: 500 });
}
