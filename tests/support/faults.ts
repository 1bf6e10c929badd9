import fs from "node:fs";
import type { Kysely } from "kysely";
import type { Database, TranscriptionMode } from "~/models/schema";
import { getDb } from "~/models/db.server";
import type { EngineResult, SpeechEngine, SpeechRequest } from "~/services/speech/types";
import { getStorage, makeStorageKey } from "~/services/storage/storage.server";

// What the fault suites share: a speech engine the test holds mid-call, a recording ready to transcribe, and
// what a user would see of it (its SPEC §4 statuses, its transcripts, letters and metered usage).

/** A speech engine that answers only when the test lets it: a run can be caught in the middle of its call. */
export function heldSpeechEngine() {
  let release: () => void = () => {};
  let gate = new Promise<void>((resolve) => (release = resolve));
  const state = {
    calls: 0,
    engine: {
      name: "speechmatics",
      async transcribe(request: SpeechRequest): Promise<EngineResult> {
        state.calls += 1;
        await gate;
        return {
          engine: "speechmatics",
          language: request.language,
          audioSeconds: request.durationSeconds,
          words: ["Guten", "Tag,", "Frau", "Becker."].map((text, i) => ({
            text,
            start: i * 0.5,
            end: i * 0.5 + 0.4,
            confidence: 0.95,
            speaker: "S1",
          })),
        };
      },
      async check() {
        return { status: "healthy" as const };
      },
    } satisfies SpeechEngine,
    /** Lets every waiting and later call answer. */
    release: () => release(),
    /** Holds the calls from now on again. */
    hold() {
      gate = new Promise<void>((resolve) => (release = resolve));
    },
  };
  return state;
}

/** A recording whose upload finished and passed its checks, as upload-and-confirm leaves it. */
export async function seedReadyRecording(args: { ownerId: string; wav: string; mode?: TranscriptionMode }) {
  const key = makeStorageKey({ ownerId: args.ownerId, area: "audio", extension: ".wav" });
  await getStorage().put({ key, body: fs.readFileSync(args.wav), contentType: "audio/wav" });
  const row = await getDb()
    .insertInto("recordings")
    .values({
      owner_id: args.ownerId,
      storage_key: key,
      original_filename: "Sprechstunde.wav",
      language_code: "de-DE",
      template_id: "default",
      transcription_mode: args.mode ?? "transcript",
      transcription_status: "pending",
      upload_status: "ready",
      audio_format: "wav",
      tags: JSON.stringify([]),
      updated_at: new Date(),
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return { key, id: row.id };
}

/** Everything a user would notice of one recording, read straight from the database (or from `db`). */
export async function stateOf(recordingId: string, db: Kysely<Database> = getDb()) {
  const recording = await db
    .selectFrom("recordings")
    .where("id", "=", recordingId)
    .select(["transcription_status", "medical_letter_status", "transcript_key", "upload_status", "display_name"])
    .executeTakeFirst();
  const count = async (table: "transcripts" | "letters" | "transcription_jobs" | "letter_jobs") =>
    (await db.selectFrom(table).where("recording_id", "=", recordingId).select("id").execute()).length;
  return {
    recording,
    transcripts: await count("transcripts"),
    letters: await count("letters"),
    transcriptionJobs: await count("transcription_jobs"),
    letterJobs: await count("letter_jobs"),
  };
}

/** Metered units of one kind for a user (not the per-call rows). */
export async function meteredUnits(userId: string, endpoint: string) {
  return getDb()
    .selectFrom("usage_events")
    .where("user_id", "=", userId)
    .where("endpoint", "=", endpoint)
    .where("unit", "!=", "call")
    .select(["unit", "units"])
    .execute();
}
