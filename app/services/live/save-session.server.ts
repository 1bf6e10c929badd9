import { LIVE_SAMPLE_RATE, type ServerMessage } from "~/live/protocol";
import { deleteLiveContent, liveMessagesAfter, readLiveAudio, updateLiveSession } from "~/models/live-session.server";
import { ApiError, apiJson, apiRoute, readJsonBody, requireApiUser } from "../web/api.server";
import { auditLive } from "../audit/events.server";
import { statusFor } from "../web/domain-error.server";
import { wake } from "./bus.server";
import { liveError } from "./transport-http.server";
import { saveRealtimeTranscript } from "./save.server";
import { liveRecord } from "./segments";
import { LiveProtocolError, requireLiveSession, settleRun, transcribedLater } from "./sessions.server";

// POST /live/sessions/<id>/save (ADR 0013): the recorder's save. Unlike the JSON API's save-realtime-transcript,
// the transcript is built from what the server itself received and published — never from text the browser
// sends — and the recording's audio from the server's own copy of the PCM, so a reload or a crash mid-recording
// still saves everything that was streamed. The browser may afterwards upload its compressed copy
// (get-upload-url with specific_key), which replaces the server's.

async function* sessionPcm(sessionId: string) {
  let next = 1;
  for (;;) {
    const rows = await readLiveAudio(sessionId, next, 128);
    for (const row of rows) {
      yield row.pcm;
      next = row.seq + 1;
    }
    if (rows.length < 128) return;
  }
}

const text = (value: unknown) => (typeof value === "string" ? value : undefined);

export function saveSessionRoute(request: Request, id: string) {
  return apiRoute(async () => {
    try {
      const user = await requireApiUser(request);
      if (request.method !== "POST") throw new ApiError(405, "Method not allowed");
      const body = await readJsonBody(request);
      const found = await requireLiveSession(user.id, id);
      if (found.kind !== "recording") throw new LiveProtocolError("protocol_error", "Only recordings are saved");
      // A recording nobody stopped (a reload, a closed tab): its last words are recognised first.
      const session = await settleRun(user.id, id);
      if (session.status === "saved")
        throw new LiveProtocolError("protocol_error", "The session is already saved", statusFor("conflict"));
      const finals = (await liveMessagesAfter(session.id, 0, ["final"])).map((row) => row.message as ServerMessage);
      const seconds = Number(session.samples) / LIVE_SAMPLE_RATE;
      const name = text(body.display_name)?.trim() || `live-${session.created_at.toISOString().slice(0, 19)}`;
      const payload = {
        transcript_data: liveRecord({
          finals,
          startedAt: session.created_at,
          endedAt: session.updated_at,
          language: session.language,
          seconds,
          name,
        }),
        display_name: text(body.display_name),
        language_code: session.language === "de" ? "de-DE" : "en-GB",
        duration: Math.round(seconds),
        metadata: {
          template_id: body.template_id,
          tags: body.tags,
          transcription_mode: body.transcription_mode,
          consent: body.consent,
        },
        created_via: "realtime",
        additional_context: text(body.additional_context),
        original_mime_type: body.audio_copy === true ? text(body.original_mime_type) : undefined,
      };
      const saved = await saveRealtimeTranscript({
        userId: user.id,
        request,
        payload,
        pcmAudio: () => sessionPcm(session.id),
        engine: session.engine === "speechmatics" ? "speechmatics" : "local",
        // A run that could not recognise (models still downloading): the whole recording goes to the batch engine.
        transcribeLater: await transcribedLater(session.id),
        // Confirmed before the first buffer; a session from before that asks the save's payload.
        consent:
          session.consent_kind && session.consent_given_by && session.consent_confirmed_at
            ? {
                kind: session.consent_kind,
                givenBy: session.consent_given_by,
                confirmedBy: user.id,
                confirmedAt: session.consent_confirmed_at,
              }
            : undefined,
      });
      await updateLiveSession(session.id, { status: "saved" });
      await wake("control", session.id);
      await deleteLiveContent(session.id);
      await auditLive(request, user.id, "live.save", session.id);
      return apiJson({ ...saved, recording_key: saved.audio_key });
    } catch (error) {
      // Domain errors (validation, 'No transcript content to save') are answered by apiRoute.
      if (error instanceof LiveProtocolError) return liveError(error);
      throw error;
    }
  })({ request });
}
