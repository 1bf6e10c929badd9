import { createHash, randomUUID } from "node:crypto";

import type { RawData, WebSocket } from "ws";

import { createRecognizer, type Recognizer, type ScriptLine } from "./fake-speechmatics-rt-recognition";
import { closeCodeOf, parseStart } from "./fake-speechmatics-rt-start";

// One WebSocket session of the fake Speechmatics realtime server (fake-speechmatics-rt.ts): the message
// sequence of PROTOCOLS.md §2 after the handshake. Messages are handled one after the other, audio included,
// so an ack delay holds back everything behind it, as a server that reads at its own pace does.

export type FakeRtNotice = { type: string; reason: string };

/** The switches a test may change while the server runs; each session reads them as it goes. */
export type FakeRtKnobs = {
  script: ScriptLine[];
  ackDelayMs: number;
  /** Error (and close with its code, or the type's) right after a valid StartRecognition. */
  failStartWith: (FakeRtNotice & { code?: number }) | null;
  warnAfterFrames: (FakeRtNotice & { frames: number }) | null;
  /** Error and close after acking that many frames (a mid-stream failure). */
  errorAfterFrames: (FakeRtNotice & { frames: number; code?: number }) | null;
  /** Destroys the TCP socket, without a close frame, on receiving that many frames. */
  closeAbruptlyAfterFrames: number | null;
  /** A stretch's line by its loudness instead of its order (fake-speechmatics-rt-recognition.ts). */
  lineOf?: (loudness: number) => ScriptLine;
};

/** Fixed when the server starts. */
export type FakeRtLimits = {
  idleTimeoutMs?: number;
  /** How long before the idle cut each Warning comes; by default 15, 10 and 5 of 60 min, scaled. */
  idleWarningLeadsMs?: number[];
  sessionTimeoutMs?: number;
  /** By default 45, 30 and 15 min of 48 h, scaled. */
  sessionWarningLeadsMs?: number[];
  supportedLanguages?: string[];
  /** RMS (full scale 1) over which 20 ms of audio count as voiced. */
  voiceThreshold?: number;
};

export type FakeRtSession = {
  id: string;
  auth: "bearer" | "jwt";
  path: string;
  /** The StartRecognition as received. */
  start: Record<string, unknown> | null;
  /** Audio frames accepted (before EndOfStream) and their bytes. */
  frames: number;
  bytes: number;
  /** SHA-256 of the accepted audio, in the order it came (set at EndOfStream). */
  audioSha256: string | null;
  acks: number[];
  /** The most frames that had arrived without an AudioAdded yet (what the client kept in flight). */
  maxInFlight: number;
  endOfStream: { last_seq_no: unknown } | null;
  framesAfterEos: number;
  /** Messages sent, in order: "Info:recognition_quality", "AudioAdded", "Error:protocol_error", … */
  sent: string[];
  close: { code: number; reason: string } | null;
  closed: Promise<{ code: number; reason: string }>;
};

const IDLE_LEADS = [15 / 60, 10 / 60, 5 / 60];
const SESSION_LEADS = [45 / 2880, 30 / 2880, 15 / 2880];

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function runSession(
  ws: WebSocket,
  context: { auth: FakeRtSession["auth"]; path: string; knobs: FakeRtKnobs; limits: FakeRtLimits },
): FakeRtSession {
  const { knobs, limits, path } = context;
  let resolveClosed: (value: { code: number; reason: string }) => void = () => {};
  const session: FakeRtSession = {
    id: randomUUID(),
    auth: context.auth,
    path,
    start: null,
    frames: 0,
    bytes: 0,
    audioSha256: null,
    acks: [],
    maxInFlight: 0,
    endOfStream: null,
    framesAfterEos: 0,
    sent: [],
    close: null,
    closed: new Promise((resolve) => (resolveClosed = resolve)),
  };
  let recognizer: Recognizer | null = null;
  let ended = false;
  let chain = Promise.resolve();
  const sessionTimers: NodeJS.Timeout[] = [];
  let idleTimers: NodeJS.Timeout[] = [];
  const audioHash = createHash("sha256");
  let arrived = 0;

  function send(message: Record<string, unknown>) {
    if (ended || ws.readyState !== ws.OPEN) return;
    const name = String(message.message);
    session.sent.push(typeof message.type === "string" ? `${name}:${message.type}` : name);
    ws.send(JSON.stringify(message));
  }

  /** After any Error the session ends and the server closes (PROTOCOLS.md §2). */
  function fail(type: string, reason: string, code = closeCodeOf(type)) {
    send({ message: "Error", type, reason });
    ended = true;
    if (ws.readyState === ws.OPEN) ws.close(code, type);
  }

  function schedule(into: NodeJS.Timeout[], totalMs: number, leadsMs: number[], type: string, reason: string) {
    for (const lead of leadsMs.filter((l) => l > 0 && l < totalMs)) {
      const warning = { message: "Warning", type, reason: `${reason} in ${Math.round(lead / 1000)} s` };
      into.push(setTimeout(() => send(warning), totalMs - lead));
    }
    into.push(setTimeout(() => fail(type, reason), totalMs));
  }

  function resetIdle() {
    idleTimers.forEach(clearTimeout);
    idleTimers = [];
    const idle = limits.idleTimeoutMs ?? 3_600_000;
    const leads = limits.idleWarningLeadsMs ?? IDLE_LEADS.map((f) => f * idle);
    schedule(idleTimers, idle, leads, "idle_timeout", "The session ends for lack of audio");
  }

  async function audio(bytes: Buffer) {
    if (ended) return;
    resetIdle();
    if (!recognizer) return fail("protocol_error", "Audio received before StartRecognition");
    if (session.endOfStream) {
      session.framesAfterEos++;
      return send({ message: "Warning", type: "add_audio_after_eos", reason: "Audio after EndOfStream is ignored" });
    }
    session.frames++;
    session.bytes += bytes.length;
    audioHash.update(bytes);
    if (session.frames === knobs.closeAbruptlyAfterFrames) {
      ended = true;
      return ws.terminate();
    }
    if (knobs.ackDelayMs > 0) await sleep(knobs.ackDelayMs);
    if (ended) return;
    const transcripts = recognizer.push(bytes);
    session.acks.push(session.frames);
    send({ message: "AudioAdded", seq_no: session.frames });
    for (const transcript of transcripts) send(transcript);
    const warn = knobs.warnAfterFrames;
    if (warn && session.frames === warn.frames) send({ message: "Warning", type: warn.type, reason: warn.reason });
    const error = knobs.errorAfterFrames;
    if (error && session.frames === error.frames) fail(error.type, error.reason, error.code);
  }

  function startRecognition(message: Record<string, unknown>) {
    if (session.start) return fail("protocol_error", "StartRecognition was already received");
    session.start = message;
    const parsed = parseStart(message, path, limits.supportedLanguages ?? ["de", "en"]);
    if ("refusal" in parsed) return fail(parsed.refusal.type, parsed.refusal.reason);
    const failure = knobs.failStartWith;
    if (failure) return fail(failure.type, failure.reason, failure.code);
    const { voiceThreshold } = limits;
    recognizer = createRecognizer({ ...parsed.config, script: knobs.script, voiceThreshold, lineOf: knobs.lineOf });
    send({
      message: "RecognitionStarted",
      id: session.id,
      language_pack_info: { adapted: false, itn: true, word_delimiter: " ", writing_direction: "left-to-right" },
    });
  }

  function text(raw: string) {
    if (ended) return;
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(raw) as Record<string, unknown>;
      if (typeof message !== "object" || message === null || Array.isArray(message)) throw new Error("not an object");
    } catch {
      return fail("invalid_message", "The message is not a JSON object");
    }
    if (message.message === "StartRecognition") return startRecognition(message);
    if (message.message === "EndOfStream") {
      if (!recognizer) return fail("protocol_error", "EndOfStream received before StartRecognition");
      if (session.endOfStream) return;
      session.endOfStream = { last_seq_no: message.last_seq_no };
      session.audioSha256 = audioHash.digest("hex");
      for (const transcript of recognizer.finish()) send(transcript);
      return send({ message: "EndOfTranscript" });
    }
    fail("invalid_message", `Unsupported message ${JSON.stringify(String(message.message ?? ""))}`);
  }

  ws.on("close", (code, reason) => {
    idleTimers.forEach(clearTimeout);
    sessionTimers.forEach(clearTimeout);
    ended = true;
    session.close = { code, reason: reason.toString() };
    resolveClosed(session.close);
  });
  ws.on("error", () => {});
  ws.on("message", (data: RawData, isBinary: boolean) => {
    const bytes = Buffer.isBuffer(data) ? data : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]);
    if (isBinary && session.start && !session.endOfStream) {
      arrived++;
      session.maxInFlight = Math.max(session.maxInFlight, arrived - session.acks.length);
    }
    chain = chain
      .then(() => (isBinary ? audio(bytes) : text(bytes.toString("utf8"))))
      .catch((error: unknown) => fail("internal_error", `The fake failed: ${String(error)}`));
  });

  const total = limits.sessionTimeoutMs ?? 48 * 3_600_000;
  const leads = limits.sessionWarningLeadsMs ?? SESSION_LEADS.map((f) => f * total);
  schedule(sessionTimers, total, leads, "session_timeout", "The session reaches its maximum duration");
  resetIdle();
  send({
    message: "Info",
    type: "recognition_quality",
    quality: "broadcast",
    reason: "Running recognition using a broadcast model quality.",
  });
  return session;
}
