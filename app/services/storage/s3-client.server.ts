import { NoSuchUpload, S3ServiceException, type S3ClientConfig } from "@aws-sdk/client-s3";

import type { S3StorageConfig } from "./types.server";

// The S3 client as storage/s3.server.ts uses it: its configuration (time-outs, path style, checksums,
// credentials) and how its errors read.

// Time to connect, time to the response headers, and idle time while a body streams. A stalled S3 never
// holds a request or a job for longer than these.
const CONNECTION_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 60_000;
const SOCKET_IDLE_TIMEOUT_MS = 30_000;
export function clientConfig(config: S3StorageConfig, endpoint: string | undefined): S3ClientConfig {
  const hasKeyId = Boolean(config.accessKeyId);
  const hasSecret = Boolean(config.secretAccessKey);
  if (hasKeyId !== hasSecret) {
    throw new Error("S3 storage: accessKeyId and secretAccessKey must be given together");
  }
  return {
    region: config.region,
    endpoint,
    // S3-compatible servers (MinIO, s3rver, Ceph) rarely have wildcard DNS for virtual-hosted buckets.
    forcePathStyle: config.forcePathStyle ?? Boolean(config.endpoint),
    // Without these the SDK adds CRC32 checksums to presigned PUTs that a browser cannot compute, and
    // validates checksums some S3-compatible servers do not send.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    // Without explicit credentials the SDK's default chain (environment, instance role) applies.
    credentials:
      config.accessKeyId && config.secretAccessKey
        ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey }
        : undefined,
    requestHandler: {
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      socketTimeout: SOCKET_IDLE_TIMEOUT_MS,
      // The default only logs a warning when requestTimeout passes.
      throwOnRequestTimeout: true,
    },
    maxAttempts: 3,
  };
}

export function isNotFound(error: unknown): boolean {
  if (error instanceof S3ServiceException) {
    return error.$metadata.httpStatusCode === 404 || error.name === "NotFound" || error.name === "NoSuchKey";
  }
  return false;
}

export function isNoSuchUpload(error: unknown): boolean {
  return error instanceof NoSuchUpload || (error instanceof S3ServiceException && error.name === "NoSuchUpload");
}

/** A short, secret-free description of why a call failed, fit for a health endpoint. */
export function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError")) {
    return `No answer within ${timeoutMs} ms`;
  }
  if (error instanceof S3ServiceException) {
    const status = error.$metadata.httpStatusCode;
    if (status === 404) return "Bucket not found";
    if (status === 403) return "Access denied to bucket";
    return `Bucket check failed with status ${status ?? "unknown"}`;
  }
  if (error instanceof Error && "code" in error && typeof error.code === "string") {
    return `Cannot reach storage endpoint (${error.code})`;
  }
  return "Cannot reach storage endpoint";
}
