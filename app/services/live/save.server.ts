import type { ConsentRecord } from "~/models/consent-rules";
import { createHmac } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { insertTranscript } from "~/models/transcript.server";
import { auditRecording } from "../audit/events.server";
import { getConfig } from "../config/config.server";
import { getDb } from "../../models/db.server";
import { confirmConsent } from "../recordings/consent.server";
import { DomainError } from "../web/domain-error.server";
import { autoCreateLetter } from "../letters/letters.server";
import { hitRateLimit } from "../web/rate-limit.server";
import { MAX_DURATION_SECONDS } from "../recordings/recordings.server";
import { requestTranscription } from "../transcription/transcription.server";
import { buildTranscript, isEmptyResult } from "../speech/transcript-format";
import { getStorage, makeStorageKey } from "../storage/storage.server";
import { getUserStructure } from "../templates/templates.server";
import type { LiveEngineName } from "./engine-types";
import { meterLiveAudio } from "./live-usage.server";
import { encodeLivePcm, serverCopyContainer, type AudioFile } from "./save-audio.server";
import { CONTAINER_CONTENT_TYPE, type LiveContainer } from "./save-format.server";
import { parseLiveSave, type LiveSave } from "./save-payload.server";
import {
  findSavedByFingerprint,
  insertContextText,
  insertRealtimeRecording,
  lockFingerprint,
} from "./save-rows.server";
import { lastEnd, liveResultsToWords } from "./save-words.server";

// Saving a live recording (issue 7): one use case behind both doors — POST /api/save-realtime-transcript and
// the live session store. The transcript is built on the server with the batch path's own formatter and stored
// exactly as a batch transcript is (a JSON document under a server-made key, a transcripts row), so the
// transcript viewer, letters and deletion treat both alike. The rows are written in one transaction; the
// objects before it, and removed again when it fails.
//
// Retries: a client that did not hear the answer sends the same payload again. The recording row carries a
// fingerprint of owner and payload (save_fingerprint, unique per owner), so the retry finds the first save and
// gets its keys instead of a second recording (and a second letter).

export type SaveRealtimeArgs = {
  userId: string;
  request?: Request;
  /** SPEC §3 "Live transcript save payload" (plus original_mime_type), unchecked. */
  payload: unknown;
  /** The session's audio as the server holds it: 16 kHz mono s16le PCM, in order. */
  pcmAudio?: () => AsyncIterable<Buffer>;
  /** Which live engine produced the results; defaults to the configured one. */
  engine?: LiveEngineName;
  /**
   * The engine recognised nothing live (its models were still downloading): the recording is saved from the
   * server's copy of the audio and queued for transcription, as an upload is; its letter follows the transcript.
   */
  transcribeLater?: boolean;
  /** The consent the live session was started with (confirmed then); otherwise the payload's, confirmed now. */
  consent?: ConsentRecord | null;
};

/** transcript_key is null for a recording queued for transcription (`transcribeLater`). */
export type SaveRealtimeResult = { transcript_key: string | null; audio_key: string };

/** Per user and hour: each save may encode hours of audio. Far above what a clinician records. */
export const LIVE_SAVES_PER_HOUR = 60;

/**
 * Keyed, so the stored fingerprint cannot be used to test a guess of what was said. One per secret of the
 * COOKIE_SECRET rotation list, the first (the one stored) first: a retry across a rotation still finds its save.
 */
function fingerprintsOf(userId: string, input: LiveSave): [string, ...string[]] {
  const [first, ...others] = getConfig().cookieSecrets.map((secret) =>
    createHmac("sha256", secret)
      .update(JSON.stringify(["live-save", userId, input]))
      .digest("hex"),
  );
  return [first!, ...others];
}

/** The server's own copy of the audio; a failure here costs the copy, never the transcript. */
async function serverCopy(args: SaveRealtimeArgs, container: LiveContainer, key: string, dir: string) {
  if (!args.pcmAudio) return null;
  let audio: AudioFile | null;
  try {
    audio = await encodeLivePcm({ pcm: args.pcmAudio(), container, dir, maxSeconds: MAX_DURATION_SECONDS });
  } catch (error) {
    console.warn("[live-save] server copy of the audio failed:", error instanceof Error ? error.message : error);
    return null;
  }
  if (!audio) return null;
  await getStorage().putFile({ key, path: audio.file, contentType: CONTAINER_CONTENT_TYPE[container] });
  return audio;
}

export async function saveRealtimeTranscript(args: SaveRealtimeArgs): Promise<SaveRealtimeResult> {
  const { userId } = args;
  const input = parseLiveSave(args.payload);
  const engine = args.engine ?? getConfig().speech.live.engine;
  const language = input.language.slice(0, 2);
  const words = liveResultsToWords(input.results);
  const later = Boolean(args.transcribeLater && args.pcmAudio);
  if (!later && isEmptyResult({ engine, language, audioSeconds: 0, words })) {
    throw new DomainError("invalid", "recordings:liveSave.noContent");
  }
  const consent = args.consent ?? confirmConsent(userId, { ok: true, value: input.consent });
  if (input.templateId) {
    // Only a template this user can use (a system template or their own), as for uploads.
    await getUserStructure({ userId, templateId: input.templateId, language: input.language }).catch(() => {
      throw new DomainError("invalid", "recordings:errors.unknownTemplate");
    });
  }

  const fingerprints = fingerprintsOf(userId, input);
  const fingerprint = fingerprints[0];
  const earlier = await findSavedByFingerprint(getDb(), { ownerId: userId, fingerprints });
  if (earlier && (earlier.transcript_key || later))
    return { transcript_key: earlier.transcript_key, audio_key: earlier.storage_key };
  const verdict = await hitRateLimit({
    bucket: `live-save:${userId}`,
    limit: LIVE_SAVES_PER_HOUR,
    windowSeconds: 3600,
    userId,
  });
  if (!verdict.allowed) throw new DomainError("rate_limited", "recordings:errors.tooManyRequests");

  const storage = getStorage();
  // Without ffmpeg the server's copy is a WAV: the key says what the stored file is.
  const container = args.pcmAudio ? await serverCopyContainer(input.container) : input.container;
  const audioKey = makeStorageKey({ ownerId: userId, area: "audio", extension: `.${container}` });
  const transcriptKey = makeStorageKey({ ownerId: userId, area: "transcripts", extension: ".json" });
  const written: string[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-live-save-"));
  let saved: { recordingId: string; audio: AudioFile | null; seconds: number } | { existing: SaveRealtimeResult };
  try {
    const audio = await serverCopy(args, container, audioKey, dir);
    if (audio) written.push(audioKey);
    // Nothing to transcribe later without the audio: as empty as a recording without words.
    if (later && !audio) throw new DomainError("invalid", "recordings:liveSave.noContent");
    const document = buildTranscript({
      engine,
      language,
      audioSeconds: audio?.durationSeconds ?? input.durationSeconds ?? lastEnd(words),
      words,
    });
    if (!later) {
      await storage.put({
        key: transcriptKey,
        body: Buffer.from(JSON.stringify(document)),
        contentType: "application/json",
      });
      written.push(transcriptKey);
    }
    saved = await getDb()
      .transaction()
      .execute(async (trx) => {
        await lockFingerprint(trx, fingerprint);
        const raced = await findSavedByFingerprint(trx, { ownerId: userId, fingerprints });
        if (raced && (raced.transcript_key || later)) {
          return { existing: { transcript_key: raced.transcript_key, audio_key: raced.storage_key } };
        }
        const { id } = await insertRealtimeRecording(trx, {
          ownerId: userId,
          fingerprint,
          audioKey,
          transcriptKey: later ? null : transcriptKey,
          originalFilename: input.dataName ?? path.posix.basename(audioKey),
          displayName: input.displayName,
          tags: input.tags,
          language: input.language,
          templateId: input.templateId,
          mode: input.mode,
          container,
          originalMimeType: input.originalMimeType ?? CONTAINER_CONTENT_TYPE[input.container],
          audio: audio && { sizeBytes: audio.sizeBytes, durationSeconds: audio.durationSeconds },
          durationSeconds: input.durationSeconds,
          consent,
        });
        if (!later) {
          await insertTranscript(trx, {
            ownerId: userId,
            recordingId: id,
            key: transcriptKey,
            language: document.language_code,
            engine: document.engine,
            audioSeconds: document.audio_seconds,
            wordCount: document.word_count,
            speakerCount: Object.keys(document.speakers_info).length,
            tags: input.tags,
          });
        }
        if (input.additionalContext) {
          await insertContextText(trx, { ownerId: userId, recordingId: id, text: input.additionalContext });
        }
        return { recordingId: id, audio, seconds: document.audio_seconds };
      });
  } catch (error) {
    for (const key of written) await storage.delete(key).catch(() => undefined);
    await auditRecording(args.request, userId, "recording.live-save", undefined, "failure");
    if (error instanceof DomainError) throw error;
    // The reason goes to the log; the clinician hears SPEC §8's 'Failed to save transcript'.
    console.warn("[live-save] save failed:", error instanceof Error ? error.message : error);
    throw new DomainError("unavailable", "recordings:liveSave.failed");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }

  if ("existing" in saved) {
    // A retry that raced the first save: what it stored under its own keys is not needed.
    const keep = new Set<string | null>([saved.existing.audio_key, saved.existing.transcript_key]);
    for (const key of written) if (!keep.has(key)) await storage.delete(key).catch(() => undefined);
    return saved.existing;
  }
  await auditRecording(args.request, userId, "recording.live-save", saved.recordingId);
  // Recognised by the browser's own connection (direct mode, a JSON client): the relay never metered it.
  if (!args.pcmAudio) meterLiveAudio({ userId, seconds: saved.seconds, engine });
  if (later) {
    // Transcribed like an upload: the job waits for the models, and its transcript starts the letter.
    await requestTranscription({ userId, key: audioKey });
    return { transcript_key: null, audio_key: audioKey };
  }
  // Transcript plus Arztbrief: the server starts the letter (ADR 0012). Letters need playable audio
  // (requestLetter → requireReady), so without the server's copy the letter starts when the browser's
  // upload is confirmed (save-upload.server.ts).
  if (saved.audio) {
    await autoCreateLetter({ userId, recordingId: saved.recordingId, sourceKey: audioKey, mode: input.mode });
  }
  return { transcript_key: transcriptKey, audio_key: audioKey };
}
