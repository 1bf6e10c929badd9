import type { LiveLanguage, LiveResult, TranscriptMessage } from "../protocol";
import { liveRecord } from "../../services/live/segments";
import { request, type SavePayload, type Saved } from "./api";
import type { RecordedAudio } from "./capture";

// Direct mode (ADR 0013): the server never saw the audio or the results, so the page keeps the finals and saves
// them with SPEC §7 POST /api/save-realtime-transcript — the SPEC §3 "Live transcript record" and "Live transcript
// save payload". The server rebuilds the transcript from these results with its own formatter and checks every
// field; only the words come from here, as they would from any API client.

/** The API's name for the call (SPEC §7). */
export const SAVE_REALTIME_PATH = "/api/save-realtime-transcript";

/**
 * A final of a continued run moved onto the session's time line: every provider session starts at 0, so the
 * seconds the session held before the run are added to its times.
 */
export function onSessionTimeline(message: TranscriptMessage, offsetSeconds: number): TranscriptMessage {
  if (offsetSeconds <= 0) return message;
  const shift = (seconds: number) => Math.round((seconds + offsetSeconds) * 1000) / 1000;
  return {
    ...message,
    metadata: {
      ...message.metadata,
      start_time: shift(message.metadata.start_time),
      end_time: shift(message.metadata.end_time),
    },
    results: message.results.map((result): LiveResult => ({
      ...result,
      start_time: shift(result.start_time),
      end_time: shift(result.end_time),
    })),
  };
}

export type DirectSession = {
  finals: TranscriptMessage[];
  language: LiveLanguage;
  startedAt: Date;
  endedAt: Date;
  seconds: number;
};

/** SPEC §3 "Live transcript save payload" from the page's finals and the widget's options. */
export function directSaveBody(session: DirectSession, form: SavePayload) {
  const name = `live-${session.startedAt.toISOString().slice(0, 19)}`;
  return {
    transcript_data: liveRecord({
      finals: session.finals,
      startedAt: session.startedAt,
      endedAt: session.endedAt,
      language: session.language,
      seconds: session.seconds,
      name,
    }),
    language_code: session.language === "de" ? "de-DE" : "en-GB",
    duration: Math.round(session.seconds),
    metadata: { template_id: form.template_id, transcription_mode: form.transcription_mode, consent: form.consent },
    created_via: "realtime",
    ...(form.additional_context ? { additional_context: form.additional_context } : {}),
    ...(form.original_mime_type ? { original_mime_type: form.original_mime_type } : {}),
  };
}

export async function saveDirect(session: DirectSession, form: SavePayload): Promise<Saved> {
  const saved = (await request(SAVE_REALTIME_PATH, { json: directSaveBody(session, form), timeoutMs: 120_000 })) as {
    transcript_key: string;
    audio_key: string;
  };
  return { ...saved, recording_key: saved.audio_key };
}

/** 16-bit mono PCM as a WAV file (RIFF header + samples): the audio of a direct session of several runs. */
export function wavCopy(buffers: Int16Array[], sampleRate: number): RecordedAudio {
  const bytes = buffers.reduce((sum, pcm) => sum + pcm.byteLength, 0);
  const header = new DataView(new ArrayBuffer(44));
  const ascii = (offset: number, text: string) =>
    [...text].forEach((c, i) => header.setUint8(offset + i, c.charCodeAt(0)));
  ascii(0, "RIFF");
  header.setUint32(4, 36 + bytes, true);
  ascii(8, "WAVE");
  ascii(12, "fmt ");
  header.setUint32(16, 16, true); // PCM format chunk size
  header.setUint16(20, 1, true); // PCM
  header.setUint16(22, 1, true); // mono
  header.setUint32(24, sampleRate, true);
  header.setUint32(28, sampleRate * 2, true); // bytes per second
  header.setUint16(32, 2, true); // bytes per frame
  header.setUint16(34, 16, true); // bits per sample
  ascii(36, "data");
  header.setUint32(40, bytes, true);
  // Little-endian samples as the engines take them (every browser we serve is little-endian).
  const parts = buffers.map((pcm) => new Uint8Array(pcm.buffer as ArrayBuffer, pcm.byteOffset, pcm.byteLength));
  return { blob: new Blob([header.buffer, ...parts], { type: "audio/wav" }), mimeType: "audio/wav", extension: "wav" };
}
