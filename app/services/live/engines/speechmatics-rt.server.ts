import { WebSocket } from "ws";

import { LIVE_CONNECT_TIMEOUT_MS, type TranscriptMessage } from "~/live/protocol";
import type { EngineHealth } from "../../speech/types";
import { LiveEngineError, type LiveEngine, type LiveEngineRun, type LiveRunOptions } from "../engine-types";
import {
  closeType,
  handshakeError,
  liveResults,
  parseServerMessage,
  startRecognition,
  TRANSIENT_TYPES,
} from "./speechmatics-rt-messages.server";

// The Speechmatics Realtime API (PROTOCOLS.md §2) relayed by the server: the API key goes on the upgrade as a
// Bearer header, so it never reaches a browser, and it is never logged (no URL or header is). Audio goes out
// as binary frames in order, at most IN_FLIGHT_FRAMES without an AudioAdded; the rest waits in a queue.
// Transcripts, Warnings and Errors go to the runner as they come; Info (recognition quality, the account's
// concurrent-session usage) is for operators, not clinicians, and is dropped. A connection that ends before
// EndOfTranscript becomes an Error, its type read from the close code (the payload carries the type).

export type SpeechmaticsRealtimeConfig = {
  /** Missing or empty → start() fails with engine_unavailable and check() says not_configured. */
  apiKey: string | undefined;
  /** e.g. wss://eu.rt.speechmatics.com/v2 (EU; not global.…, which may leave the EU). */
  realtimeUrl: string;
  /**
   * Bound on the handshake plus RecognitionStarted. Speechmatics notes a large additional_vocab can add up to
   * about 15 s of start-up; no client waits longer than 15 s for a session to start (SPEC §9), so neither do we.
   */
  connectTimeoutMs?: number;
  WebSocketImpl?: typeof WebSocket;
};

/**
 * Frames sent and not yet acknowledged, at most: 16 × 4096 samples ≈ 4.1 s of audio (128 KiB). Enough that a
 * slow round trip never starves a real-time stream (4 frames a second), small enough that a stalled server
 * holds little, and what a dropped connection loses in flight the runner still has in live_audio.
 */
export const IN_FLIGHT_FRAMES = 16;

const DEFAULT_CONNECT_TIMEOUT_MS = LIVE_CONNECT_TIMEOUT_MS.recording;
/** How long close() waits for the close handshake before cutting the socket. */
const CLOSE_GRACE_MS = 2_000;

export function createSpeechmaticsRealtimeEngine(config: SpeechmaticsRealtimeConfig): LiveEngine {
  const apiKey = config.apiKey?.trim() || undefined;
  const url = config.realtimeUrl.replace(/\/+$/, "");
  const WebSocketImpl = config.WebSocketImpl ?? WebSocket;
  const connectTimeoutMs = config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const host = (() => {
    try {
      return new URL(url).host;
    } catch {
      return "Speechmatics";
    }
  })();

  function connect(handshakeTimeout: number) {
    return new WebSocketImpl(url, {
      headers: { Authorization: `Bearer ${apiKey}` },
      handshakeTimeout,
      perMessageDeflate: false,
    });
  }

  function run(options: LiveRunOptions): Promise<LiveEngineRun> {
    const ws = connect(connectTimeoutMs);
    /** starting → running → done (EndOfTranscript or Error passed on, the connection lost, or close()). */
    let phase: "starting" | "running" | "done" = "starting";
    let started = false;
    const queue: Buffer[] = [];
    let sent = 0;
    let acked = 0;
    let ending = false;
    let endSent = false;

    const emit: LiveRunOptions["emit"] = (message) => {
      if (phase === "running") options.emit(message);
    };

    function pump() {
      while (phase === "running" && ws.readyState === ws.OPEN && queue.length > 0 && sent - acked < IN_FLIGHT_FRAMES) {
        ws.send(queue.shift()!);
        sent++;
      }
      if (ending && !endSent && queue.length === 0 && phase === "running" && ws.readyState === ws.OPEN) {
        endSent = true;
        ws.send(JSON.stringify({ message: "EndOfStream", last_seq_no: sent }));
      }
    }

    const handle: LiveEngineRun = {
      addAudio(pcm) {
        if (phase !== "running" || ending) return;
        queue.push(pcm);
        pump();
      },
      end() {
        ending = true;
        pump();
      },
      close() {
        phase = "done";
        queue.length = 0;
        if (ws.readyState === ws.CLOSED) return;
        ws.close(1000);
        setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
      },
    };

    return new Promise<LiveEngineRun>((resolve, reject) => {
      const timer = setTimeout(() => {
        const text = `No RecognitionStarted from ${host} within ${connectTimeoutMs} ms`;
        fail(new LiveEngineError("engine_unavailable", text, { transient: true }));
      }, connectTimeoutMs);

      function fail(error: LiveEngineError) {
        if (phase !== "starting") return;
        phase = "done";
        clearTimeout(timer);
        ws.terminate();
        reject(error);
      }

      ws.on("unexpected-response", (_request, response) => {
        response.resume();
        fail(handshakeError(response.statusCode, host));
      });
      ws.on("error", (cause) => {
        fail(new LiveEngineError("engine_unavailable", `Cannot reach ${host}`, { transient: true, cause }));
      });
      ws.on("open", () => ws.send(JSON.stringify(startRecognition(options))));
      ws.on("message", (data, isBinary) => {
        const message = isBinary ? null : parseServerMessage(data);
        if (!message) {
          console.warn(`[speechmatics-rt] ignored an unreadable message from ${host}`);
          return;
        }
        if (phase === "starting") {
          if (message.message === "RecognitionStarted") {
            phase = "running";
            started = true;
            clearTimeout(timer);
            resolve(handle);
          } else if (message.message === "Error") {
            fail(new LiveEngineError(message.type, message.reason, { transient: TRANSIENT_TYPES.has(message.type) }));
          }
          return;
        }
        switch (message.message) {
          case "AudioAdded":
            acked = Math.max(acked, message.seq_no);
            return pump();
          case "AddTranscript":
          case "AddPartialTranscript": {
            const transcript: TranscriptMessage = { ...message, results: liveResults(message.results) };
            return emit(transcript);
          }
          case "Warning":
            return emit(message);
          case "Error":
            emit(message);
            phase = "done";
            return;
          case "EndOfTranscript":
            emit(message);
            phase = "done";
            ws.close(1000);
            return;
        }
      });
      ws.on("close", (code, reasonBuffer) => {
        const reason = reasonBuffer.toString("utf8");
        if (phase === "starting") {
          const type = closeType(code, reason);
          const text = `Speechmatics closed the connection before RecognitionStarted (code ${code})`;
          return fail(
            new LiveEngineError(type === "connection_lost" ? "engine_unavailable" : type, text, {
              transient: TRANSIENT_TYPES.has(type),
            }),
          );
        }
        if (phase === "running") {
          emit({
            message: "Error",
            type: closeType(code, reason),
            reason: `Speechmatics closed the connection (code ${code})`,
          });
          phase = "done";
        }
        if (started) options.onClose?.({ code, reason });
      });
    });
  }

  return {
    name: "speechmatics",

    async start(options) {
      if (!apiKey)
        throw new LiveEngineError("engine_unavailable", "Speechmatics has no API key (SPEECHMATICS_API_KEY)");
      try {
        return await run(options);
      } catch (error) {
        if (error instanceof LiveEngineError) throw error;
        throw new LiveEngineError("engine_unavailable", `Cannot open a session at ${host}`, { cause: error });
      }
    },

    // A handshake without StartRecognition: it proves the key and that WebSocket upgrades reach the realtime
    // host — the very path live sessions take — and starts no recognition. A temporary-key request would
    // only prove the management host answers, which says nothing of a proxy that blocks the upgrade.
    async check(timeoutMs = 5_000): Promise<EngineHealth> {
      if (!apiKey) return { status: "not_configured", detail: "Speechmatics has no API key" };
      return new Promise<EngineHealth>((resolve) => {
        let ws: WebSocket;
        try {
          ws = connect(timeoutMs);
        } catch {
          return resolve({ status: "error", detail: "Invalid realtime URL for Speechmatics" });
        }
        let settled = false;
        const timer = setTimeout(
          () => done({ status: "error", detail: `No answer from ${host} within ${timeoutMs} ms` }),
          timeoutMs,
        );
        function done(health: EngineHealth) {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          if (ws.readyState === ws.OPEN) ws.close(1000);
          else ws.terminate();
          resolve(health);
        }
        ws.on("open", () => done({ status: "healthy" }));
        ws.on("unexpected-response", (_request, response) => {
          response.resume();
          done({ status: "error", detail: handshakeError(response.statusCode, host).message });
        });
        ws.on("error", () => done({ status: "error", detail: `Cannot reach ${host}` }));
      });
    },
  };
}
