import { describe, expect, it } from "vitest";
import { loader as workspaceLoader } from "~/routes/_app";
import { action as resumeAction, loader as resumeLoader } from "~/routes/resume.$id";
import { getDb } from "~/models/db.server";
import { readSession, requireUser } from "~/services/web/session.server";
import { callRoute, request, signedInUser, setupTestApp } from "../setup/app";

setupTestApp();

async function ageSession(minutes: number) {
  await getDb()
    .updateTable("sessions")
    .set({ last_seen_at: new Date(Date.now() - minutes * 60_000) })
    .execute();
}

describe("database sessions", () => {
  it("serves the workspace to a signed-in user with counts from the database", async () => {
    const { cookie, user } = await signedInUser({ email: "a.berger@praxis.example", name: "Dr. Anna Berger" });
    await getDb()
      .insertInto("recordings")
      .values([
        {
          owner_id: user.id,
          storage_key: `audio/${user.id}/1`,
          original_filename: "a.wav",
          language_code: "de-DE",
          transcription_status: "completed",
          transcript_key: "transcripts/x",
        },
        {
          owner_id: user.id,
          storage_key: `audio/${user.id}/2`,
          original_filename: "b.wav",
          language_code: "de-DE",
          transcription_status: "completed",
        },
      ])
      .execute();
    const other = await signedInUser({ email: "someone@else.example" });
    await getDb()
      .insertInto("recordings")
      .values({
        owner_id: other.user.id,
        storage_key: `audio/${other.user.id}/1`,
        original_filename: "c.wav",
        language_code: "de-DE",
      })
      .execute();

    const response = await callRoute(workspaceLoader, request("/", { cookie }));
    expect(response.status).toBe(200);
    const data = await response.json();
    expect(data.user).toEqual({ name: "Dr. Anna Berger", email: "a.berger@praxis.example" });
    // Only this user's rows; transcriptions need a completed status and a transcript.
    expect(data.counts).toEqual({ audio: 2, transcriptions: 1, arztbriefe: 0 });
  });

  it("redirects to sign-in with a way back when there is no session", async () => {
    const response = await callRoute(workspaceLoader, request("/settings?tab=x"));
    expect(response.status).toBe(302);
    expect(response.headers.get("Location")).toBe("/login?redirectTo=%2Fsettings%3Ftab%3Dx");
  });

  it("ends a session after 30 idle minutes and deletes its row", async () => {
    const { cookie } = await signedInUser({ email: "idle@praxis.example" });
    await ageSession(29);
    expect((await readSession(request("/", { cookie }))).kind).toBe("active");
    await ageSession(31);
    const state = await readSession(request("/", { cookie }));
    expect(state.kind).toBe("expired");
    expect((await readSession(request("/", { cookie }))).kind).toBe("none");
  });

  it("ends a session 12 hours after sign-in even when it is in use", async () => {
    const { cookie } = await signedInUser({ email: "long@praxis.example" });
    const later = new Date(Date.now() + 12 * 3_600_000 + 1000);
    await getDb().updateTable("sessions").set({ last_seen_at: later }).execute();
    expect((await readSession(request("/", { cookie }), later)).kind).toBe("expired");
  });

  it("refuses a cross-site form post before anything else, and audits it", async () => {
    const { cookie } = await signedInUser({ email: "csrf@praxis.example" });
    const thrown = await requireUser(
      request("/settings", { method: "POST", cookie, headers: { "Sec-Fetch-Site": "cross-site" }, body: "a=1" }),
    ).catch((r: Response) => r);
    expect((thrown as Response).status).toBe(403);
    const row = await getDb()
      .selectFrom("audit_events")
      .where("action", "=", "csrf.rejected")
      .select("outcome")
      .executeTakeFirst();
    expect(row?.outcome).toBe("denied");
  });

  it("keeps a form posted after expiry and gives it back to the same user only", async () => {
    const { cookie, user } = await signedInUser({ email: "form@praxis.example" });
    await ageSession(45);
    const post = request("/settings", {
      method: "POST",
      cookie,
      headers: { "Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin" },
      body: new URLSearchParams({ intent: "save", note: "Befund: unauffällig" }).toString(),
    });
    const redirect = (await requireUser(post).catch((r: Response) => r)) as Response;
    expect(redirect.status).toBe(302);
    const location = new URL(redirect.headers.get("Location")!, "http://x");
    expect(location.pathname).toBe("/login");
    const resumePath = location.searchParams.get("redirectTo")!;
    expect(resumePath).toMatch(/^\/resume\/[\w-]+$/);
    const id = resumePath.split("/").pop()!;

    // Signed in again (a new session for the same user): the form comes back.
    const again = await signedInUser({ email: "form@praxis.example" });
    expect(again.user.id).toBe(user.id);
    const kept = await (await callRoute(resumeLoader, request(resumePath, { cookie: again.cookie }), { id })).json();
    expect(kept.pending).toEqual({
      path: "/settings",
      fields: [
        ["intent", "save"],
        ["note", "Befund: unauffällig"],
      ],
    });

    // Someone else signed in on this browser sees nothing.
    const stranger = await signedInUser({ email: "other@praxis.example" });
    const hidden = await (
      await callRoute(resumeLoader, request(resumePath, { cookie: stranger.cookie }), { id })
    ).json();
    expect(hidden.pending).toBeNull();

    // Discarding removes it.
    await callRoute(
      resumeAction,
      request(resumePath, { method: "POST", cookie: again.cookie, headers: { "Sec-Fetch-Site": "same-origin" } }),
      { id },
    );
    const gone = await (await callRoute(resumeLoader, request(resumePath, { cookie: again.cookie }), { id })).json();
    expect(gone.pending).toBeNull();
  });
});
