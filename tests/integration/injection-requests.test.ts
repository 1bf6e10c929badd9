import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VAULT, USER, PASSWORD, addPatientDocuments, mfilesSource } from "../support/mfiles-helpers";
import { setPatientRecordSource } from "~/services/letters/context-sources.server";
import { getDb } from "~/models/db.server";
import { startSession } from "~/services/web/session.server";
import { routeExports, routeModules } from "../support/access-matrix";
import { snapshotOf } from "../support/access-matrix-fixture";
import { setupChatModel } from "../support/chat-fixtures";
import { startFakeMFilesServer, type FakeMFilesServer } from "../support/fake-mfiles-server";
import { seedHostileWorld, type HostileWorld } from "../support/injection-world";
import { routeUrls, serve } from "../support/remix-document";
import { toneWav } from "../support/wav";
import { APP_URL, request, setupTestApp } from "../setup/app";

// Issue "hardening — injection", the requests a clinician's browser can be made to send and the ones the server
// sends: a state-changing request from another site is refused on every route that takes one (derived from
// app/routes, so a new route is included), and a patient id never steers the call to the patient-record system.
const app = setupTestApp({ env: { DISABLE_MFILES: "0" } });
const llm = setupChatModel();

let world: HostileWorld;
let mfiles: FakeMFilesServer;
beforeAll(async () => {
  world = await seedHostileWorld(llm);
  mfiles = await startFakeMFilesServer({ vaultGuid: VAULT, users: [{ username: USER, password: PASSWORD }] });
  addPatientDocuments(mfiles);
  setPatientRecordSource(mfilesSource(mfiles.url));
}, 120_000);
afterAll(async () => {
  setPatientRecordSource(undefined);
  await mfiles?.close();
});

function storageDir() {
  if (app.config.storage.kind !== "local") throw new Error("the snapshot reads the local store's files");
  return app.config.storage.directory;
}

/** Every route module with an action, and a URL that reaches it (parameters filled with the user's own ids). */
async function actionRoutes() {
  const urls = routeUrls((param) => (param === "adminPath" ? "betrieb" : param === "*" ? world.keys.letterParam : "x"));
  const found: Array<[string, string]> = [];
  for (const [name, file] of routeModules()) if ((await routeExports(file)).action) found.push([name, urls[name]]);
  return found;
}

// What another site can make a signed-in browser send: a form post (no preflight), or with fetch() any method.
const CROSS_SITE: Array<[string, Record<string, string>]> = [
  [
    "an Origin of another site, no Fetch-Metadata (older Safari, Firefox before 90)",
    { Origin: "https://evil.example" },
  ],
  ["Origin: null (a sandboxed frame, a data: URL, a redirect chain)", { Origin: "null" }],
  // Issue 22: locked-down browsers that send neither Origin nor Fetch-Metadata; the Referer decides.
  ["a Referer of another site, neither Origin nor Fetch-Metadata", { Referer: "https://evil.example/form.html" }],
  ["the session cookie and none of Origin, Fetch-Metadata, Referer", {}],
  ["Fetch-Metadata cross-site", { Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" }],
  [
    "Fetch-Metadata same-site (a sibling subdomain)",
    { Origin: "https://x.localhost:3999", "Sec-Fetch-Site": "same-site" },
  ],
];

describe("a state-changing request from another site", () => {
  it.each(CROSS_SITE)("is refused on every route with an action: %s", async (_, headers) => {
    const before = await snapshotOf(world.user.id, storageDir());
    const routes = await actionRoutes();
    expect(routes.length).toBeGreaterThan(40);
    const accepted: string[] = [];
    for (const [name, url] of routes)
      for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
        const response = await serve(
          request(url, {
            method,
            cookie: world.browser.cookie,
            headers: { ...headers, "Content-Type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({ intent: "delete", key: world.keys.recordingKey }).toString(),
          }),
        );
        // 403 before any route runs: not Remix's empty 500, not a redirect to sign-in, not a 404 that looked. The one
        // exception is the headerless write to presigned storage: its credential is the signature, never the cookie,
        // so it is judged as any client without one — refused (unsigned), but not for the cookie.
        const signatureOnly = name === "resources.storage.$" && Object.keys(headers).length === 0;
        const refused = signatureOnly ? response.status >= 400 : response.status === 403;
        if (!refused) accepted.push(`${method} ${name} ${url}: ${response.status}`);
      }
    expect(accepted).toEqual([]);
    expect(await snapshotOf(world.user.id, storageDir())).toEqual(before);
  });

  it("gets a 403 with the security headers, audited, from the check server/index.mjs runs before Remix", async () => {
    const response = await serve(
      request("/chat", {
        method: "POST",
        cookie: world.browser.cookie,
        headers: { Origin: "https://evil.example", "Content-Type": "application/x-www-form-urlencoded" },
        body: "intent=clear",
      }),
    );
    expect(response.status).toBe(403);
    expect(await response.text()).toBe("Cross-site request refused");
    expect(response.headers.get("Content-Security-Policy")).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
    const audited = await getDb()
      .selectFrom("audit_events")
      .where("action", "=", "csrf.rejected")
      .select(["user_id", "outcome"])
      .orderBy("at", "desc")
      .executeTakeFirstOrThrow();
    expect(audited).toEqual({ user_id: null, outcome: "denied" });
    // The production server wires the same check in front of Remix's handler (this suite's serve() mirrors it).
    const server = fs.readFileSync(path.resolve(__dirname, "../../server/app.mjs"), "utf8");
    expect(server.indexOf("refuseBeforeRouting(")).toBeGreaterThan(0);
    expect(server.indexOf("refuseBeforeRouting(")).toBeLessThan(server.indexOf("createRequestHandler({"));
  });

  it("carries no session when the browser sends neither Origin nor Fetch-Metadata", async () => {
    // A browser only omits both on a form post if it is older than every supported one (Origin is sent on every
    // cross-site POST since Chrome 9, Firefox 70, Safari 5) or locked down (issue 22) — and those browsers honour
    // SameSite=Lax, which keeps the session cookie off a cross-site POST. That cookie attribute is the first line.
    const cookie = await startSession({ userId: world.user.id, idToken: null });
    const attributes = cookie.split(";").map((part) => part.trim().toLowerCase());
    expect(attributes).toEqual(expect.arrayContaining(["samesite=lax", "httponly", "path=/"]));
    // The second: with the session cookie but no header that names where the post came from, it is refused; the
    // app's own pages send their Referer (Referrer-Policy: same-origin), and with it the request goes through.
    const session = cookie.split(";")[0];
    const plain = await serve(request("/resources/keepalive", { method: "POST", cookie: session }));
    expect(plain.status).toBe(403);
    expect(await plain.text()).toBe("Cross-site request refused");
    const own = await serve(
      request("/resources/keepalive", { method: "POST", cookie: session, headers: { Referer: `${APP_URL}/` } }),
    );
    expect(own.status).toBe(200);
  });
});

const HOSTILE_IDS = [
  "../../admin",
  "x?y=1",
  "%2e%2e/",
  "http://evil/",
  "//evil.example/REST",
  "a#b",
  "P-1\r\nX-Injected: 1",
  "P-1\nHost: evil.example",
  "P-1&p1150=P-2",
  "P-1/../../session/vault",
  "P‐1", // a Unicode hyphen that looks like P-1
  "-P1",
  "P".repeat(33),
];

describe("a patient id", () => {
  it.each(HOSTILE_IDS.map((id) => [JSON.stringify(id), id]))(
    "%s is refused with SPEC's message before any request leaves",
    async (_, id) => {
      const sent = mfiles.requests.length;
      const api = await world.browser.json("/api/extract-mfiles-pdf-context", "POST", { patient_id: id });
      expect(api.status).toBe(400);
      expect(await api.json()).toEqual({ detail: "Invalid patient ID" });

      // The upload form's patient-record field takes the same check, before the recording is saved.
      const form = new FormData();
      form.append("audio", new File([new Uint8Array(toneWav(1))], "a.wav", { type: "audio/wav" }));
      form.append("patientId", id);
      const page = await world.browser.multipart("/?index", form);
      expect(page.status).toBe(400);
      expect(await page.text()).toContain("Ungültige Patienten-ID");
      expect(mfiles.requests.slice(sent)).toEqual([]);
    },
  );

  it("that is valid reaches only the configured server, as the value of one search condition", async () => {
    const sent = mfiles.requests.length;
    const answer = await world.browser.json("/api/extract-mfiles-pdf-context", "POST", { patient_id: " P-1\r\n" });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ success: expect.any(Boolean) });
    const paths = mfiles.requests.slice(sent).map((r) => `${r.method} ${r.path}${r.query ? `?${r.query}` : ""}`);
    expect(paths.length).toBeGreaterThan(1);
    for (const line of paths)
      expect(line).toMatch(
        /^(POST \/REST\/server\/authenticationtokens|GET \/REST\/objects(\/\d+\/\d+\/\d+\/files(\/\d+\/content)?)?(\?o=0&p1150=P-1(&.*)?)?)$/,
      );
    expect(paths.filter((line) => line.includes("p1150="))).toEqual([expect.stringContaining("p1150=P-1")]);
    expect(new URL(mfiles.url).origin).not.toBe(APP_URL);
  });
});
