import { describe, expect, it } from "vitest";
import { formatDateTime } from "~/i18n";
import { getDb } from "~/models/db.server";
import {
  ACCOUNTS,
  AGENTS,
  endFormFor,
  expectSignedIn,
  expectSignedOut,
  formsOf,
  rowsOf,
  sessionsOf,
  sessionsPage,
  signIn as signInAs,
  userIdOf,
} from "../support/session-browsers";
import { setupTestApp } from "../setup/app";

// Settings › "Aktive Sitzungen" (issue 9, ASVS 5.0 7.5.2): a clinician signed in on several browsers sees each of
// them, with a coarse device label taken at sign-in, and ends the others with plain form posts. Every page and
// post goes through the whole app (tests/support/remix-document.ts), signed in through the real callback with the
// browser's User-Agent, as a browser without JavaScript would.
const app = setupTestApp({ provider: true, env: { RATE_LIMIT_SIGNIN_PER_MINUTE: "1000" } });

const { anna: ANNA, jonas: JONAS } = ACCOUNTS;
const { firefoxWindows: FIREFOX_WINDOWS, chromiumLinux: CHROMIUM_LINUX, safariIphone: SAFARI_IPHONE } = AGENTS;
const signIn = (account: (typeof ACCOUNTS)["anna"], userAgent: string) =>
  signInAs(
    { issuer: app.issuer, clientId: app.config.oidc.clientId, clientSecret: app.config.oidc.clientSecret },
    account,
    userAgent,
  );

async function endAllSessions() {
  await getDb().deleteFrom("sessions").execute();
}

describe("the list of active sessions", () => {
  it("shows exactly the user's active sessions with their device labels and times, this one marked", async () => {
    await endAllSessions();
    const firefox = await signIn(ANNA, FIREFOX_WINDOWS);
    const chromium = await signIn(ANNA, CHROMIUM_LINUX);
    const idle = await signIn(ANNA, SAFARI_IPHONE);
    const old = await signIn(ANNA, SAFARI_IPHONE);
    await signIn(JONAS, FIREFOX_WINDOWS);
    // One idle for longer than 30 minutes, one past its 12 hours: both over, though their rows are still there.
    const rows = await sessionsOf(ANNA);
    const [idleRow, oldRow] = rows.filter((r) => r.device_label === "Safari · iOS");
    const over = { idle: new Date(Date.now() - 31 * 60_000), old: new Date(Date.now() - 1000) };
    await getDb()
      .updateTable("sessions")
      .set({ last_seen_at: over.idle })
      .where("id_hash", "=", idleRow.id_hash)
      .execute();
    await getDb().updateTable("sessions").set({ expires_at: over.old }).where("id_hash", "=", oldRow.id_hash).execute();

    const html = await sessionsPage(firefox);
    const shown = rowsOf(html);
    // This session first, then the others by when they were last used.
    expect(shown.map((r) => [r.device, r.current])).toEqual([
      ["Firefox · Windows", true],
      ["Chromium · Linux", false],
    ]);
    expect(html).toContain("Diese Sitzung");
    expect(shown.filter((r) => r.marked).map((r) => r.device)).toEqual(["Firefox · Windows"]);
    // Started and last active, as the rest of the app writes dates (Europe/Berlin, German).
    const mine = rows.find((r) => r.device_label === "Firefox · Windows")!;
    expect(shown.find((r) => r.current)!.times).toEqual([
      formatDateTime(mine.created_at, "de"),
      formatDateTime(mine.last_seen_at, "de"),
    ]);

    // The other browser sees the same two, itself marked; in English too.
    const english = await sessionsPage(chromium, "en");
    expect(rowsOf(english).map((r) => [r.device, r.current])).toEqual([
      ["Chromium · Linux", true],
      ["Firefox · Windows", false],
    ]);
    expect(english).toContain("This session");
    expect(english).toContain(formatDateTime(mine.created_at, "en"));

    // Not just hidden: those browsers are signed out.
    await expectSignedOut(idle, "&expired=1");
    await expectSignedOut(old, "&expired=1");
  });

  it("keeps only the coarse label: neither the User-Agent nor the cookie's hash is stored or shown", async () => {
    await endAllSessions();
    const firefox = await signIn(ANNA, FIREFOX_WINDOWS);
    await signIn(ANNA, CHROMIUM_LINUX);
    const html = await sessionsPage(firefox);
    const rows = await sessionsOf(ANNA);
    expect(rows.map((r) => r.device_label).sort()).toEqual(["Chromium · Linux", "Firefox · Windows"]);
    for (const row of rows) {
      expect(html).not.toContain(row.id_hash);
      expect(html).toContain(row.public_id);
      for (const part of ["Gecko/20100101", "rv:128.0", "83.0.4103.61", "x86_64", "Ubuntu"])
        expect(JSON.stringify(row)).not.toContain(part);
    }
  });

  it("works without JavaScript: a server-rendered page reached by a link, with plain form posts", async () => {
    await endAllSessions();
    const firefox = await signIn(ANNA, FIREFOX_WINDOWS);
    await signIn(ANNA, CHROMIUM_LINUX);
    const settings = await (await firefox.get("/settings")).text();
    expect(settings).toMatch(/<a[^>]*href="\/settings\/sessions"[^>]*>Sitzungen anzeigen …<\/a>/);
    const html = await sessionsPage(firefox);
    // No hydration: no loader data for a client, no application bundle.
    expect(html).not.toContain("__remixContext");
    expect(html).not.toContain("entry.client");
    const forms = formsOf(html);
    expect(forms.map((f) => [f.method, f.action, f.fields.get("intent")])).toEqual([
      ["post", "/logout", null],
      ["post", "/settings/sessions", "end"],
      ["post", "/settings/sessions", "end-others"],
    ]);
    // Not a button that only a script makes work: the end form names its session in a field of its own.
    expect(forms[1].fields.get("session")).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("ending sessions", () => {
  it("ends another session: that browser goes to sign-in at its next request, this one stays signed in", async () => {
    await endAllSessions();
    const firefox = await signIn(ANNA, FIREFOX_WINDOWS);
    const chromium = await signIn(ANNA, CHROMIUM_LINUX);
    const jonas = await signIn(JONAS, CHROMIUM_LINUX);
    const form = endFormFor(await sessionsPage(firefox), "Chromium · Linux");
    const ended = form.fields.get("session")!;

    const answer = await firefox.post(form.action!, form.fields);
    expect(answer.status).toBe(302);
    expect(answer.headers.get("Location")).toBe("/settings/sessions");
    const after = await sessionsPage(firefox);
    expect(rowsOf(after).map((r) => r.device)).toEqual(["Firefox · Windows"]);
    expect(after).toContain("Die Sitzung wurde beendet.");
    expect(after).toContain("Sie sind nirgends sonst angemeldet.");

    await expectSignedOut(chromium);
    await expectSignedIn(firefox);
    await expectSignedIn(jonas);
    const audits = await getDb()
      .selectFrom("audit_events")
      .where("entity_id", "=", ended)
      .select(["user_id", "action", "entity_type", "outcome"])
      .execute();
    expect(audits).toEqual([
      { user_id: await userIdOf(ANNA), action: "session.end", entity_type: "session", outcome: "success" },
    ]);
  });

  it("ends all other sessions at once, and only the user's", async () => {
    await endAllSessions();
    const firefox = await signIn(ANNA, FIREFOX_WINDOWS);
    const others = [await signIn(ANNA, CHROMIUM_LINUX), await signIn(ANNA, SAFARI_IPHONE)];
    const jonas = await signIn(JONAS, FIREFOX_WINDOWS);
    const form = formsOf(await sessionsPage(firefox)).find((f) => f.fields.get("intent") === "end-others")!;

    const answer = await firefox.post(form.action!, form.fields);
    expect(answer.status).toBe(302);
    const after = await sessionsPage(firefox);
    expect(rowsOf(after).map((r) => r.device)).toEqual(["Firefox · Windows"]);
    expect(after).toContain("Alle anderen Sitzungen wurden beendet.");
    expect(formsOf(after).some((f) => f.fields.get("intent") === "end-others")).toBe(false);

    for (const browser of others) await expectSignedOut(browser);
    await expectSignedIn(firefox);
    await expectSignedIn(jonas);
  });

  it('takes the first of a repeated field, so an added "end all" does not widen the request', async () => {
    await endAllSessions();
    const anna = await signIn(ANNA, FIREFOX_WINDOWS);
    const chromium = await signIn(ANNA, CHROMIUM_LINUX);
    const iphone = await signIn(ANNA, SAFARI_IPHONE);
    const session = endFormFor(await sessionsPage(anna), "Chromium · Linux").fields.get("session")!;
    const fields = new URLSearchParams([
      ["intent", "end"],
      ["session", session],
      ["intent", "end-others"],
    ]);
    expect((await anna.post("/settings/sessions", fields)).status).toBe(302);
    await expectSignedOut(chromium);
    for (const browser of [anna, iphone]) await expectSignedIn(browser);
  });

  it("answers 404 for another user's session, a made-up id and this session's own, and ends nothing", async () => {
    await endAllSessions();
    const anna = await signIn(ANNA, FIREFOX_WINDOWS);
    const annaOther = await signIn(ANNA, CHROMIUM_LINUX);
    const jonas = await signIn(JONAS, FIREFOX_WINDOWS);
    await signIn(JONAS, CHROMIUM_LINUX);
    const annas = await sessionsOf(ANNA);
    const before = (await getDb().selectFrom("sessions").select("public_id").execute()).length;

    const tries = [
      ...annas.map((row) => row.public_id),
      // The cookie's hash is no name for a session either.
      ...annas.map((row) => row.id_hash),
      "00000000-0000-4000-8000-000000000000",
      "nicht-einmal-eine-uuid",
    ];
    for (const session of tries) {
      const answer = await jonas.post("/settings/sessions", { intent: "end", session });
      expect(answer.status, session).toBe(404);
      expect(await answer.text()).not.toMatch(/Firefox|Chromium|anna/i);
    }
    const own = endFormFor(await sessionsPage(anna), "Chromium · Linux").fields.get("session")!;
    const current = annas.find((row) => row.public_id !== own)!.public_id;
    expect((await anna.post("/settings/sessions", { intent: "end", session: current })).status).toBe(404);
    expect((await anna.post("/settings/sessions", { intent: "end" })).status).toBe(400);
    expect((await anna.post("/settings/sessions", { intent: "end-everything" })).status).toBe(400);

    expect((await getDb().selectFrom("sessions").select("public_id").execute()).length).toBe(before);
    for (const browser of [anna, annaOther, jonas]) await expectSignedIn(browser);
    const audits = await getDb().selectFrom("audit_events").where("action", "=", "session.end").selectAll().execute();
    expect(audits.filter((a) => annas.some((row) => row.public_id === a.entity_id))).toEqual([]);
  });
});
