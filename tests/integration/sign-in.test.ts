import { describe, expect, it } from "vitest";
import { loader as callbackLoader } from "~/routes/auth.callback";
import { loader as startLoader } from "~/routes/auth.start";
import { action as keepaliveAction } from "~/routes/resources.keepalive";
import { nonceFor } from "~/services/web/auth.server";
import { getDb } from "~/models/db.server";
import { readSession } from "~/services/web/session.server";
import { signInAtDevProvider } from "../support/oidc-client";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";

const app = setupTestApp({ provider: true });

function cookiesOf(response: Response) {
  return response.headers.getSetCookie().map((c) => c.split(";")[0]);
}

describe("sign-in start", () => {
  it("redirects to the provider with PKCE, the scopes, the audience and the user's language", async () => {
    const response = await callRoute(
      startLoader,
      request("/auth/start?redirectTo=%2Farztbriefe", { headers: { Cookie: "skribent_lng=ImVuIg%3D%3D" } }),
    );
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get("Location")!);
    expect(location.origin).toBe(new URL(app.issuer).origin);
    expect(location.searchParams.get("scope")).toBe("openid profile email");
    expect(location.searchParams.get("audience")).toBe("skribent-api");
    expect(location.searchParams.get("code_challenge_method")).toBe("S256");
    expect(location.searchParams.get("code_challenge")).toMatch(/^[\w-]{43}$/);
    expect(location.searchParams.get("ui_locales")).toBe("en");
    // The ID token must echo a nonce bound to this sign-in's state (oidc-callback.test.ts refuses any other).
    expect(location.searchParams.get("nonce")).toBe(nonceFor(location.searchParams.get("state")!));
    const setCookies = response.headers.getSetCookie();
    expect(setCookies.find((c) => c.startsWith("skribent_oauth:"))).toMatch(/HttpOnly/);
    expect(setCookies.find((c) => c.startsWith("skribent_return="))).toMatch(/SameSite=Lax/);
  });

  it("completes the round trip: the callback stores a session, not tokens, and cleans up", async () => {
    const start = await callRoute(startLoader, request("/auth/start?redirectTo=%2Fhelp"));
    const cookie = cookiesOf(start).join("; ");
    const authorize = new URL(start.headers.get("Location")!);
    // Play the browser at the provider with the app's own state and PKCE challenge.
    const { code, state } = await signInAtDevProvider({
      issuer: app.issuer,
      clientId: app.config.oidc.clientId,
      clientSecret: app.config.oidc.clientSecret,
      redirectUri: `${app.config.appUrl}/auth/callback`,
      accountId: "jonas-keller",
      audience: "skribent-api",
      authorizationUrl: authorize.toString(),
    });
    const callback = await callRoute(callbackLoader, request(`/auth/callback?code=${code}&state=${state}`, { cookie }));
    expect(callback.status).toBe(200);
    const body = await callback.json();
    expect(body.redirectTo).toBe("/help");
    const set = callback.headers.getSetCookie();
    const sid = set.find((c) => c.startsWith("skribent_sid="))!;
    expect(sid).toMatch(/HttpOnly/);
    expect(sid).toMatch(/SameSite=Lax/);
    expect(sid).not.toMatch(/Secure/); // http://localhost
    expect(set.some((c) => /^skribent_oauth:[^=]+=;/.test(c) && /Max-Age=0/.test(c))).toBe(true);
    const state2 = await readSession(request("/", { cookie: sid.split(";")[0] }));
    expect(state2.kind).toBe("active");
    const user = await getDb()
      .selectFrom("users")
      .selectAll()
      .where("email", "=", "jonas.keller@klinikum-nord.example")
      .executeTakeFirstOrThrow();
    expect(user.issuer).toBe(app.issuer);
    expect(user.subject).toBe("jonas-keller");
    const audit = await getDb()
      .selectFrom("audit_events")
      .where("action", "=", "auth.signin")
      .select("outcome")
      .execute();
    expect(audit.map((a) => a.outcome)).toContain("success");
  });

  it("sends an unverified e-mail to the waiting screen", async () => {
    const response = await callRoute(
      callbackLoader,
      request(
        "/auth/callback?error=access_denied&error_description=Please%20verify%20your%20email%20before%20logging%20in.&state=x",
      ),
    );
    expect(response.headers.get("Location")).toBe("/verify-email");
  });
});

describe("keepalive", () => {
  it("keeps a session active while an upload or stream runs", async () => {
    const { cookie, user } = await signedInUser({ email: "upload@praxis.example" });
    await getDb()
      .updateTable("sessions")
      .set({ last_seen_at: new Date(Date.now() - 20 * 60_000) })
      .where("user_id", "=", user.id)
      .execute();
    const response = await callRoute(
      keepaliveAction,
      request("/resources/keepalive", { method: "POST", cookie, headers: { "Sec-Fetch-Site": "same-origin" } }),
    );
    expect(response.status).toBe(200);
    const row = await getDb()
      .selectFrom("sessions")
      .where("user_id", "=", user.id)
      .select("last_seen_at")
      .executeTakeFirstOrThrow();
    expect(Date.now() - row.last_seen_at.getTime()).toBeLessThan(5_000);
    const anonymous = await callRoute(keepaliveAction, request("/resources/keepalive", { method: "POST" }));
    expect(anonymous.status).toBe(401);
  });
});
