import type { FlagKind } from "~/services/evidence/strict-checks";
import { audit, type AuditOutcome } from "./audit.server";

// One helper per kind of thing an audit row is about (issue 23): the entity type is fixed by the helper, the action
// is one of that kind's union, so a misspelt action fails the typecheck instead of writing a row nobody finds. The
// rows are exactly what `audit` writes (STYLE.md §16: who, what, which, how it ended — never the content). A call
// made outside a request (a sweep, a worker) passes `undefined` as the request: the row has no address then.

type Caller = Request | undefined;

/** A recording: its audio, upload, metadata, and the work started from it (a transcription, a letter). */
export type RecordingAction =
  | "recording.list"
  | "recording.play"
  | "recording.upload"
  | "recording.upload-slot"
  | "recording.upload-status"
  | "recording.upload-part-urls"
  | "recording.upload-complete"
  | "recording.upload-abort"
  | "recording.live-upload-slot"
  | "recording.live-audio"
  | "recording.live-save"
  | "recording.metadata"
  | "recording.rename"
  | "recording.tags"
  | "recording.reset"
  | "recording.delete"
  | "recording.consent-withdrawn"
  | "recording.audio-retention"
  | "recording.transcript-retention"
  | "recording.letter-retention"
  | "retention.sweep"
  | "transcription.request"
  | "letter.create";

export function auditRecording(
  request: Caller,
  userId: string | null,
  action: RecordingAction,
  key?: string,
  outcome: AuditOutcome = "success",
) {
  return audit({ userId, action, entityType: "recording", entityId: key, outcome, request });
}

/**
 * The review and the corrections of issue 24: the doctor's confirmations of what the transcript says — a word
 * corrected or confirmed, a speaker named or merged, a paragraph moved — each a row with who and when, never the text.
 */
export type TranscriptAction =
  | "transcript.list"
  | "transcript.read"
  | "transcript.delete"
  | "transcript.review.read"
  | "transcript.word.correct"
  | "transcript.word.confirm"
  | "transcript.speaker.name"
  | "transcript.speaker.merge"
  | "transcript.segment.move";

export function auditTranscript(
  request: Caller,
  userId: string,
  action: TranscriptAction,
  key?: string,
  outcome: AuditOutcome = "success",
) {
  return audit({ userId, action, entityType: "transcript", entityId: key, outcome, request });
}

export type LetterAction =
  | "letter.list"
  | "letter.read"
  | "letter.proposal.read"
  | "letter.versions.read"
  | "letter.compare.read"
  | "letter.save"
  | "letter.refine"
  | "letter.refine_bulk"
  | "letter.restore"
  | "letter.proposal.accept"
  | "letter.proposal.reject"
  | "letter.release"
  | "letter.redo"
  // Regeneration from the corrected transcript (ADR 0032): asked for, its job's outcome, its status read.
  | "letter.regenerate"
  | "letter.regenerate.done"
  | "letter.regenerate.read"
  | "letter.delete"
  | "letter.evidence.read"
  | `letter.confirm.${FlagKind}`
  | "letter.omission.propose"
  // A finished letter leaving Skribent (issue 25), by format: who, when, which letter — never its content.
  | "letter.export.pdf"
  | "letter.export.docx"
  | "letter.export.fhir"
  | "letter.export.text"
  | "letter.export.print";

export function auditLetter(
  request: Caller,
  userId: string,
  action: LetterAction,
  key?: string,
  outcome: AuditOutcome = "success",
) {
  return audit({ userId, action, entityType: "letter", entityId: key, outcome, request });
}

/** A saved refinement prompt of the letter editor. */
export type PromptAction = "prompt.save" | "prompt.delete";

export function auditPrompt(
  request: Caller,
  userId: string,
  action: PromptAction,
  id?: string,
  outcome: AuditOutcome = "success",
) {
  return audit({ userId, action, entityType: "prompt", entityId: id, outcome, request });
}

export type TemplateAction =
  | "template.add-access"
  | "template.remove-access"
  | "template.custom.create"
  | "template.custom.delete"
  | "template.structure.save"
  | "template.structure.reset";

export function auditTemplate(
  request: Caller,
  userId: string,
  action: TemplateAction,
  templateId: string,
  outcome: AuditOutcome = "success",
) {
  return audit({ userId, action, entityType: "template", entityId: templateId, outcome, request });
}

/**
 * An account (entity "user"): signing in and out, consents, deletion, an admin ending its sessions. `userId` is who
 * acted — the admin, when one did — and `accountId` the account it was about.
 */
export type AccountAction =
  | "auth.signin"
  | "auth.signout"
  | "consent.rag.grant"
  | "consent.rag.withdraw"
  | "account.delete"
  | "admin.account-delete"
  | "admin.sessions-end";

export function auditAccount(
  request: Caller,
  userId: string,
  action: AccountAction,
  accountId: string,
  outcome: AuditOutcome = "success",
) {
  return audit({ userId, action, entityType: "user", entityId: accountId, outcome, request });
}

/** One signed-in session (its public id), ended by its user, an admin, or the limit of sessions per user. */
export type SessionAction = "session.end" | "session.admin-end" | "session.evicted";

export function auditSession(
  request: Caller,
  userId: string,
  action: SessionAction,
  publicId: string,
  outcome: AuditOutcome = "success",
) {
  return audit({ userId, action, entityType: "session", entityId: publicId, outcome, request });
}

/**
 * A term of the doctor's own vocabulary (issue 24, ADR 0031) added or removed by hand in Settings, by its id — never
 * the term. A term a correction adds is part of that correction's row (`transcript.word.correct`).
 */
export type VocabularyAction = "vocabulary.add" | "vocabulary.remove";

export function auditVocabulary(
  request: Caller,
  userId: string,
  action: VocabularyAction,
  termId: string,
  outcome: AuditOutcome = "success",
) {
  return audit({ userId, action, entityType: "vocabulary_term", entityId: termId, outcome, request });
}

/**
 * A letterhead (issue 25) saved or removed, by its row's id: the doctor's own, or the practice's by an admin. Who and
 * when, never what it says or its logo.
 */
export type LetterheadAction =
  "letterhead.update" | "letterhead.remove" | "letterhead.practice.update" | "letterhead.practice.remove";

export function auditLetterhead(
  request: Caller,
  userId: string,
  action: LetterheadAction,
  letterheadId?: string,
  outcome: AuditOutcome = "success",
) {
  return audit({ userId, action, entityType: "letterhead", entityId: letterheadId, outcome, request });
}

export type ChatAction = "chat.read" | "chat.ask" | "chat.attach" | "chat.clear" | "chat.request";

/** The chat as a whole (entity "chat"): no single message is named. */
export function auditChat(request: Caller, userId: string, action: ChatAction, outcome: AuditOutcome = "success") {
  return audit({ userId, action, entityType: "chat", outcome, request });
}

export type ChatMessageAction = "chat.ask" | "chat.answer";

/** One answer of the chat (entity "chat_message"), by its id. */
export function auditChatMessage(
  request: Caller,
  userId: string,
  action: ChatMessageAction,
  answerId: string,
  outcome: AuditOutcome = "success",
) {
  return audit({ userId, action, entityType: "chat_message", entityId: answerId, outcome, request });
}

/** A letter's context: PDFs uploaded for it (entity "context") or fetched from the patient record. */
export type ContextAction = "context.pdf-upload-urls" | "context.pdf-extract";

export function auditContext(
  request: Caller,
  userId: string,
  action: ContextAction,
  outcome: AuditOutcome = "success",
) {
  return audit({ userId, action, entityType: "context", outcome, request });
}

export function auditPatientRecord(
  request: Caller,
  userId: string,
  action: "patient-record.fetch",
  outcome: AuditOutcome = "success",
) {
  return audit({ userId, action, entityType: "patient_record", outcome, request });
}

export type LiveAction = "live.create" | "live.connect" | "live.discard" | "live.save";

export function auditLive(
  request: Caller,
  userId: string,
  action: LiveAction,
  sessionId: string,
  outcome: AuditOutcome = "success",
) {
  return audit({ userId, action, entityType: "live_session", entityId: sessionId, outcome, request });
}

/**
 * A door rather than a record (no entity): sign-in steps, refused tokens and cross-site writes, rate limits, the
 * admin pages and calls, the speech token. `userId` is null when nobody is known yet.
 */
export type AccessAction =
  | "auth.signin"
  | "auth.signin.start"
  | "auth.signin.acr"
  | "auth.signout"
  | "api.bearer"
  | "api.bearer.acr"
  | "api.bearer.scope"
  | "csrf.rejected"
  | "speech.token"
  | `rate-limit.${string}`
  | AdminAction;

/** What the admin gate (admin.server) audits under: a dashboard page or an admin-only call. */
export type AdminAction =
  | "admin.dashboard"
  | "admin.audit"
  | "admin.accounts"
  | "admin.sessions"
  | "admin.usage"
  | "admin.usage_csv"
  | "admin.health"
  | "admin.account-delete"
  | "admin.sessions-end"
  | "admin.letterhead";

export function auditAccess(request: Caller, userId: string | null, action: AccessAction, outcome: AuditOutcome) {
  return audit({ userId, action, outcome, request });
}
