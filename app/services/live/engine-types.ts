import type { LiveKind, LiveLanguage, NoticeMessage, TranscriptMessage } from "~/live/protocol";
import type { EngineHealth, VocabularyEntry } from "../speech/types";

// A live engine (issue 7): Speechmatics realtime relayed by the server, or the embedded local engine. The
// session runner (runner.server.ts) feeds it 16 kHz mono 16-bit PCM in order and publishes what it emits.
// Times in the messages an engine emits are seconds from the start of *its* run; the runner shifts them onto
// the live session's time line.

export type LiveEngineName = "speechmatics" | "local";

/** What an engine emits, in order. After Error or EndOfTranscript it emits nothing more. */
export type LiveEngineMessage = TranscriptMessage | NoticeMessage | { message: "EndOfTranscript" };

export type LiveRunOptions = {
  kind: LiveKind;
  language: LiveLanguage;
  vocabulary: VocabularyEntry[];
  /** Called for every message the engine produces. Must not throw. */
  emit: (message: LiveEngineMessage) => void;
  /** Called once when the engine's connection ends for any reason (after EndOfTranscript, Error, or a drop). */
  onClose?: (info: { code?: number; reason?: string }) => void;
};

export interface LiveEngineRun {
  /** 16-bit little-endian mono PCM at 16 kHz, in order. Never blocks; the engine queues. */
  addAudio(pcm: Buffer): void;
  /** No more audio: the engine sends its remaining finals, then EndOfTranscript. */
  end(): void;
  /** Tear down at once (discard, shutdown); emits nothing more. */
  close(): void;
}

export class LiveEngineError extends Error {
  constructor(
    /** A Speechmatics error type (not_authorised, quota_exceeded, invalid_config, …) or engine_unavailable. */
    readonly type: string,
    message: string,
    readonly options: { transient?: boolean; cause?: unknown } = {},
  ) {
    super(message);
    this.name = "LiveEngineError";
  }
}

export interface LiveEngine {
  readonly name: LiveEngineName;
  /**
   * Opens a run and resolves once the engine has accepted it (Speechmatics: RecognitionStarted). Rejects with
   * LiveEngineError when it cannot (bad key → not_authorised, quota, unreachable → engine_unavailable).
   */
  start(options: LiveRunOptions): Promise<LiveEngineRun>;
  /** A live check with a time-out for /api/health; never throws. */
  check(timeoutMs?: number): Promise<EngineHealth>;
}
