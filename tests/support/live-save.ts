import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "vitest";
import { loader as playbackLoader } from "~/routes/api.audio-playback.$";
import { action as confirmAction } from "~/routes/api.confirm-realtime-audio";
import { action as uploadUrlAction } from "~/routes/api.get-upload-url";
import { action as saveAction } from "~/routes/api.save-realtime-transcript";
import { action as storagePut, loader as storageGet } from "~/routes/resources.storage.$";
import { getDb } from "~/models/db.server";
import { makeSpeechWav } from "./audio-fixtures";
import type { ApiClient } from "./api-client";
import { callRoute } from "../setup/app";

// Saving a live recording in tests (issue 7): SPEC §3 save payloads, the live upload calls as the browser makes
// them, what the player gets back, and recorder-like audio made with ffmpeg at test time.

export const run = promisify(execFile);

export function segment(content: string, start: number, speaker: string, confidence: number) {
  return { type: "word", start_time: start, end_time: start + 0.4, alternatives: [{ content, speaker, confidence }] };
}
export function stop(at: number) {
  return { type: "punctuation", start_time: at, end_time: at, is_eos: true, alternatives: [{ content: "." }] };
}

/** A two-speaker save payload; `started_at` is fixed so two calls give the same payload (a client retry). */
export function livePayload(overrides: Record<string, unknown> = {}) {
  return {
    transcript_data: {
      results: [
        segment("Guten", 0, "S1", 0.97),
        segment("Tag", 0.5, "S1", 0.95),
        stop(0.9),
        segment("Mir", 1.2, "S2", 0.92),
        segment("schwindelt", 1.7, "S2", 0.31),
        stop(2.1),
      ],
      job: { started_at: "2025-05-12T08:15:00.000Z", data_name: "live", language: "de", duration: 3 },
      speaker_stats: { S1: { totalSegments: 99 } },
    },
    display_name: "Herr Müller Kontrolle",
    language_code: "de-DE",
    duration: 3,
    metadata: { template_id: "entlassbrief", tags: '["Kardio"]', transcription_mode: "transcript" },
    created_via: "realtime",
    additional_context: "  Vorbefund: Hypertonie  ",
    original_mime_type: "audio/webm;codecs=opus",
    ...overrides,
  };
}

export async function saveLive(client: ApiClient, body: unknown) {
  return callRoute(saveAction, client("/api/save-realtime-transcript", { method: "POST", json: body }));
}

export async function recordingOf(key: string) {
  return getDb().selectFrom("recordings").where("storage_key", "=", key).selectAll().executeTakeFirstOrThrow();
}

export async function liveSlot(client: ApiClient, key: string, fileType = "audio/webm;codecs=opus") {
  return callRoute(
    uploadUrlAction,
    client("/api/get-upload-url", {
      method: "POST",
      json: { file_name: "recording.webm", file_type: fileType, specific_key: key },
    }),
  );
}

/** PUT as the browser does, to the local store's signed URL. */
export async function putUpload(url: string, bytes: Buffer, contentType: string) {
  const key = decodeURIComponent(new URL(url).pathname.replace(/^\/resources\/storage\//, ""));
  const body = new Uint8Array(bytes);
  return callRoute(storagePut, new Request(url, { method: "PUT", headers: { "Content-Type": contentType }, body }), {
    "*": key,
  });
}

export async function confirmLive(client: ApiClient, key: string) {
  return callRoute(confirmAction, client("/api/confirm-realtime-audio", { method: "POST", json: { key } }));
}

let played = 0;

/** What the player gets: the playback URL's Content-Type and bytes, probed with ffprobe. */
export async function playedAudio(client: ApiClient, key: string, dir: string) {
  const answer = await callRoute(playbackLoader, client(`/api/audio-playback/${key}`), { "*": key });
  expect(answer.status).toBe(200);
  const { playback_url } = await answer.json();
  const response = await callRoute(storageGet, new Request(playback_url), { "*": key });
  expect(response.status).toBe(200);
  const file = path.join(dir, `played-${++played}.bin`);
  fs.writeFileSync(file, Buffer.from(await response.arrayBuffer()));
  const { stdout } = await run("ffprobe", [
    "-v",
    "error",
    "-print_format",
    "json",
    "-show_format",
    "-show_streams",
    file,
  ]);
  const probe = JSON.parse(stdout);
  return {
    contentType: response.headers.get("Content-Type"),
    codec: probe.streams[0].codec_name as string,
    duration: Number(probe.format.duration),
    size: fs.statSync(file).size,
  };
}

const BUFFERS = { encoding: "buffer" as const, maxBuffer: 32 * 1024 * 1024 };

/** German speech as MediaRecorder leaves it: WebM/Opus written to a pipe, so without duration or cues. */
export async function makeRecorderWebm(dir: string) {
  const wav = await makeSpeechWav(dir);
  const args = ["-hide_banner", "-loglevel", "error", "-i", wav, "-ar", "48000", "-c:a", "libopus", "-f", "webm"];
  const { stdout } = await run("ffmpeg", [...args, "pipe:1"], BUFFERS);
  const file = path.join(dir, "recorder.webm");
  fs.writeFileSync(file, stdout);
  return file;
}

/** A 440 Hz tone as the live session store holds audio: 16 kHz mono s16le PCM. */
export async function makeTonePcm(seconds: number) {
  const source = ["-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", `sine=frequency=440:duration=${seconds}`];
  const { stdout } = await run("ffmpeg", [...source, "-ar", "16000", "-ac", "1", "-f", "s16le", "pipe:1"], BUFFERS);
  return stdout;
}

/** The session store's `pcmAudio`: the PCM in 4096-sample buffers. */
export function pcmSource(pcm: Buffer) {
  return async function* () {
    for (let at = 0; at < pcm.length; at += 8192) yield pcm.subarray(at, at + 8192);
  };
}
