import { deleteRecordingRow, updateRecording } from "~/models/recording.server";
import { DomainError } from "../web/domain-error.server";
import { EMPTY_FILE_MESSAGE, MAX_AUDIO_BYTES, tooLargeMessage } from "../media/messages.server";
import { audioRejected, insertSlot, planSlot, requireRecording, type SlotRequest } from "./recordings.server";
import { getStorage } from "../storage/storage.server";
import { MIN_PART_BYTES, type UploadedPart } from "../storage/types.server";

// Resumable uploads (issue 4, ADR 0010): a file above MULTIPART_THRESHOLD_BYTES goes to object storage in
// parts of PART_BYTES, each PUT straight to the store through its own short-lived URL and retried on its
// own; after an interruption the client asks which parts the store holds and sends only the others. The
// part size and count are fixed by the server when the upload starts. Completion joins the parts; the
// bytes are then checked exactly like a single-PUT upload (update-file-metadata → confirmUpload).

/** S3's smallest part, which keeps a part under a minute even at 1 Mbit/s (the SPEC's 60 s per attempt). */
export const PART_BYTES = MIN_PART_BYTES;
/** Files above this size are uploaded in parts by the browser. */
export const MULTIPART_THRESHOLD_BYTES = 8 * 1024 * 1024;
/** Part URLs a client may ask for at once. */
export const MAX_PART_URLS_PER_CALL = 20;

async function requireOpenUpload(userId: string, key: string) {
  return openUploadOf(await requireRecording(userId, key));
}

function openUploadOf(recording: Awaited<ReturnType<typeof requireRecording>>) {
  const { multipart_upload_id: uploadId, multipart_part_size: partSize, multipart_part_count: partCount } = recording;
  if (recording.upload_status !== "awaiting_upload" || !uploadId || !partSize || !partCount) {
    throw new DomainError("conflict", "recordings:errors.noOpenUpload");
  }
  return { recording, uploadId, partSize, partCount };
}

function expectedSize(partNumber: number, partSize: number, partCount: number, fileSize: number): number {
  return partNumber < partCount ? partSize : fileSize - partSize * (partCount - 1);
}

/** Starts a slot with an open multipart upload; the client then asks for part URLs. */
/** The door's reading of upload-parts/start's `file_size`: a whole number of bytes, never text read as one. */
export function fileSizeFrom(value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)
    throw new DomainError("invalid", "recordings:errors.fileSizeRequired");
  return value;
}

export async function startMultipartUpload(args: SlotRequest & { fileSize: number }) {
  const size = args.fileSize;
  if (size === 0) throw audioRejected(EMPTY_FILE_MESSAGE);
  if (size > MAX_AUDIO_BYTES) throw audioRejected(tooLargeMessage(size));
  const plan = planSlot(args);
  const partCount = Math.ceil(size / PART_BYTES);
  const { uploadId } = await getStorage().createMultipartUpload({ key: plan.key, contentType: plan.type });
  const { id, contextUploaded } = await insertSlot(args.userId, plan, {
    uploadId,
    partSize: PART_BYTES,
    partCount,
    declaredSize: size,
  });
  return {
    key: plan.key,
    record_id: id,
    context_uploaded: contextUploaded,
    upload_id: uploadId,
    part_size: PART_BYTES,
    part_count: partCount,
  };
}

/** Short-lived PUT URLs for the named parts of the caller's open upload. */
export async function createPartUrls(args: { userId: string; key: string; partNumbers: unknown }) {
  const { recording, uploadId, partCount } = await requireOpenUpload(args.userId, args.key);
  const numbers = args.partNumbers;
  if (
    !Array.isArray(numbers) ||
    numbers.length === 0 ||
    numbers.length > MAX_PART_URLS_PER_CALL ||
    !numbers.every((n) => Number.isInteger(n) && n >= 1 && n <= partCount)
  ) {
    throw new DomainError("invalid", "recordings:errors.invalidPartNumbers", [], {
      max: String(MAX_PART_URLS_PER_CALL),
    });
  }
  const storage = getStorage();
  const parts = [];
  for (const partNumber of new Set(numbers as number[])) {
    const { url } = await storage.createPartUploadUrl({ key: recording.storage_key, uploadId, partNumber });
    parts.push({ part_number: partNumber, url });
  }
  return { parts };
}

/** The parts the store holds whole (right size for their place); a resuming client sends the rest. */
async function heldParts(key: string, uploadId: string, partSize: number, partCount: number, fileSize: number) {
  const parts = await getStorage().listParts({ key, uploadId });
  if (!parts) return null;
  return parts.filter(
    (p) => p.partNumber <= partCount && p.size === expectedSize(p.partNumber, partSize, partCount, fileSize),
  );
}

export async function uploadStatus(args: { userId: string; key: string }) {
  const { recording, uploadId, partSize, partCount } = await requireOpenUpload(args.userId, args.key);
  const fileSize = Number(recording.declared_size);
  const parts = await heldParts(recording.storage_key, uploadId, partSize, partCount, fileSize);
  if (!parts) throw new DomainError("conflict", "recordings:errors.noOpenUpload");
  return {
    upload_id: uploadId,
    part_size: partSize,
    part_count: partCount,
    file_size: fileSize,
    parts: parts.map((p) => ({ part_number: p.partNumber, size: p.size })),
  };
}

/**
 * Joins the parts once every one of them is held. Idempotent: a retried call after a completion whose
 * answer was lost succeeds again. Missing parts are named, so the client can send them and call again.
 */
export async function completeMultipartUpload(args: { userId: string; key: string }) {
  const recording = await requireRecording(args.userId, args.key);
  const storage = getStorage();
  if (!recording.multipart_upload_id && recording.upload_status === "awaiting_upload") {
    if (await storage.head(recording.storage_key)) return { success: true as const, key: recording.storage_key };
  }
  const { uploadId, partSize, partCount } = openUploadOf(recording);
  const fileSize = Number(recording.declared_size);
  const parts = await heldParts(recording.storage_key, uploadId, partSize, partCount, fileSize);
  if (!parts) throw new DomainError("conflict", "recordings:errors.noOpenUpload");
  const held = new Set(parts.map((p) => p.partNumber));
  const missing = Array.from({ length: partCount }, (_, i) => i + 1).filter((n) => !held.has(n));
  if (missing.length > 0) {
    throw new DomainError("invalid", "recordings:errors.partsMissing", [], { parts: missing.join(", ") });
  }
  const ordered: UploadedPart[] = [...parts].sort((a, b) => a.partNumber - b.partNumber);
  await storage.completeMultipartUpload({ key: recording.storage_key, uploadId, parts: ordered });
  await updateRecording({
    ownerId: args.userId,
    id: recording.id,
    set: { multipart_upload_id: null, multipart_part_size: null, multipart_part_count: null },
  });
  return { success: true as const, key: recording.storage_key };
}

/** The client gives up: the parts and the slot go. */
export async function abortMultipartUpload(args: { userId: string; key: string }) {
  const { recording, uploadId } = await requireOpenUpload(args.userId, args.key);
  await getStorage().abortMultipartUpload({ key: recording.storage_key, uploadId });
  await deleteRecordingRow({ ownerId: args.userId, id: recording.id });
  return { success: true as const };
}
