import { describe, expect, it } from "vitest";
import { loader as filesLoader } from "~/routes/api.files";
import { getDb } from "~/models/db.server";
import { startSession } from "~/services/web/session.server";
import { seedWorld, snapshotOf } from "../support/access-matrix-fixture";
import { sessionFor } from "../support/admin-pages";
import { serve } from "../support/remix-document";
import {
  AGENTS,
  browserWith,
  expectSignedIn,
  expectSignedOut,
  formsOf,
  type Browser,
} from "../support/session-browsers";
import { callRoute, request, setupTestApp } from "../setup/app";

// ASVS 5.0 7.4.5: the operator's admins end the sessions of one account (named by its exact e-mail address) or of
// everyone at ADMIN_PATH/sessions, never their own current one. Every page and post goes through the whole app
// (tests/support/remix-document.ts) as a browser without JavaScript; a browser whose session ended is sent to
// sign-in at its next request, and keeps every recording, letter and setting.
const app = setupTestApp({ provider: true });

const PAGE = "/betrieb/sessions";
const DENIED_DE = "Zugriff verweigert - nicht autorisierte Domain";

const browser = (cookie: string) => browserWith([cookie], AGENTS.firefoxWindows);

/** The same user signed in on one more browser. */
async function anotherBrowser(userId: string) {
  return browser((await startSession({ userId, idToken: null })).split(";")[0]!);
}

async function signedInAs(email: string, options: { verified?: boolean } = {}) {
  const { user, cookie } = await sessionFor(email, options);
  return { user, cookie, browser: await browser(cookie) };
}

async function sessionIds(userId?: string) {
  let query = getDb().selectFrom("sessions").select("public_id");
  if (userId) query = query.where("user_id", "=", userId);
  return (await query.execute()).map((row) => row.public_id).sort();
}

async function pageOf(admin: Browser) {
  const response = await admin.get(PAGE);
  expect(response.status).toBe(200);
  return response.text();
}

async function auditOf(action: string, userId: string) {
  return getDb()
    .selectFrom("audit_events")
    .select(["user_id", "action", "entity_type", "entity_id", "outcome"])
    .where("action", "=", action)
    .where("user_id", "=", userId)
    .execute();
}

const storageDir = () => (app.config.storage.kind === "local" ? app.config.storage.directory : "");

/** What the user keeps: their snapshot without the sessions and the audit trail, which this page changes. */
async function dataOf(userId: string) {
  const { tables, ...rest } = await snapshotOf(userId, storageDir());
  const { sessions: _sessions, audit_events: _audit, ...kept } = tables;
  return { tables: kept, ...rest };
}

describe("ending one account's sessions", () => {
  it("signs that account out on every browser at its next request; its data and everyone else stay", async () => {
    const world = await seedWorld(app.issuer);
    const before = await dataOf(world.anna.userId);
    const anna = [await browser(world.anna.cookie), await anotherBrowser(world.anna.userId)];
    const jonas = await browser(world.jonas.cookie);
    const admin = await signedInAs("admin@skribent.example");
    const ended = await sessionIds(world.anna.userId);
    expect(ended).toHaveLength(2);

    // Reached by a link of the admin navigation; two plain forms, no script needed.
    const html = await pageOf(admin.browser);
    expect(html).toMatch(/<a[^>]*href="\/betrieb\/sessions"[^>]*>Sitzungen<\/a>/);
    expect(html).not.toContain("__remixContext");
    const forms = formsOf(html).filter((form) => form.action === PAGE);
    expect(forms.map((form) => [form.method, form.fields.get("intent")])).toEqual([
      ["post", "end-account"],
      ["post", "end-all"],
    ]);

    // The address as typed: spaces around it, other capitals.
    const answer = await admin.browser.post(PAGE, {
      intent: "end-account",
      email: " Anna.Berger@PRAXIS-berger.example ",
    });
    expect(answer.status).toBe(302);
    expect(answer.headers.get("Location")).toBe(PAGE);
    expect(await pageOf(admin.browser)).toContain("2 Sitzungen von anna.berger@praxis-berger.example wurden beendet.");

    for (const signedOut of anna) await expectSignedOut(signedOut);
    const api = await callRoute(filesLoader, request("/api/files", { cookie: world.anna.cookie }));
    expect(api.status).toBe(401);
    await expectSignedIn(jonas);
    await expectSignedIn(admin.browser);
    expect(await sessionIds(world.anna.userId)).toEqual([]);
    expect(await dataOf(world.anna.userId)).toEqual(before);

    // Each ended session under its owner, and the account under the admin who ended it.
    const owner = await auditOf("session.admin-end", world.anna.userId);
    expect(owner.map((row) => row.entity_id).sort()).toEqual(ended);
    expect(new Set(owner.map((row) => `${row.entity_type} ${row.outcome}`))).toEqual(new Set(["session success"]));
    expect(await auditOf("admin.sessions-end", admin.user.id)).toEqual([
      {
        user_id: admin.user.id,
        action: "admin.sessions-end",
        entity_type: "user",
        entity_id: world.anna.userId,
        outcome: "success",
      },
    ]);
  });

  it("keeps this session when the address is the admin's own, and ends the admin's others", async () => {
    const admin = await signedInAs("chefin@skribent.example");
    const elsewhere = await anotherBrowser(admin.user.id);
    const answer = await admin.browser.post(PAGE, { intent: "end-account", email: "CHEFIN@skribent.example" });
    expect(answer.status).toBe(302);
    expect(await pageOf(admin.browser)).toContain("Eine Sitzung von chefin@skribent.example wurde beendet.");
    await expectSignedOut(elsewhere);
    await expectSignedIn(admin.browser);
  });

  it("confirms with the address shortened when it is longer than a toast holds", async () => {
    const admin = await signedInAs("leitung@skribent.example");
    const long = `${"a".repeat(60)}@${`${"b".repeat(60)}.`.repeat(3)}example`;
    const clinician = await signedInAs(long);
    const answer = await admin.browser.post(PAGE, { intent: "end-account", email: long });
    expect(answer.status).toBe(302);
    const page = await pageOf(admin.browser);
    expect(page).toContain(`Eine Sitzung von ${long.slice(0, 199)}… wurde beendet.`);
    await expectSignedOut(clinician.browser);
  });

  it("answers an unknown address with 404, says so in the form, keeps the address and ends nothing", async () => {
    const admin = await signedInAs("admin@skribent.example");
    const before = await sessionIds();
    const answer = await admin.browser.post(PAGE, { intent: "end-account", email: "niemand@praxis.example" });
    expect(answer.status).toBe(404);
    const html = await answer.text();
    expect(html).toMatch(/<p role="alert"[^>]*>Es gibt kein Konto mit dieser E-Mail-Adresse\.<\/p>/);
    expect(html).toMatch(/<input type="email" name="email"[^>]*value="niemand@praxis.example"/);
    expect((await admin.browser.post(PAGE, { intent: "end-account", email: "" })).status).toBe(404);
    expect((await admin.browser.post(PAGE, { intent: "end-everything", confirm: "yes" })).status).toBe(400);
    expect(await sessionIds()).toEqual(before);
  });
});

describe("ending everyone's sessions", () => {
  it("asks for a confirmation, then ends every session but the admin's current one", async () => {
    const admin = await signedInAs("admin@skribent.example");
    const adminElsewhere = await anotherBrowser(admin.user.id);
    const others = [
      (await signedInAs("lea.wolf@praxis-wolf.example")).browser,
      (await signedInAs("tim.schroeder@klinikum-nord.example")).browser,
    ];
    const before = await sessionIds();

    const unconfirmed = await admin.browser.post(PAGE, { intent: "end-all" });
    expect(unconfirmed.status).toBe(400);
    expect(await unconfirmed.text()).toMatch(
      /<p role="alert"[^>]*>Bitte bestätigen Sie, dass alle Sitzungen beendet werden sollen\.<\/p>/,
    );
    expect(await sessionIds()).toEqual(before);
    for (const still of [...others, adminElsewhere]) await expectSignedIn(still);

    const answer = await admin.browser.post(PAGE, { intent: "end-all", confirm: "yes" });
    expect(answer.status).toBe(302);
    expect(await pageOf(admin.browser)).toContain(
      `${before.length - 1} Sitzungen wurden beendet. Ihre Sitzung bleibt bestehen.`,
    );
    for (const signedOut of [...others, adminElsewhere]) await expectSignedOut(signedOut);
    await expectSignedIn(admin.browser);
    const kept = await sessionIds();
    expect(kept).toEqual(await sessionIds(admin.user.id));
    expect(kept).toHaveLength(1);
    const audited = await getDb()
      .selectFrom("audit_events")
      .select("entity_id")
      .where("action", "=", "session.admin-end")
      .execute();
    expect(audited.map((row) => row.entity_id)).toEqual(
      expect.arrayContaining(before.filter((id) => !kept.includes(id))),
    );
    expect(audited.map((row) => row.entity_id)).not.toContain(kept[0]);
  });
});

describe("everyone but the operator's admins", () => {
  it.each([
    ["a clinician", "anna.berger@praxis-berger.example", true],
    ["a look-alike with the operator's domain as a prefix", "admin@skribent.example.evil.com", true],
    ["the operator's domain, not verified", "admin@skribent.example", false],
  ])("%s (%s) gets 403 for both forms, and nothing ends", async (_, email, verified) => {
    const victim = await signedInAs("opfer@praxis-opfer.example");
    const caller = await signedInAs(email, { verified });
    const before = await sessionIds();
    const posts: Array<Record<string, string>> = [
      { intent: "end-account", email: "opfer@praxis-opfer.example" },
      { intent: "end-all", confirm: "yes" },
    ];
    for (const fields of posts) {
      const answer = await caller.browser.post(PAGE, fields);
      expect(answer.status).toBe(403);
      const html = await answer.text();
      expect(html).toContain(DENIED_DE);
      expect(html).not.toContain("data-admin-sessions");
    }
    expect(await sessionIds()).toEqual(before);
    await expectSignedIn(victim.browser);
    const refused = await auditOf("admin.sessions-end", caller.user.id);
    expect(refused.map((row) => row.outcome)).toEqual(["denied", "denied"]);
  });

  it("refuses a cross-site post, even with an admin's cookie, before anything ends", async () => {
    const admin = await signedInAs("admin@skribent.example");
    const before = await sessionIds();
    const answer = await serve(
      request(PAGE, {
        method: "POST",
        cookie: admin.cookie,
        headers: {
          Origin: "https://evil.example",
          "Sec-Fetch-Site": "cross-site",
          "Content-Type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ intent: "end-all", confirm: "yes" }).toString(),
      }),
    );
    expect(answer.status).toBe(403);
    expect(await answer.text()).toBe("Cross-site request refused");
    expect(await sessionIds()).toEqual(before);
  });
});
