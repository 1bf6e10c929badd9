import { describe, expect, it } from "vitest";
import { loader as playbackLoader } from "~/routes/api.audio-playback.$";
import { action as transcribeAction } from "~/routes/api.transcribe_v2";
import { loader as transcriptLoader } from "~/routes/api.transcript_v2.$";
import { getConfig, setConfig } from "~/services/config.server";
import { getDb } from "~/services/db.server";
import { runExpireSessions } from "~/services/jobs.server";
import { getStorage } from "~/services/storage.server";
import { recordingWithLetter } from "../support/access-matrix-fixture";
import { APP_URL, callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// Audio retention (issue 9 "Data lifecycle", AUDIO_RETENTION_DAYS): once a recording's letter is completed and has
// not changed for the period, the maintenance job deletes its audio; the transcript and the letter stay, and the
// clinician is told plainly why the recording no longer plays. Without a period nothing is deleted.
setupTestApp();

const DAY = 86_400_000;

async function recordingAged(email: string, letterAgeDays: number) {
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
    .set({ updated_at: new Date(Date.now() - letterAgeDays * DAY) })
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
  it("deletes the audio of letters finished longer ago than the period, and keeps transcript and letter", async () => {
    const config = getConfig();
    setConfig({ ...config, audioRetentionMs: 30 * DAY });
    try {
      const old = await recordingAged("alt@praxis.example", 31);
      const recent = await recordingAged("neu@praxis.example", 29);

      expect((await runExpireSessions()).retention).toEqual({ audio: 1 });
      expect(await getStorage().head(old.sourceKey)).toBeNull();
      expect(await getStorage().head(recent.sourceKey)).not.toBeNull();
      // Idempotent: the next run finds nothing more.
      expect((await runExpireSessions()).retention).toEqual({ audio: 0 });

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

  it("keeps every recording's audio when no period is configured", async () => {
    const kept = await recordingAged("ohne-frist@praxis.example", 4000);
    expect(getConfig().audioRetentionMs).toBeNull();
    expect((await runExpireSessions()).retention).toEqual({ audio: 0 });
    expect(await getStorage().head(kept.sourceKey)).not.toBeNull();
  });
});
