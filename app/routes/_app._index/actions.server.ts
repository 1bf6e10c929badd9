import { parseWithZod } from "@conform-to/zod";
import { readConsentForm } from "~/models/consent-rules";
import {
  unstable_composeUploadHandlers,
  unstable_createMemoryUploadHandler,
  unstable_parseMultipartFormData,
  json,
  redirect,
} from "@remix-run/node";
import { transcriptionModes, type TranscriptionMode } from "~/models/schema";
import { checkNewTag } from "~/models/recording-rules";
import { templateLanguageFrom } from "~/models/template-rules";
import { auditRecording, type RecordingAction } from "~/services/audit/events.server";
import { DomainError, statusFor } from "~/services/web/domain-error.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { isMalformedMultipart } from "~/services/web/multipart-form.server";
import {
  createRecordingFromUpload,
  discardTempUpload,
  streamPartToTempFile,
  type TempUpload,
} from "~/services/recordings/upload.server";
import { deleteAll, forceCleanup } from "~/services/recordings/removal.server";
import { renameFile, updateFileTags } from "~/services/recordings/metadata.server";
import { fetchPatientContext, MAX_PDFS_PER_REQUEST } from "~/services/letters/context-sources.server";
import { scanUploadedFiles } from "~/services/antivirus/antivirus.server";
import { extractPdfContext, PDF_LIMITS } from "~/services/pdf/text.server";
import type { SessionUser } from "~/services/web/session.server";
import { redirectWithToast, type Toast } from "~/services/web/toast.server";
import { isServiceUnavailable } from "~/services/web/unavailable.server";
import { autoStartTranscription, requestTranscription } from "~/services/transcription/transcription.server";
import { meterCall } from "~/services/admin/usage.server";
import { isUnknownIntent } from "~/components/forms/fields";
import { INTENT } from "./intents";
import { audioActionSchema, uploadSchema } from "./schema";

// The Audio page's form intents (STYLE.md §7). Failures come back as the
// banner's message, translated; nothing already saved is touched.

async function failure(request: Request, error: unknown, extra: Record<string, string> = {}) {
  const t = await getFixedTFor(await getLanguage(request), ["common", "recordings", "templates"]);
  // Storage or the database is down: the banner says so, and the form can simply be sent again later.
  if (isServiceUnavailable(error))
    return json({ error: t("common:errors.unavailable"), ...extra }, { status: statusFor("service_down") });
  if (!(error instanceof DomainError) || error.kind === "not_found") throw error;
  // A service the use case needs could not answer (the virus scanner): the one mapping's 502, as the JSON API
  // answers the same upload, not a 400 — it is not the user's input.
  return json({ error: t(error.message, error.values), ...extra }, { status: statusFor(error.kind) });
}

/** The audit row of an intent that succeeded on a recording (no content, only what and which). */
function succeeded(user: SessionUser, action: RecordingAction, key: string, request: Request) {
  return auditRecording(request, user.id, action, key);
}

function done(key: Toast["key"], to = "/") {
  return redirectWithToast(to, { type: "success", key });
}

/**
 * The list's and the dialogs' forms, parsed at the door; an intent the page does not know is a 400. Here, not in
 * route.tsx: the route module is also the island's JavaScript (ADR 0006), and what it imports for the action alone
 * (zod, conform) would be shipped with it.
 */
export async function parseAudioAction(request: Request) {
  const submission = parseWithZod(await request.formData(), { schema: audioActionSchema });
  if (isUnknownIntent(submission)) throw new Response("Unknown intent", { status: 400 });
  return submission;
}

/** The upload without JavaScript: the file part is streamed to disk, never into memory. */
export async function uploadIntent(user: SessionUser, request: Request) {
  let upload: TempUpload | null = null;
  const pdfs: Array<{ name: string; data: Uint8Array }> = [];
  const handler = unstable_composeUploadHandlers(
    async (part) => {
      if (part.name === "contextPdf" && part.filename) {
        pdfs.push({ name: part.filename, data: await readCapped(part.data, PDF_LIMITS.maxBytes) });
        return "received";
      }
      if (part.name !== "audio" || !part.filename) return undefined;
      upload = await streamPartToTempFile(part);
      return "received";
    },
    unstable_createMemoryUploadHandler({ maxPartSize: 64 * 1024 }),
  );
  try {
    const form = await unstable_parseMultipartFormData(request, handler).catch((error: unknown) => {
      throw isMalformedMultipart(error) ? new DomainError("invalid", "recordings:errors.fileNameUnreadable") : error;
    });
    const received = upload as TempUpload | null;
    if (!received || received.size === 0) {
      const t = await getFixedTFor(await getLanguage(request), ["recordings"]);
      return json({ error: t("recordings:errors.audioEmpty") }, { status: 400 });
    }
    // Context first: a PDF or patient-record failure stops before anything is saved.
    if (pdfs.length > MAX_PDFS_PER_REQUEST)
      throw new DomainError("invalid", "recordings:errors.tooManyPdfs", [], { max: String(MAX_PDFS_PER_REQUEST) });
    const submission = parseWithZod(form, { schema: uploadSchema });
    if (submission.status !== "success") {
      await auditRecording(request, user.id, "recording.upload", undefined, "failure");
      return json({ result: submission.reply() }, { status: 400 });
    }
    const fields = submission.value;
    const extraContext = await gatherContext(user, pdfs, fields.patientId);
    const { id, key } = await createRecordingFromUpload({
      userId: user.id,
      upload: received,
      language: templateLanguageFrom(fields.language) ?? "de-DE",
      templateId: fields.templateId ?? null,
      mode: (transcriptionModes as readonly string[]).includes(fields.mode)
        ? (fields.mode as TranscriptionMode)
        : "transcript_and_letter",
      additionalContext: fields.additionalContext,
      extraContext,
      consent: readConsentForm(new Map(Object.entries(fields))),
    });
    await succeeded(user, "recording.upload", id, request);
    return afterUpload(user, key, request);
  } catch (error) {
    await auditRecording(request, user.id, "recording.upload", undefined, "failure");
    return failure(request, error);
  } finally {
    discardTempUpload(upload);
  }
}

/**
 * SPEC §4 upload flow: once the file is stored, transcription starts when AUTO_START_TRANSCRIPTION is on.
 * A failure there does not undo the upload; the message says so.
 */
export async function afterUpload(user: SessionUser, key: string, request: Request) {
  try {
    const started = await autoStartTranscription({ userId: user.id, key });
    if (!started) return done("recordings:audio.uploaded");
    await succeeded(user, "transcription.request", key, request);
    return done("recordings:audio.uploadedTranscribing");
  } catch (error) {
    const t = await getFixedTFor(await getLanguage(request), ["common", "recordings", "transcriptions"]);
    const reason = error instanceof DomainError ? t(error.message, error.values) : t("transcriptions:errors.failed");
    return redirectWithToast("/", {
      type: "error",
      key: "recordings:audio.autoTranscriptionFailed",
      values: { reason },
    });
  }
}

/** The list's "transcribe" action; a second click while it runs starts nothing (SPEC §4). */
export async function transcribeIntent(user: SessionUser, key: string, request: Request) {
  try {
    await requestTranscription({ userId: user.id, key });
    await succeeded(user, "transcription.request", key, request);
    return done("transcriptions:toast.started");
  } catch (error) {
    return failure(request, error);
  }
}

/** Reads a small part (a PDF) into memory up to `max` bytes; beyond that it is handed on empty. */
async function readCapped(data: AsyncIterable<Uint8Array>, max: number) {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of data) {
    size += chunk.length;
    if (size <= max) chunks.push(chunk);
  }
  return size > max ? new Uint8Array() : new Uint8Array(Buffer.concat(chunks));
}

async function gatherContext(
  user: SessionUser,
  pdfs: Array<{ name: string; data: Uint8Array }>,
  patientId: string | undefined,
) {
  const extra: Array<{ kind: "pdf" | "patient_record"; text: string; sourceName?: string }> = [];
  const chosen = pdfs.filter((pdf) => pdf.name && pdf.data.length > 0);
  if (chosen.length > 0) {
    meterCall(user.id, "extract-pdf-from-s3");
    await scanUploadedFiles({ userId: user.id, entityType: "context" }, chosen);
    const result = await extractPdfContext(chosen);
    if (result.extracted_text)
      extra.push({ kind: "pdf", text: result.extracted_text, sourceName: chosen.map((p) => p.name).join(", ") });
  }
  if (patientId?.trim()) {
    meterCall(user.id, "extract-mfiles-pdf-context");
    const result = await fetchPatientContext({ userId: user.id, patientId });
    if (result.extracted_text) extra.push({ kind: "patient_record", text: result.extracted_text });
  }
  return extra;
}

export async function renameIntent(
  user: SessionUser,
  { key, displayName }: { key: string; displayName: string },
  request: Request,
  current: string | null,
) {
  // SPEC §5 Reading C: an unchanged name just closes the editor.
  if (current !== null && displayName.trim() === current) return redirect("/");
  try {
    await renameFile({ userId: user.id, key, displayName });
  } catch (error) {
    return failure(request, error, { dialog: "edit" });
  }
  await succeeded(user, "recording.rename", key, request);
  return done("recordings:audio.renamed", `/?edit=${encodeURIComponent(key)}`);
}

export async function tagIntent(
  user: SessionUser,
  { intent, key, tag }: { intent: typeof INTENT.addTag | typeof INTENT.removeTag; key: string; tag: string },
  request: Request,
  current: string[],
) {
  let tags = current;
  if (intent === INTENT.addTag) {
    const added = checkNewTag(tag, current);
    if (!added.ok) return failure(request, new DomainError("invalid", added.message), { dialog: "edit" });
    tags = [...current, added.value];
  } else {
    tags = current.filter((t) => t !== tag);
  }
  try {
    await updateFileTags({ userId: user.id, key, tags });
  } catch (error) {
    return failure(request, error, { dialog: "edit" });
  }
  await succeeded(user, "recording.tags", key, request);
  return done("recordings:audio.tagsSaved", `/?edit=${encodeURIComponent(key)}`);
}

/**
 * Deletes the recording with its transcript and letter. `withdraw`: the patient withdrew the consent to the
 * recording (issue 22) — the same deletion, and the audit log says why (no content).
 */
export async function deleteIntent(user: SessionUser, key: string, request: Request, withdraw = false) {
  try {
    await deleteAll({ userId: user.id, key });
  } catch (error) {
    if (isServiceUnavailable(error)) return failure(request, error);
    throw error;
  }
  await succeeded(user, withdraw ? "recording.consent-withdrawn" : "recording.delete", key, request);
  return done(withdraw ? "recordings:consent.withdrawn" : "recordings:audio.deleted");
}

export async function resetIntent(user: SessionUser, key: string, request: Request) {
  try {
    await forceCleanup({ userId: user.id, key });
  } catch (error) {
    if (isServiceUnavailable(error)) return failure(request, error);
    throw error;
  }
  await succeeded(user, "recording.reset", key, request);
  return done("recordings:audio.resetDone");
}
