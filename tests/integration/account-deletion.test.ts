import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { loader as filesLoader } from "~/routes/api.files";
import { action as deleteAllAction } from "~/routes/api.delete-all";
import { action as adminDeleteAction } from "~/routes/$adminPath.accounts/route";
import { action as deleteAction, loader as confirmLoader } from "~/routes/_app.settings.account";
import { PURGE_WATCH_MS, sweepAccountPurges } from "~/services/accounts/account-deletion.server";
import { getDb } from "~/models/db.server";
import { getStorage, ownerPrefix, STORAGE_AREAS } from "~/services/storage/storage.server";
import { adminPage, sessionFor } from "../support/admin-pages";
import { seedWorld, snapshotOf } from "../support/access-matrix-fixture";
import { APP_URL, callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// Account deletion (issue 9 "Data lifecycle"): the user from Settings, or an admin from the dashboard. What must
// hold afterwards, checked against the database's own schema and the store's own listing so nothing new can be
// forgotten: zero rows of the user in any table with an owner_id or user_id column except the content-free audit
// trail, zero objects under the user's prefixes, the other user untouched, and a sign-in starts a fresh account.
const app = setupTestApp({ provider: true });

const form = (fields: Record<string, string>) => ({
  method: "POST",
  headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: APP_URL, "Sec-Fetch-Site": "same-origin" },
  body: new URLSearchParams(fields).toString(),
});

/** Rows of the user per table that has an owner_id or user_id column (found in the schema). */
async function rowsOf(userId: string) {
  const { rows: columns } = await sql<{ table_name: string; column_name: string }>`
    select table_name, column_name from information_schema.columns
    where table_schema = current_schema() and column_name in ('owner_id', 'user_id')`.execute(getDb());
  const counts: Record<string, number> = {};
  for (const { table_name, column_name } of columns) {
    const { rows } = await sql<{ n: string }>`
      select count(*) as n from ${sql.table(table_name)} where ${sql.ref(column_name)} = ${userId}`.execute(getDb());
    if (Number(rows[0]!.n) > 0) counts[table_name] = Number(rows[0]!.n);
  }
  return counts;
}

async function objectsOf(userId: string) {
  const keys: string[] = [];
  for (const area of STORAGE_AREAS) keys.push(...(await getStorage().list(ownerPrefix(area, userId))));
  return keys;
}

const storageDir = () => (app.config.storage.kind === "local" ? app.config.storage.directory : "");

describe("deleting one's own account from Settings", () => {
  it("leaves no row and no object of it, only content-free audit rows; the other user keeps everything", async () => {
    const world = await seedWorld(app.issuer);
    const anna = world.anna;
    const jonasBefore = await snapshotOf(world.jonas.userId, storageDir());
    expect(Object.keys(await rowsOf(anna.userId)).length).toBeGreaterThan(10);
    expect((await objectsOf(anna.userId)).length).toBeGreaterThanOrEqual(4);
    const { multipart_upload_id: uploadId } = await getDb()
      .selectFrom("recordings")
      .select("multipart_upload_id")
      .where("storage_key", "=", world.keys.a.multipartKey)
      .executeTakeFirstOrThrow();

    // The dialog says what will go.
    const confirm = await callRoute(confirmLoader, request("/settings/account", { cookie: anna.cookie }));
    const { owned } = await confirm.json();
    expect(owned).toMatchObject({ letters: 1, templates: 1, prompts: 1, chatMessages: 2 });
    expect(owned.recordings).toBeGreaterThanOrEqual(3);

    // Without the confirmation nothing happens.
    const unconfirmed = await callRoute(
      deleteAction,
      request("/settings/account", { cookie: anna.cookie, ...form({}) }),
    );
    expect(unconfirmed.status).toBe(400);
    expect(await unconfirmed.json()).toEqual({
      error: "Bitte bestätigen Sie, dass alle Ihre Daten endgültig gelöscht werden.",
    });
    expect(Object.keys(await rowsOf(anna.userId)).length).toBeGreaterThan(10);

    const deleted = await callRoute(
      deleteAction,
      request("/settings/account", { cookie: anna.cookie, ...form({ confirm: "yes" }) }),
    );
    expect(deleted.status).toBe(302);
    expect(deleted.headers.get("Location")).toBe("/login?deleted=1");
    expect(deleted.headers.get("Set-Cookie")).toMatch(/Max-Age=0/);

    // Left: the audit trail, and the bare id the storage sweep keeps watching (account_purges).
    expect(await rowsOf(anna.userId)).toEqual({ audit_events: expect.any(Number), account_purges: 1 });
    expect(await getDb().selectFrom("users").select("id").where("id", "=", anna.userId).execute()).toEqual([]);
    expect(await objectsOf(anna.userId)).toEqual([]);
    // The unfinished multipart upload was aborted, not left to the store's lifecycle rules.
    expect(await getStorage().listParts({ key: world.keys.a.multipartKey, uploadId: uploadId! })).toBeNull();
    // The audit trail keeps who did what, never content.
    const audit = await getDb().selectFrom("audit_events").selectAll().where("user_id", "=", anna.userId).execute();
    expect(audit.map((row) => row.action)).toContain("account.delete");
    const text = JSON.stringify(audit);
    const ids = new Set(Object.values(world.keys.a).flat().map(String));
    for (const secret of world.secrets.filter((s) => !ids.has(s))) expect(text).not.toContain(secret);

    // The old session is gone with the account.
    const after = await callRoute(filesLoader, request("/api/files", { cookie: anna.cookie }));
    expect(after.status).toBe(401);
    expect(await snapshotOf(world.jonas.userId, storageDir())).toEqual(jonasBefore);

    // Signing in again starts a fresh, empty account.
    const again = await signedInUser({
      email: "anna.berger@praxis-berger.example",
      subject: "anna-berger",
      issuer: app.issuer,
    });
    expect(again.user.id).not.toBe(anna.userId);
    const files = await callRoute(filesLoader, request("/api/files", { cookie: again.cookie }));
    expect(await files.json()).toEqual({ files: [] });
  });

  it("keeps sweeping the prefixes for late writes, then forgets the account", async () => {
    const { user, cookie } = await signedInUser({ email: "spaet@praxis.example" });
    await callRoute(deleteAction, request("/settings/account", { cookie, ...form({ confirm: "yes" }) }));
    // A transcription that was running elsewhere stores its JSON after the account went.
    const late = `${ownerPrefix("transcripts", user.id)}20260101-000000-late.json`;
    await getStorage().put({ key: late, body: Buffer.from("{}"), contentType: "application/json" });
    const now = new Date();
    expect(await sweepAccountPurges(now)).toMatchObject({ objects: 1, finished: 0 });
    expect(await objectsOf(user.id)).toEqual([]);
    const purge = () => getDb().selectFrom("account_purges").selectAll().where("owner_id", "=", user.id).execute();
    expect(await purge()).toHaveLength(1);
    await sweepAccountPurges(new Date(now.getTime() + PURGE_WATCH_MS + 1000));
    expect(await purge()).toEqual([]);
  });
});

describe("deleting a recording", () => {
  it("leaves no row that names it and no object of it", async () => {
    const world = await seedWorld(app.issuer);
    const key = world.keys.a.recordingKey;
    const { id } = await getDb()
      .selectFrom("recordings")
      .select("id")
      .where("storage_key", "=", key)
      .executeTakeFirstOrThrow();
    const response = await callRoute(
      deleteAllAction,
      world.anna.api("/api/delete-all", { method: "POST", json: { s3_key: key } }),
    );
    expect(response.status).toBe(200);
    const { rows: columns } = await sql<{ table_name: string }>`
      select table_name from information_schema.columns
      where table_schema = current_schema() and column_name = 'recording_id'`.execute(getDb());
    for (const { table_name } of columns) {
      const { rows } = await sql<{ n: string }>`
        select count(*) as n from ${sql.table(table_name)} where recording_id = ${id}`.execute(getDb());
      expect(Number(rows[0]!.n), table_name).toBe(0);
    }
    const left = await objectsOf(world.anna.userId);
    for (const gone of [key, world.keys.a.transcriptKey]) expect(left).not.toContain(gone);
  });
});

describe("an admin deleting an account", () => {
  const adminPost = (cookie: string, fields: Record<string, string>) =>
    callRoute(adminDeleteAction, request("/betrieb/accounts", { cookie, ...form(fields) }), { adminPath: "betrieb" });

  it("deletes the account named by its address, after a confirmation; never their own, never for a clinician", async () => {
    const admin = await sessionFor("admin@skribent.example");
    const target = await signedInUser({ email: "Weg@Praxis-Weg.example" });
    const clinician = await sessionFor("jonas.keller@klinikum-nord.example");

    const page = await adminPage("/betrieb/accounts", admin.cookie);
    expect(page.status).toBe(200);
    expect(page.html).toContain("Konto löschen");
    expect((await adminPage("/betrieb/accounts", clinician.cookie)).status).toBe(403);

    expect((await adminPost(clinician.cookie, { email: "weg@praxis-weg.example", confirm: "yes" })).status).toBe(403);
    const unconfirmed = await adminPost(admin.cookie, { email: "weg@praxis-weg.example" });
    expect(await unconfirmed.json()).toMatchObject({ error: "Bitte bestätigen Sie die Löschung." });
    const unknown = await adminPost(admin.cookie, { email: "niemand@praxis-weg.example", confirm: "yes" });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: "Es gibt kein Konto mit dieser E-Mail-Adresse." });
    const own = await adminPost(admin.cookie, { email: "admin@skribent.example", confirm: "yes" });
    expect(await own.json()).toMatchObject({ error: "Ihr eigenes Konto löschen Sie in den Einstellungen." });
    expect(await rowsOf(target.user.id)).toMatchObject({ sessions: 1 });

    const done = await adminPost(admin.cookie, { email: " WEG@praxis-weg.example ", confirm: "yes" });
    expect(done.status).toBe(302);
    expect(await rowsOf(target.user.id)).toEqual({ account_purges: 1 });
    const audit = await getDb()
      .selectFrom("audit_events")
      .select(["user_id", "action", "outcome"])
      .where("entity_id", "=", target.user.id)
      .execute();
    expect(audit).toEqual([{ user_id: admin.user.id, action: "admin.account-delete", outcome: "success" }]);
    const refused = await getDb()
      .selectFrom("audit_events")
      .select("outcome")
      .where("user_id", "=", clinician.user.id)
      .where("action", "=", "admin.account-delete")
      .execute();
    expect(refused).toEqual([{ outcome: "denied" }]);
  });
});
