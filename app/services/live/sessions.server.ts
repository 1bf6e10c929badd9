import {
  LIVE_BUFFER_BYTES,
  LIVE_BUFFER_SAMPLES,
  LIVE_SAMPLE_RATE,
  LIVE_SETTINGS,
  type EndOfStream,
  type LiveKind,
  type LiveLanguage,
  type ServerMessage,
  type StartRecognition,
  TRANSCRIBE_LATER,
} from "~/live/protocol";
import {
  appendLiveAudio,
  deleteAbandonedLiveSessions,
  deleteLiveContent,
  findLiveSession,
  findUnfinishedRecording,
  insertLiveSession,
  liveMessagesAfter,
  releaseLapsedRunners,
  updateLiveSession,
  type LiveSessionRow,
} from "~/models/live-session.server";
import { readConsent } from "~/models/consent-rules";
import { getConfig } from "../config/config.server";
import { confirmConsent } from "../recordings/consent.server";
import { engineVocabulary } from "../transcription/user-vocabulary.server";
import { MAX_DURATION_SECONDS } from "../recordings/recordings.server";
import { hitRateLimit } from "../web/rate-limit.server";
import { statusFor } from "../web/domain-error.server";
import { subscribe, wake } from "./bus.server";
import { LiveEngineError } from "./engine-types";
import { startRecognition } from "./engines/speechmatics-rt-messages.server";
import { closeRun, ensureRun } from "./runner.server";
import { takeOverIfLapsed, takeOverWhenLapsed } from "./runner-takeover.server";
import { segmentsOf } from "./segments";

// The use cases of a live session (ADR 0013), the same for both transports: create, start (or re-attach after a
// transport switch), accept audio, end the stream, read what was published, discard. Every one takes the
// signed-in user and finds the session by owner first. Saving is in save-session.server.ts.

/** A protocol-level failure: the transports turn it into an Error message (WebSocket) or a JSON error (HTTP). */
export class LiveProtocolError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status: number = statusFor("invalid"),
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "LiveProtocolError";
  }
}

const SESSIONS_PER_HOUR = 120;
const MAX_LIVE_SECONDS = MAX_DURATION_SECONDS;

/**
 * A recording's consent, confirmed before its first buffer (issue 22): refused as a protocol error the recorder
 * knows (`consent_required`, `consent_invalid`). A dictation records no patient and needs none.
 */
function sessionConsent(userId: string, kind: LiveKind, value: unknown) {
  if (kind === "dictation") return null;
  const reading = readConsent(value);
  try {
    return confirmConsent(userId, reading);
  } catch {
    throw reading.ok
      ? new LiveProtocolError("consent_required", "The patient's consent to the recording must be confirmed first")
      : new LiveProtocolError("consent_invalid", "consent must be { kind: oral | written, given_by }");
  }
}

export async function createLiveSession(args: { userId: string; kind: unknown; language: unknown; consent?: unknown }) {
  const kind: LiveKind | undefined = args.kind === "recording" || args.kind === "dictation" ? args.kind : undefined;
  const language: LiveLanguage | undefined =
    args.language === "de" || args.language === "en" ? args.language : undefined;
  if (!kind) throw new LiveProtocolError("invalid_config", "kind must be recording or dictation");
  if (!language) throw new LiveProtocolError("invalid_language", "language must be de or en");
  const consent = sessionConsent(args.userId, kind, args.consent);
  const limit = await hitRateLimit({
    bucket: `live:${args.userId}`,
    limit: SESSIONS_PER_HOUR,
    windowSeconds: 3600,
    userId: args.userId,
  });
  if (!limit.allowed)
    throw new LiveProtocolError("quota_exceeded", "Too many live sessions", statusFor("rate_limited"));
  const { speech } = getConfig();
  const settings = { max_delay: LIVE_SETTINGS[kind].maxDelay, partials: LIVE_SETTINGS[kind].partials };
  if (speech.live.mode === "direct") {
    // Direct mode (ADR 0013): no session here; the browser opens Speechmatics' socket itself, with a key from
    // POST /api/speechmatics-jwt and exactly this StartRecognition (the server's settings and vocabulary).
    const vocabulary = await engineVocabulary({ userId: args.userId, language });
    const start = startRecognition({ kind, language, vocabulary });
    const direct = { url: speech.speechmatics.realtimeUrl, start };
    return { id: null, mode: "direct" as const, kind, language, engine: speech.live.engine, ...settings, direct };
  }
  const session = await insertLiveSession({
    ownerId: args.userId,
    kind,
    language,
    engine: speech.live.engine,
    consent,
  });
  return { id: session.id, mode: "relay" as const, kind, language, engine: speech.live.engine, ...settings };
}

export async function requireLiveSession(userId: string, id: string) {
  const session = await findLiveSession({ ownerId: userId, id });
  if (!session || session.status === "discarded")
    throw new LiveProtocolError("not_found", "Live session not found", statusFor("not_found"));
  return session;
}

function checkStart(session: LiveSessionRow, start: unknown): StartRecognition {
  const message = start as Partial<StartRecognition> | null;
  if (!message || message.message !== "StartRecognition")
    throw new LiveProtocolError("protocol_error", "StartRecognition expected");
  const format = message.audio_format;
  if (!format || format.type !== "raw" || format.encoding !== "pcm_s16le" || format.sample_rate !== LIVE_SAMPLE_RATE)
    throw new LiveProtocolError("invalid_audio_type", "Audio must be raw pcm_s16le at 16000 Hz");
  const language = message.transcription_config?.language;
  if (language !== undefined && language !== session.language)
    throw new LiveProtocolError("invalid_language", "The language differs from the session's");
  if (session.status === "saved")
    throw new LiveProtocolError("protocol_error", "The session is already saved", statusFor("conflict"));
  return message as StartRecognition;
}

/**
 * StartRecognition on either transport: starts a run, or joins the open one (a transport switch, a reload).
 * Answers RecognitionStarted with the number of buffers the server holds, from which the client resends, and
 * the session as it now stands.
 */
export async function startLive(args: { userId: string; id: string; start: unknown; transport: string }) {
  const found = await requireLiveSession(args.userId, args.id);
  checkStart(found, args.start);
  try {
    await ensureRun(found);
  } catch (error) {
    if (error instanceof LiveEngineError)
      throw new LiveProtocolError(error.type, error.message, statusFor("service_down"));
    throw error;
  }
  // The row as the run left it: the buffers held so far are where the client resumes.
  const session = (await updateLiveSession(found.id, { transport: args.transport })) ?? found;
  return { started: { message: "RecognitionStarted" as const, id: session.id, last_seq_no: session.buffers }, session };
}

/** Splits a body of PCM into 4096-sample buffers; only the last may be shorter. */
export function splitBuffers(body: Buffer) {
  if (body.length === 0 || body.length % 2 !== 0)
    throw new LiveProtocolError("invalid_audio_type", "Audio must be whole 16-bit samples");
  const buffers: Buffer[] = [];
  for (let at = 0; at < body.length; at += LIVE_BUFFER_BYTES)
    buffers.push(body.subarray(at, Math.min(at + LIVE_BUFFER_BYTES, body.length)));
  return buffers;
}

/** Stores buffers `firstSeq…` (re-sent ones are skipped) and wakes the runner. Answers AudioAdded. */
export async function acceptAudio(args: { session: LiveSessionRow; firstSeq: number; buffers: Buffer[] }) {
  const { session } = args;
  if (session.status !== "running" && session.status !== "ending")
    throw new LiveProtocolError("protocol_error", "Audio before StartRecognition", statusFor("conflict"));
  if (!Number.isInteger(args.firstSeq) || args.firstSeq < 1)
    throw new LiveProtocolError("protocol_error", "seq must be a positive integer");
  // The same cap as an upload (4 hours): a stream nobody stops must not fill the database.
  if ((args.firstSeq - 1) * LIVE_BUFFER_SAMPLES >= MAX_LIVE_SECONDS * LIVE_SAMPLE_RATE)
    throw new LiveProtocolError("duration_limit_exceeded", "The recording has reached its maximum length", 413);
  const result = await appendLiveAudio(session.id, args.firstSeq, args.buffers);
  if ("gapAfter" in result)
    throw new LiveProtocolError("protocol_error", "Audio out of order", statusFor("conflict"), {
      last_seq_no: result.gapAfter,
    });
  for (const buffer of result.stored) await wake("audio", session.id, buffer);
  // No run here: the one elsewhere may be dead (ADR 0013 "Takeover").
  void takeOverIfLapsed(session);
  return { message: "AudioAdded" as const, seq_no: result.held };
}

/** EndOfStream: the runner recognises what is left once it holds buffer `last_seq_no`, then ends the run. */
export async function endLive(args: { session: LiveSessionRow; end: unknown }) {
  const end = args.end as Partial<EndOfStream> | null;
  if (!end || end.message !== "EndOfStream" || !Number.isInteger(end.last_seq_no))
    throw new LiveProtocolError("protocol_error", "EndOfStream expected");
  if (args.session.status === "running") {
    await updateLiveSession(args.session.id, {
      status: "ending",
      end_seq: Math.max(end.last_seq_no!, args.session.buffers),
    });
    await wake("control", args.session.id);
  }
  // No more audio will come to trigger a takeover: watch the lease of a run held elsewhere.
  if (args.session.status === "running" || args.session.status === "ending") takeOverWhenLapsed(args.session);
}

/**
 * Ends a run nobody stopped (the page was reloaded or closed mid-recording) before the session is saved: the
 * engine recognises every buffer the server holds, then the session pauses. Resolves once it has, or after
 * the run's own bound (max_delay + 10 s), whichever is first.
 */
export async function settleRun(userId: string, id: string) {
  const session = await requireLiveSession(userId, id);
  if (session.status !== "running" && session.status !== "ending") return session;
  let stop = () => {};
  const settled = new Promise<void>((resolve) => {
    const check = async () => {
      const current = await findLiveSession({ ownerId: userId, id });
      if (!current || (current.status !== "running" && current.status !== "ending")) resolve();
    };
    const subscription = subscribe("messages", id, () => void check());
    const bound = setTimeout(resolve, (LIVE_SETTINGS[session.kind].maxDelay + 10) * 1000);
    bound.unref();
    stop = () => {
      clearTimeout(bound);
      subscription.stop();
    };
    void subscription.ready.then(check);
  });
  try {
    await endLive({ session, end: { message: "EndOfStream", last_seq_no: session.buffers } });
    await settled;
  } finally {
    stop();
  }
  return requireLiveSession(userId, id);
}

/** What the session published after message `after`, for a transport that (re)joins. */
export async function messagesAfter(sessionId: string, after: number) {
  const rows = await liveMessagesAfter(sessionId, after);
  return rows.map((row) => ({ ...(row.message as ServerMessage), n: row.n }));
}

export async function discardLive(args: { userId: string; id: string }) {
  const session = await requireLiveSession(args.userId, args.id);
  if (session.status === "saved")
    throw new LiveProtocolError("protocol_error", "The session is already saved", statusFor("conflict"));
  await updateLiveSession(session.id, { status: "discarded" });
  await closeRun(session.id);
  await wake("control", session.id);
  await deleteLiveContent(session.id);
}

/**
 * Whether a run of the session recognised nothing because the engine could not yet (its models were still
 * downloading): the whole recording is then transcribed when it is saved, like an upload.
 */
export async function transcribedLater(sessionId: string) {
  const notices = await liveMessagesAfter(sessionId, 0, ["notice"]);
  return notices.some((row) => (row.message as { type?: unknown }).type === TRANSCRIBE_LATER);
}

/**
 * What a page shows of a session: its state and the final text so far, grouped by speaker; `transcribe_later`
 * when it is kept for transcription after saving (then it may be saved without text).
 */
export async function liveSessionView(session: LiveSessionRow) {
  const finals = await liveMessagesAfter(session.id, 0, ["final"]);
  return {
    transcribe_later: await transcribedLater(session.id),
    id: session.id,
    kind: session.kind,
    language: session.language,
    status: session.status,
    buffers: session.buffers,
    seconds: Math.round(Number(session.samples) / LIVE_SAMPLE_RATE),
    last_n: session.last_message_n,
    transcript: segmentsOf(finals.map((row) => row.message as ServerMessage)),
  };
}

/** SPEC §4 paused session after a reload: the user's newest recording that was neither saved nor discarded. */
export async function findResumableLiveSession(userId: string) {
  const session = await findUnfinishedRecording(userId);
  if (!session) return null;
  const view = await liveSessionView(session);
  return {
    id: view.id,
    language: view.language,
    seconds: view.seconds,
    transcript: view.transcript,
    transcribeLater: view.transcribe_later,
  };
}

/** Unfinished sessions are patient data: after this long without a change they are deleted with their audio. */
export const ABANDONED_AFTER_MS = 48 * 3_600_000;

/** A dead runner's session that heard nothing for this long has no client left to take it over: it pauses. */
const QUIET_MS = 60_000;

/** The minute sweep: sessions of dead runners whose clients went quiet pause; abandoned ones go. */
export async function sweepLiveSessions(now = new Date()) {
  const released = await releaseLapsedRunners(now, new Date(now.getTime() - QUIET_MS));
  const deleted = await deleteAbandonedLiveSessions(new Date(now.getTime() - ABANDONED_AFTER_MS));
  return { released, deleted };
}
