import { once } from "node:events";
import type { ConsentReading } from "~/models/consent-rules";
import { confirmConsent } from "./consent.server";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { addRecordingContext, insertUploadSlot, updateRecording } from "~/models/recording.server";
import { checkAdditionalContext, sanitiseFileName } from "~/models/recording-rules";
import type { TranscriptionMode } from "~/models/schema";
import type { TemplateLanguage } from "~/models/template-rules";
import { scanUploadedFile } from "../antivirus/antivirus.server";
import { getDb } from "../../models/db.server";
import { DomainError } from "../web/domain-error.server";
import { MAX_AUDIO_BYTES, tooLargeMessage, validateAudioFile } from "../media/probe.server";
import { audioRejected, MAX_DURATION_SECONDS } from "./recordings.server";
import { getStorage, makeStorageKey } from "../storage/storage.server";
import { getUserStructure } from "../templates/templates.server";

// The upload that works without JavaScript: a multipart form streamed to a
// temporary file (never held in memory), checked like every other upload, then
// stored. The browser path with upload URLs does the same checks afterwards.

export type TempUpload = { path: string; size: number; tooLarge: boolean; fileName: string; declaredType: string };

/** Streams one multipart file part to disk, stopping at the size cap. */
export async function streamPartToTempFile(part: {
  filename?: string;
  contentType: string;
  data: AsyncIterable<Uint8Array>;
}): Promise<TempUpload> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-upload-"));
  const file = path.join(dir, "upload");
  const out = fs.createWriteStream(file);
  // The file opens after this returns control: a body that fails first (the client went, the form was refused and
  // the folder removed) must close it and hear its error, never leave an unheard ENOENT to end the process.
  let failure: Error | undefined;
  out.on("error", (error) => (failure = error));
  let size = 0;
  let tooLarge = false;
  try {
    for await (const chunk of part.data) {
      size += chunk.length;
      if (size > MAX_AUDIO_BYTES) {
        tooLarge = true; // keep counting so the message can say how large it was, but stop writing
        continue;
      }
      if (failure) throw failure;
      if (!out.write(chunk)) await once(out, "drain");
    }
  } catch (error) {
    out.destroy();
    throw error;
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return { path: file, size, tooLarge, fileName: part.filename ?? "audio", declaredType: part.contentType };
}

export function discardTempUpload(upload: TempUpload | null) {
  if (upload) fs.rmSync(path.dirname(upload.path), { recursive: true, force: true });
}

export async function createRecordingFromUpload(args: {
  userId: string;
  upload: TempUpload;
  language: TemplateLanguage;
  templateId: string | null;
  mode: TranscriptionMode;
  additionalContext: string;
  /** Text already extracted from PDFs or patient records, stored with the recording. */
  extraContext?: Array<{ kind: "pdf" | "patient_record"; text: string; sourceName?: string }>;
  /** The form's consent fields, unchecked (consent-rules.ts). */
  consent: ConsentReading;
}) {
  const { upload } = args;
  const consent = confirmConsent(args.userId, args.consent);
  if (upload.tooLarge) throw audioRejected(tooLargeMessage(upload.size));
  const context = checkAdditionalContext(args.additionalContext);
  if (!context.ok) throw new DomainError("invalid", context.message);
  if (args.templateId) {
    await getUserStructure({ userId: args.userId, templateId: args.templateId, language: args.language }).catch(() => {
      throw new DomainError("invalid", "recordings:errors.unknownTemplate");
    });
  }
  await scanUploadedFile({ userId: args.userId, name: upload.fileName, entityType: "recording" }, upload.path);
  const result = await validateAudioFile(upload.path, {
    declaredType: upload.declaredType,
    maxDurationSeconds: MAX_DURATION_SECONDS,
  });
  if (!result.ok) throw audioRejected(result.rejection.message);
  const contentType = result.sniffed === "mp3" ? "audio/mpeg" : "audio/wav";
  const key = makeStorageKey({ ownerId: args.userId, area: "audio", extension: `.${result.sniffed}` });
  await getStorage().putFile({ key, path: upload.path, contentType });
  // The row, its checks' results and its context are one write: a failure halfway (the database gone, a context
  // refused) must not leave a ready recording whose letter would be written without the context it was given.
  let id: string;
  try {
    id = await getDb()
      .transaction()
      .execute(async (db) => {
        const slot = await insertUploadSlot({
          ownerId: args.userId,
          key,
          originalFilename: sanitiseFileName(upload.fileName),
          languageCode: args.language,
          declaredType: contentType,
          consent,
          db,
        });
        await updateRecording({
          ownerId: args.userId,
          id: slot.id,
          set: {
            upload_status: "ready",
            template_id: args.templateId,
            transcription_mode: args.mode,
            size_bytes: upload.size,
            duration_seconds: result.probe.durationSeconds,
            audio_format: result.sniffed,
          },
          db,
        });
        const contexts = [
          ...(context.value ? [{ kind: "text" as const, text: context.value }] : []),
          ...(args.extraContext ?? []),
        ];
        for (const extra of contexts)
          await addRecordingContext({ ownerId: args.userId, recordingId: slot.id, ...extra, db });
        return slot.id;
      });
  } catch (error) {
    // Nothing half-stored: the object no row names goes too (if storage is down as well, the account's prefix
    // sweep and the stale-upload sweep are the backstop).
    await getStorage()
      .delete(key)
      .catch((cleanup: unknown) => console.warn("[upload] could not remove an unrecorded upload:", String(cleanup)));
    throw error;
  }
  return { id, key };
}
