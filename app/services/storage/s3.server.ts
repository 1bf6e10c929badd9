import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Readable } from "node:stream";

import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";

import {
  DEFAULT_CHECK_TIMEOUT_MS,
  DEFAULT_UPLOAD_URL_SECONDS,
  assertContentType,
  assertOwnerPrefix,
  assertWellFormedKey,
  resolveExpiry,
  signedUrlSeconds,
} from "./keys.server";
import { clientConfig, describeFailure, isNoSuchUpload, isNotFound } from "./s3-client.server";
import type { ObjectStorage, S3StorageConfig, StorageHealth, UploadedPart } from "./types.server";

// Whole-operation caps, retries included, for calls that return no stream.
const METADATA_OPERATION_TIMEOUT_MS = 15_000;
const PUT_OPERATION_TIMEOUT_MS = 120_000;

function toBuffer(chunk: Buffer | Uint8Array | string): Buffer {
  return typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(toBuffer(chunk));
  return Buffer.concat(chunks);
}

export function createS3Storage(config: S3StorageConfig): ObjectStorage {
  if (!config.bucket) throw new Error("S3 storage: bucket is required");
  if (!config.region) throw new Error("S3 storage: region is required");
  const bucket = config.bucket;
  const client = new S3Client(clientConfig(config, config.endpoint));
  // Browsers may reach S3 under another host than the server does (a container name versus localhost);
  // the host is part of the signature, so URLs for browsers are signed by a client that uses their host.
  const presignClient = config.publicEndpoint ? new S3Client(clientConfig(config, config.publicEndpoint)) : client;

  return {
    kind: "s3",

    async createUploadUrl({ key, contentType, expiresInSeconds }) {
      const expiresIn = signedUrlSeconds("upload", { key, contentType, expiresInSeconds });
      const url = await getSignedUrl(
        presignClient,
        new PutObjectCommand({ Bucket: bucket, Key: key, ContentType: contentType }),
        // The presigner leaves Content-Type unsigned by default; signing it stops a browser from storing
        // another type than the server allowed (S3 and MinIO enforce it).
        { expiresIn, signableHeaders: new Set(["content-type"]) },
      );
      return { url, method: "PUT", headers: { "Content-Type": contentType } };
    },

    async createDownloadUrl({ key, expiresInSeconds, contentType }) {
      const expiresIn = signedUrlSeconds("download", { key, contentType, expiresInSeconds });
      return getSignedUrl(
        presignClient,
        new GetObjectCommand({ Bucket: bucket, Key: key, ResponseContentType: contentType }),
        { expiresIn },
      );
    },

    async put({ key, body, contentType }) {
      assertWellFormedKey(key);
      assertContentType(contentType);
      // PutObject needs a known Content-Length, which a stream of unknown length lacks; bodies that go
      // through `put` are server-made and small (transcripts, letters, context), so buffering them is
      // cheaper than a multipart upload. Large browser uploads go through presigned URLs instead.
      const payload = body instanceof Uint8Array ? body : await collect(body);
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: payload, ContentType: contentType }), {
        abortSignal: AbortSignal.timeout(PUT_OPERATION_TIMEOUT_MS),
      });
    },

    async putFile({ key, path: file, contentType }) {
      assertWellFormedKey(key);
      assertContentType(contentType);
      // Streamed from disk with its length: no buffering of a 70 MB recording in memory.
      const { size } = await stat(file);
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: createReadStream(file),
          ContentLength: size,
          ContentType: contentType,
        }),
        { abortSignal: AbortSignal.timeout(PUT_OPERATION_TIMEOUT_MS) },
      );
    },

    async getStream(key, options) {
      assertWellFormedKey(key);
      const range = options?.range;
      try {
        // No whole-call abort signal: it would cut off a long body mid-stream. The request handler's
        // connection, first-byte and idle timeouts bound the call instead.
        const result = await client.send(
          new GetObjectCommand({
            Bucket: bucket,
            Key: key,
            Range: range ? `bytes=${range.start}-${range.end}` : undefined,
          }),
        );
        if (result.Body instanceof Readable) return result.Body;
        throw new Error("S3 storage: GetObject returned no readable body");
      } catch (error) {
        if (isNotFound(error)) return null;
        throw error;
      }
    },

    async head(key) {
      assertWellFormedKey(key);
      try {
        const result = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }), {
          abortSignal: AbortSignal.timeout(METADATA_OPERATION_TIMEOUT_MS),
        });
        return { size: result.ContentLength ?? 0, contentType: result.ContentType, etag: result.ETag };
      } catch (error) {
        if (isNotFound(error)) return null;
        throw error;
      }
    },

    async delete(key) {
      assertWellFormedKey(key);
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }), {
        abortSignal: AbortSignal.timeout(METADATA_OPERATION_TIMEOUT_MS),
      });
    },

    async list(prefix) {
      assertOwnerPrefix(prefix);
      const keys: string[] = [];
      // Pages follow on from the last key (StartAfter; S3 lists in key order) rather than a continuation token,
      // which every S3-compatible server answers alike.
      for (let after: string | undefined, more = true; more;) {
        const page = await client.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, StartAfter: after }),
          {
            abortSignal: AbortSignal.timeout(METADATA_OPERATION_TIMEOUT_MS),
          },
        );
        const found = (page.Contents ?? []).flatMap((object) => (object.Key ? [object.Key] : []));
        keys.push(...found);
        after = found.at(-1);
        more = Boolean(page.IsTruncated && after);
      }
      return keys;
    },

    async createMultipartUpload({ key, contentType }) {
      assertWellFormedKey(key);
      assertContentType(contentType);
      const result = await client.send(
        new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: contentType }),
        { abortSignal: AbortSignal.timeout(METADATA_OPERATION_TIMEOUT_MS) },
      );
      if (!result.UploadId) throw new Error("S3 storage: CreateMultipartUpload returned no upload id");
      return { uploadId: result.UploadId };
    },

    async createPartUploadUrl({ key, uploadId, partNumber, expiresInSeconds }) {
      assertWellFormedKey(key);
      const expiresIn = resolveExpiry(expiresInSeconds, DEFAULT_UPLOAD_URL_SECONDS);
      const url = await getSignedUrl(
        presignClient,
        new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: partNumber }),
        { expiresIn },
      );
      return { url, method: "PUT" };
    },

    async listParts({ key, uploadId }) {
      assertWellFormedKey(key);
      const parts: UploadedPart[] = [];
      let marker: string | undefined;
      try {
        for (;;) {
          const page = await client.send(
            new ListPartsCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumberMarker: marker }),
            { abortSignal: AbortSignal.timeout(METADATA_OPERATION_TIMEOUT_MS) },
          );
          for (const part of page.Parts ?? []) {
            if (part.PartNumber && part.ETag) {
              parts.push({ partNumber: part.PartNumber, size: part.Size ?? 0, etag: part.ETag });
            }
          }
          if (!page.IsTruncated || !page.NextPartNumberMarker) break;
          marker = page.NextPartNumberMarker;
        }
      } catch (error) {
        if (isNoSuchUpload(error) || isNotFound(error)) return null;
        throw error;
      }
      return parts.sort((a, b) => a.partNumber - b.partNumber);
    },

    async completeMultipartUpload({ key, uploadId, parts }) {
      assertWellFormedKey(key);
      await client.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) },
        }),
        // S3 may take a while to join large parts.
        { abortSignal: AbortSignal.timeout(PUT_OPERATION_TIMEOUT_MS) },
      );
    },

    async abortMultipartUpload({ key, uploadId }) {
      assertWellFormedKey(key);
      try {
        await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }), {
          abortSignal: AbortSignal.timeout(METADATA_OPERATION_TIMEOUT_MS),
        });
      } catch (error) {
        if (!isNoSuchUpload(error) && !isNotFound(error)) throw error;
      }
    },

    async check(timeoutMs = DEFAULT_CHECK_TIMEOUT_MS): Promise<StorageHealth> {
      const controller = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      // The race guarantees the answer arrives in time even while the SDK sleeps between retries, where an
      // abort signal is only noticed at the next attempt.
      const timedOut = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => {
          controller.abort();
          resolve("timeout");
        }, timeoutMs);
      });
      try {
        const outcome = await Promise.race([
          client.send(new HeadBucketCommand({ Bucket: bucket }), { abortSignal: controller.signal }),
          timedOut,
        ]);
        if (outcome === "timeout") return { status: "error", detail: `No answer within ${timeoutMs} ms` };
        return { status: "healthy" };
      } catch (error) {
        return { status: "error", detail: describeFailure(error, timeoutMs) };
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
