// The storage contract both implementations (local folder, S3) fulfil. Kept apart from storage.server.ts so
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
  check(timeoutMs?: number): Promise<StorageHealth>;
}

export type StorageConfig =
  | { kind: "local"; directory: string; publicBaseUrl: string; signingSecret: string; maxUploadBytes: number }
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
