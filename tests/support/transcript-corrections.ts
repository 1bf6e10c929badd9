import { getDb } from "~/models/db.server";
import { buildTranscript, type TranscriptDocument } from "~/services/speech/transcript-format";
import type { EngineWord } from "~/services/speech/types";
import { getStorage } from "~/services/storage/storage.server";
import { seedTranscribedRecording } from "./letter-fixtures";

// The transcript corrections' test world (transcript-corrections-*.test.ts, issue 24): a transcribed recording whose
// words carry the confidence a test needs ("~Wort" is heard at 0.3, "?Wort" at 0.7, every other word at 0.95), one
// second apart, and what the database and storage hold of it afterwards.

export type Line = { speaker: string; text: string; pauseAfter?: number };

export function uncertainWords(lines: Line[]): EngineWord[] {
  const words: EngineWord[] = [];
  let t = 0;
  for (const line of lines) {
    for (const token of line.text.split(/\s+/).filter(Boolean)) {
      const marker = token[0] === "~" ? 0.3 : token[0] === "?" && token.length > 1 ? 0.7 : 0.95;
      const text = marker === 0.95 ? token : token.slice(1);
      const punctuation = /^[.,?!]$/.test(text);
      words.push({ text, start: t, end: t + 0.5, confidence: marker, speaker: line.speaker, punctuation });
      t += 1;
    }
    t += line.pauseAfter ?? 0;
  }
  return words;
}

/** A completed transcription of `lines` for the owner: the recording, its transcript row and stored document. */
export async function seedUncertainTranscript(ownerId: string, lines: Line[], language: "de-DE" | "en-GB" = "de-DE") {
  const seeded = await seedTranscribedRecording({
    ownerId,
    lines: [{ speaker: "S1", text: "Platzhalter." }],
    language,
    fileName: "Visite.wav",
  });
  const words = uncertainWords(lines);
  const document = buildTranscript({
    engine: "speechmatics",
    language: language.slice(0, 2),
    audioSeconds: (words.at(-1)?.end ?? 0) + 5,
    words,
  });
  await getStorage().put({
    key: seeded.transcriptKey,
    body: Buffer.from(JSON.stringify(document)),
    contentType: "application/json",
  });
  const path = seeded.transcriptKey.replace(/^transcripts\//, "");
  return { ...seeded, document, path, viewer: `/transcriptions/${path}` };
}

/** The recognised document as stored: it must never change. */
export async function storedDocument(key: string): Promise<TranscriptDocument> {
  const stream = await getStorage().getStream(key);
  const chunks: Buffer[] = [];
  for await (const chunk of stream!) chunks.push(Buffer.from(chunk as Buffer));
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as TranscriptDocument;
}

export async function versionsOf(transcriptKey: string) {
  return getDb()
    .selectFrom("transcript_versions")
    .innerJoin("transcripts", "transcripts.id", "transcript_versions.transcript_id")
    .where("transcripts.storage_key", "=", transcriptKey)
    .select(["transcript_versions.version", "transcript_versions.kind", "transcript_versions.author_id"])
    .orderBy("transcript_versions.version", "asc")
    .execute();
}

export async function vocabularyOf(ownerId: string) {
  return getDb()
    .selectFrom("user_vocabulary")
    .where("owner_id", "=", ownerId)
    .select(["language", "content", "sounds_like"])
    .orderBy("content", "asc")
    .execute();
}

export async function auditRowsOf(userId: string, prefix = "transcript.") {
  return getDb()
    .selectFrom("audit_events")
    .where("user_id", "=", userId)
    .where("action", "like", `${prefix}%`)
    .selectAll()
    .orderBy("id", "asc")
    .execute();
}
