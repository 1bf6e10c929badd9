import { describe, expect, it } from "vitest";
import { loader as playbackLoader } from "~/routes/api.audio-playback.$";
import { action as transcribeAction } from "~/routes/api.transcribe_v2";
import { loader as transcriptLoader } from "~/routes/api.transcript_v2.$";
import { getConfig, setConfig } from "~/services/config/config.server";
import { getDb } from "~/models/db.server";
import { runExpireSessions } from "~/services/jobs/registry.server";
import * as editorRoute from "~/routes/_app.arztbriefe.$/route";
import { serve } from "../support/remix-document";
import { getStorage } from "~/services/storage/storage.server";
import { recordingWithLetter } from "../support/access-matrix-fixture";
import { APP_URL, callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// Audio retention (issues 9 and 22, AUDIO_RETENTION_DAYS, default 30): the period after the doctor released a
// recording's letter ("Freigegeben"), the maintenance job deletes its audio; the transcript and the letter stay, and
// the clinician is told plainly why the recording no longer plays — and beforehand, when it will go. A letter never
// released keeps its audio however old; a period of 0 keeps every recording's audio.
setupTestApp();

const DAY = 86_400_000;

async function recordingAged(email: string, releasedDaysAgo: number | null) {
  const { user, cookie } = await signedInUser({ email });
  const seeded = await recordingWithLetter(user.id, {
    fileName: "Visite.wav",
    displayName: "Visite",
    spoken: "Husten seit drei Tagen",
    letter: "Husten.",
  });
  await getStorage().put({ key: seeded.sourceKey, body: Buffer.from("RIFF"), contentType: "audio/wav" });
  await getDb()
    .updateTable("letters")
    .set({
      updated_at: new Date(Date.now() - 4000 * DAY),
      released_at: releasedDaysAgo === null ? null : new Date(Date.now() - releasedDaysAgo * DAY),
    })
    .where("id", "=", seeded.letterId)
    .execute();
  return { user, cookie, ...seeded };
}

const json = (cookie: string, body: unknown) =>
  request("/api/transcribe_v2", {
    method: "POST",
    cookie,
    headers: { "Content-Type": "application/json", Origin: APP_URL, "Sec-Fetch-Site": "same-origin" },
    body: JSON.stringify(body),
  });

describe("audio retention", () => {
  it("deletes the audio of letters released longer ago than the period, and keeps transcript and letter", async () => {
    const config = getConfig();
    expect(config.audioRetentionMs).toBe(30 * DAY);
    try {
      const old = await recordingAged("alt@praxis.example", 31);
      const recent = await recordingAged("neu@praxis.example", 29);
      const unreleased = await recordingAged("offen@praxis.example", null);

      expect((await runExpireSessions()).retention).toEqual({ audio: 1, transcripts: 0, letters: 0 });
      expect(await getStorage().head(old.sourceKey)).toBeNull();
      expect(await getStorage().head(recent.sourceKey)).not.toBeNull();
      expect(await getStorage().head(unreleased.sourceKey)).not.toBeNull();
      // The admin's audit view: what the sweep deleted, as a count.
      const sweep = await getDb()
        .selectFrom("audit_events")
        .select(["entity_id"])
        .where("action", "=", "retention.sweep")
        .execute();
      expect(sweep).toEqual([{ entity_id: "audio:1 transcripts:0 letters:0" }]);
      // Idempotent: the next run finds nothing more.
      expect((await runExpireSessions()).retention).toEqual({ audio: 0, transcripts: 0, letters: 0 });

      // Playing says why, in the clinician's words; the transcript still opens.
      const play = await callRoute(
        playbackLoader,
        request(`/api/audio-playback/${old.sourceKey}`, { cookie: old.cookie }),
        { "*": old.sourceKey },
      );
      expect(play.status).toBe(404);
      expect(await play.json()).toEqual({
        detail: "The audio was deleted when its retention period ended. The transcript and the letter are kept.",
      });
      const short = old.transcriptKey.replace(/^transcripts\//, "");
      const transcript = await callRoute(
        transcriptLoader,
        request(`/api/transcript_v2/${short}`, { cookie: old.cookie }),
        { "*": short },
      );
      expect(transcript.status).toBe(200);
      const letters = await getDb().selectFrom("letters").select("id").where("id", "=", old.letterId).execute();
      expect(letters).toHaveLength(1);
      // Nothing to transcribe again from.
      const again = await callRoute(transcribeAction, json(old.cookie, { s3_key: old.sourceKey }));
      expect(again.status).toBe(404);

      const audit = await getDb()
        .selectFrom("audit_events")
        .select(["action", "entity_type", "outcome"])
        .where("user_id", "=", old.user.id)
        .where("action", "=", "recording.audio-retention")
        .execute();
      expect(audit).toEqual([{ action: "recording.audio-retention", entity_type: "recording", outcome: "success" }]);
    } finally {
      setConfig(config);
    }
  });

  it("keeps every recording's audio with a period of 0", async () => {
    const config = getConfig();
    setConfig({ ...config, audioRetentionMs: null });
    try {
      const kept = await recordingAged("ohne-frist@praxis.example", 4000);
      expect((await runExpireSessions()).retention).toEqual({ audio: 0, transcripts: 0, letters: 0 });
      expect(await getStorage().head(kept.sourceKey)).not.toBeNull();
    } finally {
      setConfig(config);
    }
  });

  it("deletes transcripts and letters after their own periods from the release, when the operator sets them", async () => {
    const config = getConfig();
    setConfig({ ...config, transcriptRetentionMs: 60 * DAY, letterRetentionMs: 365 * DAY });
    try {
      // Only this test's recordings count: the earlier tests' letters are no longer released.
      await getDb().updateTable("letters").set({ released_at: null }).execute();
      const young = await recordingAged("jung@praxis.example", 10);
      const older = await recordingAged("aelter@praxis.example", 61);
      const oldest = await recordingAged("uralt@praxis.example", 400);
      // The oldest goes whole with its letter; of the others only the 61-day-old one is past the audio period.
      expect((await runExpireSessions()).retention).toEqual({ audio: 1, transcripts: 1, letters: 1 });
      const left = async (id: string) =>
        getDb()
          .selectFrom("recordings")
          .leftJoin("letters", "letters.recording_id", "recordings.id")
          .where("recordings.id", "=", id)
          .select(["recordings.transcript_key", "recordings.audio_deleted_at", "letters.id as letter_id"])
          .executeTakeFirst();
      // Ten days after release: everything is still there (audio goes at 30).
      expect(await left(young.recordingId)).toMatchObject({
        transcript_key: young.transcriptKey,
        audio_deleted_at: null,
      });
      // Past 60 days: the transcript and the audio are gone, the letter stays.
      expect(await left(older.recordingId)).toMatchObject({ transcript_key: null, letter_id: older.letterId });
      expect(await getStorage().head(older.transcriptKey)).toBeNull();
      // Past a year: the letter went, and the whole recording with it.
      expect(await left(oldest.recordingId)).toBeUndefined();
    } finally {
      setConfig(config);
    }
  });

  it("is started by the doctor's release, shown with its date, and undone by a new version", async () => {
    const seeded = await recordingAged("freigabe@praxis.example", null);
    const editor = `/arztbriefe/${seeded.letterParam}`;
    const page = async (path: string) => (await serve(request(path, { cookie: seeded.cookie }))).text();
    expect(await page(editor)).toContain("data-release-form");
    const released = await callRoute(
      editorRoute.action,
      request(editor, {
        method: "POST",
        cookie: seeded.cookie,
        headers: { "Sec-Fetch-Site": "same-origin" },
        body: new URLSearchParams({ intent: "release" }),
      }),
      { "*": seeded.letterParam },
    );
    expect(released.status).toBe(302);
    const on = new Intl.DateTimeFormat("de-DE", { timeZone: "Europe/Berlin", dateStyle: "medium" }).format(
      new Date(Date.now() + 30 * DAY),
    );
    expect(await page(editor)).toMatch(
      new RegExp(`data-released[^>]*>Freigegeben am [^<]*· Audio wird am ${on} gelöscht`),
    );
    expect(await page("/")).toContain(`Audio wird am ${on} gelöscht`);
    // The letters list says it is released, and that the recording's consent was not documented.
    const list = await page("/arztbriefe");
    expect(list).toMatch(/data-released[^>]*>Freigegeben am /);
    expect(list).toMatch(/data-consent="missing"[^>]*>Einwilligung nicht dokumentiert/);
    expect(await page("/transcriptions")).toMatch(/data-consent="missing"[^>]*>Einwilligung nicht dokumentiert/);

    // Edited afterwards: what was released is no longer the letter, and nothing is scheduled.
    const saved = await callRoute(
      editorRoute.action,
      request(editor, {
        method: "POST",
        cookie: seeded.cookie,
        headers: { "Sec-Fetch-Site": "same-origin" },
        body: new URLSearchParams([
          ["intent", "save"],
          ["base_version", "1"],
          ["title", "Anamnese"],
          ["text", "Husten seit vier Tagen."],
          ["title", "Befund"],
          ["text", "Unauffällig."],
        ]),
      }),
      { "*": seeded.letterParam },
    );
    expect(saved.status).toBe(302);
    expect(await page("/")).not.toContain("Audio wird am");
    expect(await page(editor)).toContain("data-release-form");
  });
});
