import type { LoaderFunctionArgs } from "@remix-run/node";
import { audit, clientAddress } from "~/services/audit.server";
import { getAuthenticator, returnToCookie } from "~/services/auth.server";
import { getConfig } from "~/services/config.server";
import { getFixedTFor, getLanguage } from "~/services/i18n.server";
import { hitRateLimit } from "~/services/rate-limit.server";
import { safeRedirect } from "~/services/security.server";

// Starts the authorization code + PKCE flow (remix-auth-oauth2 stores state and
// verifier in a short-lived cookie); where to return afterwards rides along in
// another short-lived cookie, checked again on the way back.

export async function loader({ request }: LoaderFunctionArgs) {
  const config = getConfig();
  const limit = await hitRateLimit({
    bucket: `signin:ip:${clientAddress(request) ?? "direct"}`,
    limit: config.rateLimits.signInPerMinute,
    windowSeconds: 60,
  });
  if (!limit.allowed) {
    await audit({ userId: null, action: "auth.signin.start", outcome: "denied", request });
    const t = await getFixedTFor(await getLanguage(request));
    throw new Response(t("login.tooMany", { seconds: limit.retryAfterSeconds }), {
      status: 429,
      headers: { "Retry-After": String(limit.retryAfterSeconds), "Content-Type": "text/plain; charset=utf-8" },
    });
  }
  const redirectTo = safeRedirect(new URL(request.url).searchParams.get("redirectTo"));
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
