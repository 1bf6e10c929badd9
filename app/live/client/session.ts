import type { LiveKind, NoticeMessage, TranscriptMessage } from "../protocol";
import type { SessionInfo } from "./api";
import type { Capture, CaptureOptions, RecordedAudio } from "./capture";
import { asFailure, type LiveFailure } from "./messages";
import type { LinkFactory, TransportName } from "./link";
import { LiveConnection } from "./transport";

// SPEC §4 "Live dictation connection states" and the requirement checks of SPEC §5/§8, shared by the
// recording widget and the dictation button. Start: disconnected → connecting → connected; any start
// failure goes to error and tears everything down. Stop: connected → disconnecting → disconnected.

export type ConnectionState = "disconnected" | "connecting" | "connected" | "disconnecting" | "error";
export type WidgetState = "loading" | "ready" | "connecting" | "listening" | "stopping" | "paused" | "saving" | "error";

const NEXT: Record<ConnectionState, ConnectionState[]> = {
  disconnected: ["connecting"],
  // Stop while connecting cancels the start.
  connecting: ["connected", "disconnecting", "error"],
  connected: ["disconnecting", "error"],
  disconnecting: ["disconnected", "error"],
  error: ["connecting", "disconnected"],
};

export function canMove(from: ConnectionState, to: ConnectionState) {
  return NEXT[from].includes(to);
}

/** The recording widget's names (SPEC §2/§4): after a stop with segments the session is paused. */
/** `later`: the session is kept to be transcribed after saving (the model was downloading): it may hold no text. */
export function widgetState(
  state: ConnectionState,
  session: { segments: number; saving: boolean; later?: boolean },
): WidgetState {
  switch (state) {
    case "connecting":
      return "connecting";
    case "connected":
      return "listening";
    case "disconnecting":
      return "stopping";
    case "error":
      return "error";
    default:
      return session.saving ? "saving" : session.segments > 0 || session.later ? "paused" : "ready";
  }
}

export type Environment = {
  secure: boolean;
  getUserMedia: boolean;
  audioContext: boolean;
  webSocket: boolean;
  eventSource: boolean;
};

export function readEnvironment(): Environment {
  return {
    // SPEC §5: HTTPS (localhost counts as secure), or a local file.
    secure: window.isSecureContext || location.protocol === "file:",
    getUserMedia: typeof navigator.mediaDevices?.getUserMedia === "function",
    audioContext: typeof AudioContext === "function",
    webSocket: typeof WebSocket === "function",
    eventSource: typeof EventSource === "function",
  };
}

/**
 * SPEC §5/§8. The recorder names one message for all of them; dictation names each. A browser without
 * WebSocket but with server-sent events still gets through over HTTP.
 */
export function requirementFailure(kind: LiveKind, env: Environment): LiveFailure | null {
  const dictation = kind === "dictation";
  if (!env.secure) return { key: dictation ? "httpsRequired" : "unsupported" };
  if (!env.getUserMedia) return { key: dictation ? "micUnavailable" : "unsupported" };
  if (!env.audioContext || !(env.webSocket || env.eventSource))
    return { key: dictation ? "apisMissing" : "unsupported" };
  return null;
}

export type SessionEvents = {
  state(state: ConnectionState): void;
  transport?(name: TransportName): void;
  result(message: TranscriptMessage | NoticeMessage): void;
  failed(failure: LiveFailure): void;
  /** Every buffer captured, with the session's total so far (its time line, in buffers). */
  buffer?(pcm: Int16Array, total: number): void;
  warning?(failure: LiveFailure): void;
};

export type SessionDeps = {
  startCapture(options: CaptureOptions): Promise<Capture>;
  links: LinkFactory;
  environment(): Environment;
};

export class LiveSession {
  state: ConnectionState = "disconnected";
  info: SessionInfo | null = null;
  /** The compressed copy of the last run could not be made. */
  copyFailed = false;
  /** The last stop ended with the server's EndOfTranscript (not the time-out): its transcript is final. */
  complete = false;
  /** How the last run captured PCM (the AudioWorklet, or the ScriptProcessorNode fallback). */
  captureMode: Capture["mode"] | null = null;
  private capture: Capture | null = null;
  private connection: LiveConnection | null = null;
  private early: Int16Array[] = [];
  /** Counts starts, so a start overtaken by a stop (and a new start) does nothing more. */
  private runs = 0;

  constructor(
    private readonly kind: LiveKind,
    private readonly events: SessionEvents,
    private readonly deps: SessionDeps,
  ) {}

  /** Buffers the server holds (or will) for this session. */
  get buffers() {
    return this.connection?.buffers ?? 0;
  }

  /**
   * Call from the click handler: the audio context is made before the first `await`. `open` creates the
   * server's session or names the one to continue; it runs while the microphone is being granted.
   */
  async start(language: "de" | "en", open: () => Promise<SessionInfo>): Promise<void> {
    if (!canMove(this.state, "connecting")) return;
    const problem = requirementFailure(this.kind, this.deps.environment());
    if (problem) {
      this.move("connecting");
      return this.fail(problem);
    }
    this.move("connecting");
    const run = ++this.runs;
    const current = () => this.runs === run && this.state === "connecting";
    this.early = [];
    this.copyFailed = false;
    try {
      const capture = await this.deps.startCapture({
        record: this.kind === "recording",
        onBuffer: (pcm) => this.onBuffer(pcm),
        onWarning: (failure) => {
          this.copyFailed = true;
          this.events.warning?.(failure);
        },
      });
      if (!current()) return capture.abort();
      this.capture = capture;
      this.captureMode = capture.mode;
      const info = await open();
      if (!current()) return;
      this.info = info;
      const connection = new LiveConnection({
        kind: this.kind,
        language: info.language ?? language,
        maxDelay: info.maxDelay,
        lastN: info.lastN,
        websocket: this.deps.environment().webSocket,
        direct: info.direct,
        links: this.deps.links,
        onStarted: (transport, first) => {
          this.events.transport?.(transport);
          if (first) this.move("connected");
        },
        onResult: (message) => this.events.result(message),
        onFailed: (failure) => this.fail(failure),
      });
      this.connection = connection;
      connection.open(info.id);
      this.early.splice(0).forEach((pcm) => connection.push(pcm));
    } catch (error) {
      if (this.runs === run) this.fail(asFailure(error, "startFailed"));
    }
  }

  /** Stops the microphone, delivers the rest, waits for the last results; returns the compressed copy. */
  async stop(): Promise<RecordedAudio | null> {
    if (this.state === "connecting") {
      this.move("disconnecting");
      this.teardown();
      this.move("disconnected");
      return null;
    }
    if (this.state !== "connected") return null;
    this.move("disconnecting");
    try {
      const recorded = (await this.capture?.stop()) ?? null;
      if (this.capture?.copyFailed) this.copyFailed = true;
      this.capture = null;
      this.complete = (await this.connection?.end()) ?? false;
      this.keepLastN();
      this.connection = null;
      this.move("disconnected");
      return recorded;
    } catch (error) {
      this.fail(asFailure(error, "stopFailed"));
      return null;
    }
  }

  /** After an error: back to disconnected, keeping `info` so the session can be continued. */
  reset() {
    if (this.state === "error") this.move("disconnected");
  }

  /** Leaves the session behind entirely (discarded or saved). */
  forget() {
    this.teardown();
    this.info = null;
    if (this.state === "error") this.move("disconnected");
  }

  private onBuffer(pcm: Int16Array) {
    if (this.connection) this.connection.push(pcm);
    else this.early.push(pcm);
    this.events.buffer?.(pcm, this.connection ? this.connection.buffers : this.early.length);
  }

  private fail(failure: LiveFailure) {
    if (!canMove(this.state, "error")) return;
    this.teardown();
    this.move("error");
    // SPEC §8: dictation words it for the device.
    const worded =
      this.kind === "dictation" && failure.key === "unsupported" ? { key: "deviceUnsupported" as const } : failure;
    this.events.failed(worded);
  }

  private teardown() {
    this.keepLastN();
    this.capture?.abort();
    this.capture = null;
    this.connection?.abort();
    this.connection = null;
    this.early = [];
  }

  /** A continued session passes on the last message number it saw, so nothing is shown twice. */
  private keepLastN() {
    if (this.info && this.connection) this.info.lastN = this.connection.lastMessageNumber;
  }

  private move(to: ConnectionState) {
    if (!canMove(this.state, to)) return;
    this.state = to;
    this.events.state(to);
  }
}
