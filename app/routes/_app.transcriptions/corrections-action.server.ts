import { json } from "@remix-run/node";
import type { z } from "zod";
import { auditTranscript } from "~/services/audit/events.server";
import {
  baseVersionFrom,
  confirmWord,
  correctionTextFrom,
  correctWord,
  mergeSpeakers,
  moveSegment,
  nameSpeaker,
  segmentFrom,
  speakerFrom,
  speakerNameFrom,
  wordRefFrom,
} from "~/services/transcription/corrections.server";
import { DomainError, statusFor } from "~/services/web/domain-error.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { notFound } from "~/services/web/not-found.server";
import { redirectWithToast, type Toast } from "~/services/web/toast.server";
import type { SessionUser } from "~/services/web/session.server";
import { INTENT, type transcriptViewerActionSchema } from "./schema";

// The transcript viewer's corrections (issue 24): the review's word form and the speakers' forms, each a new version
// of the transcript (corrections.server.ts). A change redirects back with a toast — to the same review position,
// which now shows the next word, since the one just handled has left the list. An expected failure (bad input, a
// version changed meanwhile) comes back translated with the status the one mapping gives it (400, 404, 409), and with
// the typed correction, so nothing typed is lost.

type ViewerForm = z.infer<typeof transcriptViewerActionSchema>;
type CorrectionForm = Exclude<ViewerForm, { intent: "createLetter" | "delete" }>;

export type CorrectionActionData = {
  correction: { intent: CorrectionForm["intent"]; error: string; conflict: boolean; text?: string };
};

const T = "transcriptions:corrections.toast";
const HIDDEN = new Set(["transcriptions:errors.transcriptNotFound", "transcriptions:errors.transcriptKeyRequired"]);

function reviewPosition(value: string) {
  return /^\d{1,6}$/.test(value) && Number(value) >= 1 ? Number(value) : 1;
}

async function change(form: CorrectionForm, user: SessionUser, key: string, request: Request) {
  const pathname = new URL(request.url).pathname;
  const target = { userId: user.id, key, baseVersion: baseVersionFrom(form.base_version) };
  const done = (to: string, toast: Toast) => redirectWithToast(to, toast);
  switch (form.intent) {
    case INTENT.correctWord: {
      const result = await correctWord({
        ...target,
        word: wordRefFrom(form.segment, form.index),
        text: correctionTextFrom(form.text),
        applyToAll: form.apply_to_all,
        addToVocabulary: form.add_to_vocabulary,
      });
      const corrected = result.kind === "corrected";
      await auditTranscript(request, user.id, corrected ? "transcript.word.correct" : "transcript.word.confirm", key);
      const to = `${pathname}?review=${reviewPosition(form.review)}`;
      if (!corrected)
        return done(to, { type: "success", key: `${T}.${result.words > 1 ? "confirmedMany" : "confirmedOne"}` });
      if (result.vocabulary === "full") return done(to, { type: "info", key: `${T}.vocabularyFull` });
      if (result.vocabulary === "added") return done(to, { type: "success", key: `${T}.correctedVocabulary` });
      return result.words > 1
        ? done(to, { type: "success", key: `${T}.correctedMany`, values: { count: String(result.words) } })
        : done(to, { type: "success", key: `${T}.correctedOne` });
    }
    case INTENT.confirmWord: {
      const result = await confirmWord({
        ...target,
        word: wordRefFrom(form.segment, form.index),
        applyToAll: form.apply_to_all,
        addToVocabulary: form.add_to_vocabulary,
      });
      await auditTranscript(request, user.id, "transcript.word.confirm", key);
      const to = `${pathname}?review=${reviewPosition(form.review)}`;
      if (result.vocabulary === "added") return done(to, { type: "success", key: `${T}.confirmedVocabulary` });
      return result.words > 1
        ? done(to, { type: "success", key: `${T}.confirmedMany`, values: { count: String(result.words) } })
        : done(to, { type: "success", key: `${T}.confirmedOne` });
    }
    case INTENT.nameSpeaker:
      await nameSpeaker({ ...target, speaker: speakerFrom(form.speaker), ...speakerNameFrom(form.role, form.name) });
      await auditTranscript(request, user.id, "transcript.speaker.name", key);
      return done(pathname, { type: "success", key: `${T}.speakerNamed` });
    case INTENT.mergeSpeakers:
      await mergeSpeakers({ ...target, from: speakerFrom(form.from), into: speakerFrom(form.into) });
      await auditTranscript(request, user.id, "transcript.speaker.merge", key);
      return done(pathname, { type: "success", key: `${T}.speakersMerged` });
    case INTENT.moveSegment:
      await moveSegment({ ...target, segment: segmentFrom(form.segment), to: speakerFrom(form.to) });
      await auditTranscript(request, user.id, "transcript.segment.move", key);
      return done(pathname, { type: "success", key: `${T}.segmentMoved` });
  }
}

/** One correction intent of the viewer, for the transcript of the page's address (never a key from the form). */
export async function correctionAction(form: CorrectionForm, user: SessionUser, key: string, request: Request) {
  try {
    return await change(form, user, key, request);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    // Another user's transcript, or none, is the one page 404 (never a form error that confirms it exists).
    if (HIDDEN.has(error.message)) notFound();
    const t = await getFixedTFor(await getLanguage(request), ["common", "transcriptions"]);
    const data: CorrectionActionData = {
      correction: {
        intent: form.intent,
        error: t(error.message, error.values),
        conflict: error.kind === "conflict",
        ...(form.intent === INTENT.correctWord ? { text: form.text } : {}),
      },
    };
    return json(data, { status: statusFor(error.kind) });
  }
}
