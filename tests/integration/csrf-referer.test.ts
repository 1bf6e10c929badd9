import { afterAll, describe, expect, it } from "vitest";
import { action as audioAction } from "~/routes/_app._index/route";
import { getDb } from "~/models/db.server";
import { apiClientFor } from "../support/api-client";
import { seedTranscribedRecording } from "../support/letter-fixtures";
import { serve } from "../support/remix-document";
import { startServerApp } from "../support/server-app";
import { APP_URL, callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// Issue 22 (outside security check): a cross-site form post carrying the session cookie and a foreign Referer, but
// neither Origin nor Sec-Fetch-Site, deleted a recording. Browsers that send neither header exist in locked-down
// hospitals: for them the Referer decides, and a cookie-authenticated write that names no origin at all is refused.
// Bearer-token clients carry no ambient credential and are not affected.
const app = setupTestApp({ provider: true });

let server: Awaited<ReturnType<typeof startServerApp>> | undefined;
afterAll(() => server?.close());

const FOREIGN = { Referer: "https://evil.example/phish.html" };

function deletePost(key: string, cookie: string | undefined, headers: Record<string, string>) {
  return request("/?index", {
    method: "POST",
    cookie,
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({ intent: "delete", key }).toString(),
  });
}

async function seeded(email: string) {
  const { user, cookie } = await signedInUser({ email });
  const recording = await seedTranscribedRecording({
    ownerId: user.id,
    lines: [{ speaker: "S1", text: "Guten Tag." }],
  });
  return { user, cookie, key: recording.sourceKey };
}

async function recordingsOf(userId: string) {
  const rows = await getDb().selectFrom("recordings").where("owner_id", "=", userId).select("id").execute();
  return rows.length;
}

describe("a cookie-authenticated write with neither Origin nor Fetch-Metadata", () => {
  it("is refused with a foreign Referer: the workspace's delete keeps the recording", async () => {
    const { user, cookie, key } = await seeded("referer-foreign@praxis.example");
    // Before Remix (server/index.mjs's check) and in the action itself (requireUser), the same refusal.
    const before = await serve(deletePost(key, cookie, FOREIGN));
    expect(before.status).toBe(403);
    expect(await before.text()).toBe("Cross-site request refused");
    const inAction = await callRoute(audioAction, deletePost(key, cookie, FOREIGN));
    expect(inAction.status).toBe(403);
    expect(await inAction.text()).toBe("Cross-site request refused");
    // An unparsable Referer names no origin of ours either.
    expect((await serve(deletePost(key, cookie, { Referer: "not a url" }))).status).toBe(403);
    expect(await recordingsOf(user.id)).toBe(1);
    const audited = await getDb()
      .selectFrom("audit_events")
      .where("action", "=", "csrf.rejected")
      .select("outcome")
      .executeTakeFirst();
    expect(audited?.outcome).toBe("denied");
  });

  it("is refused when it names no origin at all, and the JSON door answers its own 403", async () => {
    const { user, cookie, key } = await seeded("referer-none@praxis.example");
    const page = await serve(deletePost(key, cookie, {}));
    expect(page.status).toBe(403);
    expect(await page.text()).toBe("Cross-site request refused");
    expect((await callRoute(audioAction, deletePost(key, cookie, {}))).status).toBe(403);
    const json = (headers: Record<string, string>) =>
      serve(
        request("/api/delete-all", {
          method: "POST",
          cookie,
          headers: { "Content-Type": "application/json", ...headers },
          body: JSON.stringify({ s3_key: key }),
        }),
      );
    expect((await json({})).status).toBe(403);
    expect((await json(FOREIGN)).status).toBe(403);
    expect(await recordingsOf(user.id)).toBe(1);
  });

  it("goes through with the app's own Referer", async () => {
    const { user, cookie, key } = await seeded("referer-own@praxis.example");
    const response = await serve(deletePost(key, cookie, { Referer: `${APP_URL}/?q=x` }));
    expect(response.status).toBe(302);
    expect(await recordingsOf(user.id)).toBe(0);
  });

  it("is refused by the real server too: it hands the check the Referer and the cookie", async () => {
    const { user, cookie, key } = await seeded("referer-server@praxis.example");
    server = await startServerApp();
    const post = (headers: Record<string, string>) =>
      fetch(`${server!.url}/?index`, {
        method: "POST",
        redirect: "manual",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie, ...headers },
        body: new URLSearchParams({ intent: "delete", key }).toString(),
      });
    const foreign = await post(FOREIGN);
    expect(foreign.status).toBe(403);
    expect(await foreign.text()).toBe("Cross-site request refused");
    expect((await post({})).status).toBe(403);
    expect(await recordingsOf(user.id)).toBe(1);
  });
});

describe("a write without the session cookie", () => {
  it("from a bearer-token client needs none of the three headers", async () => {
    const api = await apiClientFor(app.issuer, "anna-berger");
    const response = await serve(
      api("/api/prompts", { method: "POST", json: { title: "Kurz", prompt_text: "Kürzer" } }),
    );
    expect(response.status).toBeLessThan(300);
  });

  it("from a tool that sends no cookie is not refused as cross-site (it signs in first)", async () => {
    const { key } = await seeded("referer-curl@praxis.example");
    const response = await serve(deletePost(key, undefined, {}));
    expect(response.status).not.toBe(403);
  });
});
