import { deleteContextUploads, findContextUploads, insertContextUpload } from "~/models/context-upload.server";
import { scanUploadedFiles } from "../antivirus/antivirus.server";
import { getConfig } from "../config/config.server";
import { DomainError } from "../web/domain-error.server";
import { PDF_LIMITS, extractPdfContext, sanitiseFileName } from "../pdf/text.server";
import {
  assertPatientId,
  createPatientRecordSource,
  PatientRecordError,
  type PatientRecordSource,
} from "../patient-records/patient-records.server";
import { hitRateLimit } from "../web/rate-limit.server";
import { getStorage, makeStorageKey } from "../storage/storage.server";

// Additional context for a letter (SPEC §2 template dialog): PDFs the user
// uploads, and documents from the patient-record system behind the
// disable_mfiles flag. Only the extracted text is kept (with the recording);
// the PDFs themselves are deleted once read.

export const MAX_PDFS_PER_REQUEST = 10;

const tooManyPdfs = () =>
  new DomainError("invalid", "recordings:errors.tooManyPdfs", [], { max: String(MAX_PDFS_PER_REQUEST) });

/** The door's reading of get-pdf-upload-urls' `filenames`: 1 to 10 names, none blank. */
export function pdfFileNamesFrom(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.some((f) => typeof f !== "string" || !f.trim()))
    throw new DomainError("invalid", "recordings:errors.fileNamesRequired");
  if (value.length > MAX_PDFS_PER_REQUEST) throw tooManyPdfs();
  return value as string[];
}

/** The door's reading of extract-pdf-from-s3's `s3_keys`: 1 to 10 keys, all text. */
export function pdfKeysFrom(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.some((k) => typeof k !== "string"))
    throw new DomainError("invalid", "recordings:errors.pdfKeysRequired");
  if (value.length > MAX_PDFS_PER_REQUEST) throw tooManyPdfs();
  return value as string[];
}

/** SPEC §7 get-pdf-upload-urls: one owned key and short-lived PUT URL per file name (pdfFileNamesFrom). */
export async function createPdfUploadUrls({ userId, filenames }: { userId: string; filenames: string[] }) {
  const storage = getStorage();
  const upload_urls = [];
  for (const name of filenames) {
    const key = makeStorageKey({ ownerId: userId, area: "context", extension: ".pdf" });
    // Kept only to head the extracted text: no path, no control characters (NUL cannot be stored), no bidi tricks.
    await insertContextUpload({ key, ownerId: userId, fileName: sanitiseFileName(name) });
    const { url } = await storage.createUploadUrl({ key, contentType: "application/pdf" });
    upload_urls.push({ upload_url: url, s3_key: key });
  }
  return { upload_urls };
}

/** SPEC §7 extract-pdf-from-s3: text of the user's uploaded PDFs (pdfKeysFrom); other keys are a 404. */
export async function extractUploadedPdfs({ userId, keys }: { userId: string; keys: string[] }) {
  const rows = await findContextUploads({ ownerId: userId, keys });
  if (rows.length !== new Set(keys).size) throw new DomainError("not_found", "recordings:errors.contextFileNotFound");
  const storage = getStorage();
  const files: Array<{ name: string; data: Uint8Array }> = [];
  for (const row of rows) {
    const head = await storage.head(row.storage_key);
    // Too large or never uploaded: handed on as an empty file, which the extractor reports per file.
    if (!head || head.size > PDF_LIMITS.maxBytes) {
      files.push({ name: row.file_name, data: new Uint8Array() });
      continue;
    }
    const stream = await storage.getStream(row.storage_key);
    const chunks: Buffer[] = [];
    if (stream) for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
    files.push({ name: row.file_name, data: new Uint8Array(Buffer.concat(chunks)) });
  }
  const discard = async () => {
    for (const row of rows) await storage.delete(row.storage_key);
    await deleteContextUploads({ ownerId: userId, keys });
  };
  // A refused PDF refuses the request: none of them is read, and none is kept (ADR 0024).
  await scanUploadedFiles({ userId, entityType: "context" }, files).catch(async (error: unknown) => {
    await discard();
    throw error;
  });
  const result = await extractPdfContext(files);
  await discard();
  return { success: result.success, extracted_text: result.extracted_text, pdfs_processed: result.pdfs_processed };
}

let source: PatientRecordSource | undefined;
function patientRecords() {
  source ??= createPatientRecordSource(getConfig().patientRecords);
  return source;
}

/** For tests and configuration changes. */
export function setPatientRecordSource(next: PatientRecordSource | undefined) {
  source = next;
}

/** SPEC §7 extract-mfiles-pdf-context, only when disable_mfiles is 0; rate-limited per user. */
export async function fetchPatientContext({ userId, patientId }: { userId: string; patientId: unknown }) {
  const config = getConfig();
  if (config.flags.disableMfiles) throw new DomainError("forbidden", "recordings:errors.patientRecordsDisabled");
  let id: string;
  try {
    id = assertPatientId(patientId);
  } catch (error) {
    if (error instanceof PatientRecordError)
      throw new DomainError(
        "invalid",
        error.message === "Patient ID is required"
          ? "recordings:errors.patientIdRequired"
          : "recordings:errors.patientIdInvalid",
      );
    throw error;
  }
  const limit = await hitRateLimit({
    bucket: `patient-records:user:${userId}`,
    limit: config.rateLimits.patientRecordsPerHour,
    windowSeconds: 3600,
    userId,
  });
  if (!limit.allowed) throw new DomainError("rate_limited", "recordings:errors.tooManyRequests");
  let documents;
  try {
    documents = await patientRecords().fetchDocuments(id);
  } catch (error) {
    if (error instanceof PatientRecordError) {
      console.warn("[patient-records]", error.code);
      throw new DomainError("unavailable", "recordings:errors.patientRecordsUnavailable");
    }
    throw error;
  }
  const result = await extractPdfContext(documents);
  return { success: result.success, extracted_text: result.extracted_text, pdfs_processed: result.pdfs_processed };
}

export function patientRecordsHealth() {
  return patientRecords().check(3_000);
}
