import { getDb } from "~/models/db.server";
import { buildTranscript } from "~/services/speech/transcript-format";
import type { EngineWord } from "~/services/speech/types";
import { getStorage, makeStorageKey } from "~/services/storage/storage.server";

// A recording whose transcription has completed, made the way the transcription job leaves it (a transcript
// document in storage, the transcripts row, the recording's status and key), without running an engine:
// letter tests start where transcription ends.

export type SpokenLine = { speaker: "S1" | "S2"; text: string };

function wordsOf(lines: SpokenLine[]): EngineWord[] {
  const words: EngineWord[] = [];
  let t = 0;
  for (const line of lines) {
    for (const token of line.text.split(/\s+/).filter(Boolean)) {
      words.push({ text: token, start: t, end: t + 0.4, confidence: 0.95, speaker: line.speaker });
      t += 0.5;
    }
  }
  return words;
}

export async function userIdOf(subject: string) {
  const row = await getDb().selectFrom("users").where("subject", "=", subject).select("id").executeTakeFirstOrThrow();
  return row.id;
}

export async function seedTranscribedRecording(args: {
  ownerId: string;
  lines: SpokenLine[];
  language?: "de-DE" | "en-GB";
  templateId?: string | null;
  mode?: "transcript" | "transcript_and_letter";
  fileName?: string;
  context?: Array<{ kind: "text" | "pdf" | "patient_record"; text: string; sourceName?: string }>;
  tags?: string[];
}) {
  const language = args.language ?? "de-DE";
  const sourceKey = makeStorageKey({ ownerId: args.ownerId, area: "audio", extension: ".wav" });
  const transcriptKey = makeStorageKey({ ownerId: args.ownerId, area: "transcripts", extension: ".json" });
  const document = buildTranscript({
    engine: "speechmatics",
    language: language.slice(0, 2),
    audioSeconds: 60,
    words: wordsOf(args.lines),
  });
  await getStorage().put({
    key: transcriptKey,
    body: Buffer.from(JSON.stringify(document)),
    contentType: "application/json",
  });
  const recording = await getDb()
    .insertInto("recordings")
    .values({
      owner_id: args.ownerId,
      storage_key: sourceKey,
      original_filename: args.fileName ?? "Sprechstunde.wav",
      language_code: language,
      template_id: args.templateId === undefined ? "default" : args.templateId,
      transcription_mode: args.mode ?? "transcript",
      transcription_status: "completed",
      transcript_key: transcriptKey,
      upload_status: "ready",
      tags: JSON.stringify(args.tags ?? []),
      updated_at: new Date(),
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  await getDb()
    .insertInto("transcripts")
    .values({
      owner_id: args.ownerId,
      recording_id: recording.id,
      storage_key: transcriptKey,
      language_code: language,
      engine: "speechmatics",
      audio_seconds: 60,
      word_count: document.word_count,
      speaker_count: Object.keys(document.speakers_info).length,
      tags: JSON.stringify(args.tags ?? []),
    })
    .execute();
  for (const item of args.context ?? []) {
    await getDb()
      .insertInto("recording_context")
      .values({
        owner_id: args.ownerId,
        recording_id: recording.id,
        kind: item.kind,
        text: item.text,
        source_name: item.sourceName ?? null,
      })
      .execute();
  }
  return { recordingId: recording.id, sourceKey, transcriptKey };
}

export async function letterJobOf(recordingId: string) {
  return getDb()
    .selectFrom("letter_jobs")
    .where("recording_id", "=", recordingId)
    .select(["id", "status", "attempts", "error_key", "error_detail", "kind", "job_name"])
    .executeTakeFirst();
}

export async function letterStatusOf(recordingId: string) {
  const row = await getDb()
    .selectFrom("recordings")
    .where("id", "=", recordingId)
    .select(["medical_letter_status", "template_id"])
    .executeTakeFirstOrThrow();
  return row;
}
