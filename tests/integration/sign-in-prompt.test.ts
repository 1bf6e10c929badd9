import { describe, expect, it } from "vitest";
import { getConfig, setConfig } from "~/services/config/config.server";
import { createCookieJar, signInAtDevProvider, type CookieJar } from "../support/oidc-client";
import { serve } from "../support/remix-document";
import { request, setupTestApp, TEST_CLIENT } from "../setup/app";

// OIDC_PROMPT (ASVS 7.6.2): a clinician who signed in once keeps a session at the provider, and by default a new
// Skribent session is then made without a click — single sign-on, as SPEC §7 has it. With OIDC_PROMPT=login every
// sign-in asks for an explicit action at the provider, even while it holds that session. The provider is the real
// development one, the browser a cookie jar that keeps the provider's session between sign-ins.
const app = setupTestApp({ provider: true, env: { RATE_LIMIT_SIGNIN_PER_MINUTE: "1000" } });

/** /auth/start's authorization URL, and where the provider then sends the browser: back to the app, or to a page. */
async function nextSignIn(jar: CookieJar) {
  const start = await serve(request("/auth/start"));
  const authorize = new URL(start.headers.get("Location")!);
  let url = authorize;
  for (let hop = 0; hop < 10; hop += 1) {
    const response = await jar.fetch(url);
    const location = response.headers.get("Location");
    if (!location) return { authorize, endsAt: `${response.status} ${url.pathname.replace(/[^/]+$/, ":id")}` };
    url = new URL(location, url);
    if (url.pathname === "/auth/callback")
      return { authorize, endsAt: url.searchParams.has("code") ? "code" : "no code" };
  }
  throw new Error("too many redirects");
}

describe("signing in again while the provider holds a session", () => {
  it("by default makes a session without a click; with OIDC_PROMPT=login the provider asks first", async () => {
    const jar = createCookieJar();
    // The first sign-in: the clinician chooses an account at the provider, which keeps a session.
    await signInAtDevProvider({ issuer: app.issuer, ...TEST_CLIENT, accountId: "anna-berger", jar });

    const silent = await nextSignIn(jar);
    expect(silent.authorize.searchParams.has("prompt")).toBe(false);
    expect(silent.endsAt).toBe("code");

    const saved = getConfig();
    setConfig({ ...saved, oidc: { ...saved.oidc, prompt: "login" } });
    try {
      const asked = await nextSignIn(jar);
      expect(asked.authorize.searchParams.get("prompt")).toBe("login");
      expect(asked.endsAt).toBe("200 /interaction/:id");
    } finally {
      setConfig(saved);
    }
  });
});
