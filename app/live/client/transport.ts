import {
  END_OF_TRANSCRIPT_GRACE_MS,
  LIVE_CONNECT_TIMEOUT_MS,
  LIVE_FALLBACK_MS,
  LIVE_SAMPLE_RATE,
  MODELS_LOADING,
  SIGNED_OUT_REASON,
  type LiveKind,
  type LiveLanguage,
  type NoticeMessage,
  type NumberedMessage,
  type TranscriptMessage,
} from "../protocol";
import type { DirectTarget, Link, LinkClosed, LinkFactory, TransportName } from "./link";
import { LiveError, type LiveFailure } from "./messages";
import { Timers } from "./timers";

// One live connection over whichever transport gets through (issue 7, ADR 0013). Hospital proxies often
// block WebSockets, so: try the WebSocket; without RecognitionStarted after LIVE_FALLBACK_MS, or when it
// drops mid-session, continue over HTTP (POSTed audio, server-sent results). Every buffer is kept until the
// server acknowledges it, and a new link resends from the server's last_seq_no + 1, so a switch loses no
// audio and repeats none. Messages carry a number `n`; duplicates after a switch are dropped.

/** A link that looks open but has acknowledged nothing for this long is treated as dropped. */
export const ACK_STALL_MS = 20_000;
/** Between attempts over HTTP after a drop (SPEC §7's upload waits). */
const RETRY_DELAYS_MS = [1_000, 2_000, 4_000];
/** Our own close code when leaving a link for another (1000 is kept for the normal end). */
export const SWITCH_CLOSE_CODE = 4000;

export type ConnectionOptions = {
  kind: LiveKind;
  language: LiveLanguage;
  /** Seconds the engine may hold a final back (POST /live/sessions answers it). */
  maxDelay: number;
  /** The highest message number already shown (a continued session): older ones are not replayed. */
  lastN?: number;
  /** False where the browser has no WebSocket: HTTP at once. */
  websocket?: boolean;
  /** Direct mode: the provider's socket only — no fallback, and a drop ends the run (it cannot be resumed). */
  direct?: DirectTarget;
  links: LinkFactory;
  onStarted(transport: TransportName, first: boolean): void;
  onResult(message: TranscriptMessage | NoticeMessage): void;
  /** A failure while streaming; a failure after `end()` rejects its promise instead. */
  onFailed(failure: LiveFailure): void;
};

type Phase = "idle" | "connecting" | "streaming" | "ending" | "closed";
type TimerName = "connect" | "fallback" | "reconnect" | "retry" | "eot";

export class LiveConnection {
  private sessionId = "";
  private link: Link | null = null;
  private token: object | null = null;
  private transport: TransportName = "websocket";
  private linkStarted = false;
  private endSent = false;
  private phase: Phase = "idle";
  /** Buffers the server held before this run (its first last_seq_no); null until then. */
  private base: number | null = null;
  private pending: Int16Array[] = [];
  private unacked = new Map<number, Int16Array>();
  private lastSeq = 0;
  private sentUpTo = 0;
  private acked = 0;
  private outstandingSince = 0;
  private retries = 0;
  private lastN: number;
  private timers = new Timers<TimerName>();
  private watch: ReturnType<typeof setInterval> | undefined;
  private ending: { resolve(complete: boolean): void; reject(error: LiveError): void } | null = null;

  constructor(private readonly options: ConnectionOptions) {
    this.lastN = options.lastN ?? 0;
  }

  /** Buffers the server holds for the session (after RecognitionStarted): its time line, in buffers. */
  get buffers() {
    return (this.base ?? 0) + (this.base === null ? this.pending.length : this.lastSeq - this.base);
  }
  get lastMessageNumber() {
    return this.lastN;
  }
  get currentTransport() {
    return this.linkStarted ? this.transport : null;
  }

  open(sessionId: string) {
    if (this.phase !== "idle") return;
    this.sessionId = sessionId;
    this.phase = "connecting";
    this.timers.arm("connect", () => this.fail({ key: "connectTimeout" }), LIVE_CONNECT_TIMEOUT_MS[this.options.kind]);
    this.watch = setInterval(() => this.checkProgress(), 1_000);
    this.connect(this.options.direct ? "direct" : this.options.websocket === false ? "http" : "websocket");
  }

  push(pcm: Int16Array) {
    if (this.phase === "closed" || this.phase === "ending") return;
    if (this.base === null) this.pending.push(pcm);
    else {
      this.unacked.set(++this.lastSeq, pcm);
      this.flush();
    }
  }

  /**
   * EndOfStream once every buffer is out, then EndOfTranscript — waited for at most max_delay + grace.
   * Resolves true when the server said it had finished, false when the wait ran out (results may follow).
   */
  end(): Promise<boolean> {
    if (this.phase === "closed") return Promise.resolve(false);
    if (this.base === null) {
      // Stopped before any transport connected: nothing reached the server, nothing to wait for.
      this.abort();
      return Promise.resolve(false);
    }
    this.phase = "ending";
    return new Promise((resolve, reject) => {
      this.ending = { resolve, reject };
      this.flush();
    });
  }

  abort() {
    this.shut(1000);
  }

  private connect(name: TransportName) {
    const token = {};
    this.token = token;
    this.transport = name;
    this.linkStarted = false;
    this.endSent = false;
    // A link left behind (switched away from, or closed) may still report: only the current one counts.
    const current = () => this.token === token;
    this.link = this.options.links(
      name,
      this.sessionId,
      {
        message: (message: NumberedMessage) => current() && this.onMessage(message),
        closed: (info: LinkClosed) => current() && this.onClosed(info),
      },
      this.options.direct,
    );
    this.link.start({
      message: "StartRecognition",
      audio_format: { type: "raw", encoding: "pcm_s16le", sample_rate: LIVE_SAMPLE_RATE },
      transcription_config: { language: this.options.language },
      last_n: this.lastN,
    });
    if (name === "websocket")
      this.timers.arm("fallback", () => (this.linkStarted ? undefined : this.drop()), LIVE_FALLBACK_MS);
  }

  private onMessage(message: NumberedMessage) {
    if (typeof message.n === "number") {
      if (message.n <= this.lastN) return;
      this.lastN = message.n;
    }
    switch (message.message) {
      case "RecognitionStarted":
        return this.onStarted(message.last_seq_no);
      case "AudioAdded":
        return this.onAck(message.seq_no);
      case "EndOfTranscript":
        if (this.phase === "ending") this.finish(true);
        return;
      case "Error":
        return this.fail(
          message.type === "not_authorised"
            ? { key: message.reason === SIGNED_OUT_REASON ? "signedOut" : "authFailed" }
            : message.type === MODELS_LOADING
              ? { key: "modelsLoading" }
              : { key: "transcriptionError", values: { reason: message.reason || message.type } },
        );
      default:
        this.options.onResult(message);
    }
  }

  private onStarted(lastSeqNo: number) {
    if (this.linkStarted) return;
    this.timers.clear("fallback");
    this.timers.clear("reconnect");
    this.retries = 0;
    this.linkStarted = true;
    const first = this.base === null;
    if (first) {
      this.timers.clear("connect");
      this.base = this.lastSeq = this.acked = lastSeqNo;
      for (const pcm of this.pending) this.unacked.set(++this.lastSeq, pcm);
      this.pending = [];
      if (this.phase === "connecting") this.phase = "streaming";
    }
    // What the server already holds needs no resending; the rest goes again, from last_seq_no + 1.
    this.onAck(lastSeqNo);
    this.lastSeq = Math.max(this.lastSeq, lastSeqNo);
    this.sentUpTo = lastSeqNo;
    this.outstandingSince = Date.now();
    this.options.onStarted(this.transport, first);
    this.flush();
  }

  private onAck(seq: number) {
    if (seq <= this.acked) return;
    for (let s = this.acked + 1; s <= seq; s++) this.unacked.delete(s);
    this.acked = seq;
    this.outstandingSince = Date.now();
    this.armEndOfTranscript();
  }

  private flush() {
    const link = this.link;
    if (!link || !this.linkStarted) return;
    if (this.sentUpTo <= this.acked) this.outstandingSince = Date.now();
    while (this.sentUpTo < this.lastSeq && this.link === link) {
      const seq = ++this.sentUpTo;
      const pcm = this.unacked.get(seq);
      if (pcm) link.audio(seq, pcm);
    }
    if (this.phase === "ending" && !this.endSent && this.link === link) {
      this.endSent = true;
      link.end({ message: "EndOfStream", last_seq_no: this.lastSeq });
    }
    this.armEndOfTranscript();
  }

  /** The wait for EndOfTranscript starts once the server holds every buffer; until then audio may be lost. */
  private armEndOfTranscript() {
    if (this.phase !== "ending" || !this.endSent || this.acked < this.lastSeq || this.timers.has("eot")) return;
    this.timers.arm("eot", () => this.finish(false), this.options.maxDelay * 1000 + END_OF_TRANSCRIPT_GRACE_MS);
  }

  private onClosed(info: LinkClosed) {
    if (info.failure) return this.fail(info.failure);
    // The server closing normally after everything arrived is as good as EndOfTranscript.
    if (this.phase === "ending" && info.code === 1000 && this.endSent && this.acked >= this.lastSeq)
      return this.finish(true);
    this.drop();
  }

  private checkProgress() {
    if (
      this.link &&
      this.linkStarted &&
      this.sentUpTo > this.acked &&
      Date.now() - this.outstandingSince > ACK_STALL_MS
    )
      this.drop();
  }

  /** The current link is of no further use: on to HTTP (at once from the WebSocket, with waits after that). */
  private drop() {
    if (this.phase === "closed") return;
    // The provider's session is gone with its socket, and no other door leads there.
    if (this.transport === "direct")
      return this.fail({ key: this.base === null ? "connectionError" : "connectionLost" });
    this.link?.close(SWITCH_CLOSE_CODE);
    this.link = null;
    this.token = null;
    this.linkStarted = false;
    this.timers.clear("fallback");
    if (this.base !== null && !this.timers.has("reconnect")) {
      const lost: LiveFailure = { key: "connectionLost" };
      this.timers.arm("reconnect", () => this.fail(lost), LIVE_CONNECT_TIMEOUT_MS[this.options.kind]);
    }
    if (this.transport === "websocket") return this.connect("http");
    const wait = RETRY_DELAYS_MS[Math.min(this.retries++, RETRY_DELAYS_MS.length - 1)];
    this.timers.arm("retry", () => this.connect("http"), wait);
  }

  private finish(complete: boolean) {
    const ending = this.ending;
    this.shut(1000);
    ending?.resolve(complete);
  }

  private fail(failure: LiveFailure) {
    if (this.phase === "closed") return;
    const ending = this.ending;
    this.shut(1000);
    if (ending) ending.reject(new LiveError({ key: "stopFailed", cause: failure }));
    else this.options.onFailed(failure);
  }

  private shut(code: number) {
    this.timers.clearAll();
    clearInterval(this.watch);
    this.link?.close(code);
    this.link = null;
    this.token = null;
    this.linkStarted = false;
    this.phase = "closed";
    this.ending = null;
    this.pending = [];
    this.unacked.clear();
  }
}
