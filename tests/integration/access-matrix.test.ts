import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { action as pdfUrlsAction } from "~/routes/api.get-pdf-upload-urls";
import { action as storagePut, loader as storageGet } from "~/routes/resources.storage.$";
import { settleMetering } from "~/services/admin/usage.server";
import {
  bearerCaller,
  cookieCaller,
  problemsOf,
  routeExports,
  routeModules,
  runProbe,
  spyOnStorage,
  touchesOwner,
  type RouteCheck,
} from "../support/access-matrix";
import { apiRoutes } from "../support/access-matrix-api";
import { seedWorld, snapshotOf, type Keys, type World } from "../support/access-matrix-fixture";
import { massAssignmentSuite } from "../support/access-matrix-mass";
import { massAssignmentSettingsSuite } from "../support/access-matrix-mass-settings";
import { screenRoutes } from "../support/access-matrix-screens";
import { setupChatModel } from "../support/chat-fixtures";
import { callRoute, request, setupTestApp } from "../setup/app";

// Issue 9, access control: every route module in app/routes, read from disk, has an entry in the matrix (a new
// route cannot be forgotten), and a second user (B) calling a route with the first user's (A's) ids and keys gets
// 404 — never 403, never 200 — with nothing of A's in the answer, while no object under A's storage prefixes is
// read or written. Afterwards A has everything A had.
const app = setupTestApp({ provider: true });
// The chat calls get answers from the tests' language model, which quotes what reached it: a question or PDF of
// A's in B's answer would show.
setupChatModel();
const table: Record<string, RouteCheck<Keys>> = { ...apiRoutes, ...screenRoutes };
const modules = routeModules();
const checked = Object.entries(table).filter(([, check]) => check.kind === "owned" || check.kind === "own-data-only");

const OWNED_TABLES = [
  "recordings",
  "transcripts",
  "transcription_jobs",
  "letters",
  "letter_versions",
  "letter_proposals",
  "custom_templates",
  "saved_prompts",
  "chat_messages",
  "chat_context",
  "live_sessions",
  "pending_posts",
  "user_vocabulary",
  "letterheads",
  "letter_citations",
  "letter_export_details",
];

let world: World;
let storage: ReturnType<typeof spyOnStorage>;
let before: Awaited<ReturnType<typeof snapshotOf>>;

function storageDir() {
  if (app.config.storage.kind !== "local") throw new Error("the matrix reads the local store's files");
  return app.config.storage.directory;
}

const callerOf = (user: World["anna"], door: "cookie" | "bearer") =>
  door === "cookie" ? cookieCaller(user.cookie) : bearerCaller(user.api);

beforeAll(async () => {
  world = await seedWorld(app.issuer);
  before = await snapshotOf(world.keys.a.userId, storageDir());
  storage = spyOnStorage();
}, 120_000);
afterAll(() => storage?.restore());

describe("the route list", () => {
  it("has an entry for every route module, and every entry is a route module", () => {
    const missing = [...modules.keys()].filter((name) => !(name in table));
    const stale = Object.keys(table).filter((name) => !modules.has(name));
    expect(missing, `route modules missing from the access matrix: ${missing.join(", ")}`).toEqual([]);
    expect(stale, `access-matrix entries whose route module is gone: ${stale.join(", ")}`).toEqual([]);
  });

  it("calls every loader and action a checked route exports", async () => {
    const unprobed: string[] = [];
    for (const [name, check] of checked) {
      if (check.kind !== "owned" && check.kind !== "own-data-only") continue;
      const exported = await routeExports(modules.get(name)!);
      const probed = new Set(check.probes(world.keys).map((probe) => probe.method));
      for (const method of ["loader", "action"] as const)
        if (exported[method] && !probed.has(method)) unprobed.push(`${name} ${method}`);
    }
    expect(unprobed, `exported but never called by B: ${unprobed.join(", ")}`).toEqual([]);
  });

  it("leaves the admin routes to their own test", () => {
    for (const check of Object.values(table))
      if (check.kind === "admin") expect(fs.existsSync(path.resolve(__dirname, "../..", check.coveredBy))).toBe(true);
  });
});

describe("the second user, with the first user's ids and keys", () => {
  it.each(checked.map(([name, check]) => [name, check.kind]))("%s (%s)", async (name) => {
    const check = table[name];
    if (check.kind !== "owned" && check.kind !== "own-data-only") return;
    const problems: string[] = [];
    for (const door of check.doors)
      for (const probe of check.probes(world.keys))
        problems.push(
          ...(await problemsOf({
            file: modules.get(name)!,
            probe,
            as: callerOf(world.jonas, door),
            expected: probe.expect ?? (check.kind === "owned" ? 404 : "no-leak"),
            storage,
            owner: { userId: world.keys.a.userId, secrets: world.secrets },
          })),
        );
    expect(problems).toEqual([]);
  });

  it("cannot open A's stored objects with a URL signed for one of B's own (resources.storage.$)", async () => {
    const [pdfKey] = world.keys.a.pdfKeys;
    const mine = await callRoute(
      pdfUrlsAction,
      world.jonas.api("/api/get-pdf-upload-urls", {
        method: "POST",
        json: { filenames: ["b.pdf"] },
      }),
    );
    const signed = new URL((await mine.json()).upload_urls[0].upload_url);
    const theirs = `/resources/storage/${pdfKey}`;
    const { result: answers, calls } = await storage.during(async () => [
      await callRoute(storageGet, request(`${theirs}${signed.search}`), { "*": pdfKey }),
      await callRoute(storageGet, request(theirs, { cookie: world.jonas.cookie }), { "*": pdfKey }),
      await callRoute(
        storagePut,
        request(`${theirs}${signed.search}`, {
          method: "PUT",
          headers: { "Content-Type": "application/pdf" },
          body: new Uint8Array(Buffer.from("%PDF-1.4 überschrieben")),
        }),
        { "*": pdfKey },
      ),
    ]);
    for (const answer of answers) {
      // Refused as S3 refuses a bad signature, before the object is looked up: nothing says whether it exists.
      expect(answer.status).toBe(403);
      expect(await answer.text()).not.toContain("%PDF");
    }
    expect(touchesOwner(calls, world.keys.a.userId)).toEqual([]);
  });
});

massAssignmentSuite(() => world);
massAssignmentSettingsSuite(() => world);

describe("afterwards", () => {
  it("changed nothing of the first user's: rows and stored objects are as they were", async () => {
    // The comparison covers one of everything: recordings, transcripts, letters, templates, prompts, chat, live.
    const held = Object.keys(before.tables).filter((table) => before.tables[table].length > 0);
    expect(held).toEqual(expect.arrayContaining(OWNED_TABLES));
    expect(Object.keys(before.objects).length).toBeGreaterThanOrEqual(4);
    await settleMetering();
    expect(await snapshotOf(world.keys.a.userId, storageDir())).toEqual(before);
  });

  it("no object under the first user's prefixes was read, written or listed since the second user began", () => {
    expect(touchesOwner(storage.calls, world.keys.a.userId)).toEqual([]);
  });

  it("is refused for ownership alone: A's own reads of the same ids and keys succeed", async () => {
    const refused: string[] = [];
    for (const [name, check] of checked) {
      if (check.kind !== "owned") continue;
      for (const probe of check.probes(world.keys)) {
        if (probe.method !== "loader" || probe.insideOwn || (probe.expect ?? 404) !== 404) continue;
        const { status } = await runProbe(modules.get(name)!, probe, callerOf(world.anna, check.doors[0]));
        if (status !== 200) refused.push(`${probe.label}: ${status}`);
      }
    }
    expect(refused).toEqual([]);
  });
});
