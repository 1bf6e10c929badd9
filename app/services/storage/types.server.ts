import type { LocalSignatureResult } from "./local-signing.server";
// The storage contract both implementations (local folder, S3) fulfil. Kept apart from storage/storage.server.ts so
// the implementations never import the module that picks between them.

export type StorageHealth = { status: "healthy" | "error" | "not_configured"; detail?: string };

/** Inclusive byte range, as in HTTP `Range: bytes=start-end`. */
export type ByteRange = { start: number; end: number };

export interface ObjectStorage {
  readonly kind: "local" | "s3";
  /** Short-lived URL the browser PUTs the bytes to. */
  createUploadUrl(args: {
    key: string;
    contentType: string;
    expiresInSeconds?: number;
  }): Promise<{ url: string; method: "PUT"; headers: Record<string, string> }>;
  /**
   * Short-lived URL to GET the object (supports HTTP Range for the local store; S3 does natively).
   * `contentType` overrides the stored type in the response.
   */
  createDownloadUrl(args: { key: string; expiresInSeconds?: number; contentType?: string }): Promise<string>;
  put(args: { key: string; body: Buffer | Uint8Array | NodeJS.ReadableStream; contentType: string }): Promise<void>;
  /** A file on local disk, streamed with its known length (large uploads that came through the app). */
  putFile(args: { key: string; path: string; contentType: string }): Promise<void>;
  /** `range` is clamped by neither implementation: callers check it against `head().size` first. */
  getStream(key: string, options?: { range?: ByteRange }): Promise<NodeJS.ReadableStream | null>;
  head(key: string): Promise<{ size: number; contentType?: string; etag?: string } | null>;
  /** Idempotent: deleting a missing object succeeds. */
  delete(key: string): Promise<void>;
  /** Every object key under an owner prefix (`ownerPrefix(area, ownerId)`), in no particular order. */
  list(prefix: string): Promise<string[]>;
  check(timeoutMs?: number): Promise<StorageHealth>;

  // Multipart uploads (S3's protocol; the local store follows it): a large file goes up in parts that can
  // each be retried, and an interrupted upload resumes from the parts the store already holds.
  createMultipartUpload(args: { key: string; contentType: string }): Promise<{ uploadId: string }>;
  /** Short-lived URL the browser PUTs one part to (no Content-Type needed). */
  createPartUploadUrl(args: {
    key: string;
    uploadId: string;
    partNumber: number;
    expiresInSeconds?: number;
  }): Promise<{ url: string; method: "PUT" }>;
  /** The parts the store holds, by part number; null when the upload does not exist (completed or aborted). */
  listParts(args: { key: string; uploadId: string }): Promise<UploadedPart[] | null>;
  /** Joins the given parts, in order, into the object under `key`. */
  completeMultipartUpload(args: { key: string; uploadId: string; parts: UploadedPart[] }): Promise<void>;
  /** Idempotent: aborting a missing upload succeeds. */
  abortMultipartUpload(args: { key: string; uploadId: string }): Promise<void>;
}

export type UploadedPart = { partNumber: number; size: number; etag: string };

/** S3's part numbers and smallest part (every part but the last); the local store enforces the same. */
export const MAX_PART_NUMBER = 10_000;
export const MIN_PART_BYTES = 5 * 1024 * 1024;

export type StorageConfig =
  | {
      kind: "local";
      directory: string;
      publicBaseUrl: string;
      /** A rotation list: the first signs new URLs, every one is accepted (config/secrets.server.ts). */
      signingSecrets: readonly [string, ...string[]];
      maxUploadBytes: number;
    }
  | {
      kind: "s3";
      bucket: string;
      region: string;
      endpoint?: string;
      accessKeyId?: string;
      secretAccessKey?: string;
      forcePathStyle?: boolean;
      publicEndpoint?: string;
    };

// The two drivers' own shapes, apart from their implementations so that their pieces share them without cycles.

export type S3StorageConfig = Extract<StorageConfig, { kind: "s3" }>;

export type LocalStorageConfig = Extract<StorageConfig, { kind: "local" }>;

/** Everything `put` accepts, plus the web stream a Remix action hands over as `request.body`. */
export type LocalUploadBody = Buffer | Uint8Array | NodeJS.ReadableStream | ReadableStream<Uint8Array>;

export type LocalWriteResult = { ok: true; size: number; etag: string } | { ok: false; reason: "too_large" };
export type LocalPartWriteResult = LocalWriteResult | { ok: false; reason: "no_such_upload" };

export interface LocalObjectStorage extends ObjectStorage {
  readonly kind: "local";
  readonly maxUploadBytes: number;
  /** Checks a signed URL's query against the HTTP method and key it was used with. */
  verifyRequest(args: { method: "GET" | "PUT"; key: string; searchParams: URLSearchParams }): LocalSignatureResult;
  /** Streams `body` to a temp file and renames it into place; stops once more than `maxBytes` arrived. */
  write(args: {
    key: string;
    contentType: string;
    body: LocalUploadBody;
    maxBytes?: number;
  }): Promise<LocalWriteResult>;
  /** One part of a multipart upload; a part sent again replaces the earlier one, as in S3. */
  writePart(args: {
    key: string;
    uploadId: string;
    partNumber: number;
    body: LocalUploadBody;
    maxBytes?: number;
  }): Promise<LocalPartWriteResult>;
}
