// The test S3 server: s3rver behind a front server that adds ListParts and
// AbortMultipartUpload (which s3rver lacks) and streams everything else through.
import { createHash, randomUUID } from "node:crypto";

import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { startS3rver } from "./s3rver";

const MiB = 1024 * 1024;

function bytesOf(length: number, seed = 5): Buffer {
  const buffer = Buffer.alloc(length);
  for (let i = 0; i < length; i++) buffer[i] = (i * 17 + seed) % 256;
  return buffer;
}

function md5Etag(bytes: Uint8Array): string {
  return `"${createHash("md5").update(bytes).digest("hex")}"`;
}

function audioKey(): string {
  return `audio/${randomUUID()}/20261121-120000-${randomUUID()}.wav`;
}

describe("startS3rver", () => {
  let s3: Awaited<ReturnType<typeof startS3rver>>;
  let client: S3Client;

  beforeAll(async () => {
    s3 = await startS3rver();
    client = new S3Client({
      region: "us-east-1",
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    });
  });

  afterAll(async () => {
    client?.destroy();
    await s3?.close();
  });

  async function uploadTwoParts(key: string) {
    const { UploadId } = await client.send(
      new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: key, ContentType: "audio/wav" }),
    );
    expect(UploadId).toMatch(/^[0-9a-f]{32}$/);
    const first = bytesOf(5 * MiB, 1);
    const second = bytesOf(1234, 2);
    const one = await client.send(
      new UploadPartCommand({ Bucket: s3.bucket, Key: key, UploadId, PartNumber: 1, Body: first }),
    );
    const two = await client.send(
      new UploadPartCommand({ Bucket: s3.bucket, Key: key, UploadId, PartNumber: 2, Body: second }),
    );
    expect(one.ETag).toBe(md5Etag(first));
    expect(two.ETag).toBe(md5Etag(second));
    return { uploadId: UploadId!, first, second, etags: [one.ETag!, two.ETag!] };
  }

  it("serves on a front port of its own", () => {
    expect(s3.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(s3.bucket).toBe("skribent-test");
  });

  it("passes a plain PutObject and GetObject through", async () => {
    const key = audioKey();
    const bytes = bytesOf(70_000);
    const put = await client.send(
      new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: bytes, ContentType: "audio/wav" }),
    );
    expect(put.ETag).toBe(md5Etag(bytes));
    const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
    expect(got.ContentType).toBe("audio/wav");
    expect(got.ContentLength).toBe(70_000);
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(bytes)).toBe(true);
  });

  it("passes a large body through in both directions", async () => {
    const key = audioKey();
    const bytes = bytesOf(24 * MiB, 9);
    await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: bytes }));
    const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(bytes)).toBe(true);
  });

  it("passes presigned PUT and ranged GET requests through", async () => {
    const key = audioKey();
    const bytes = bytesOf(3 * MiB, 7);
    const putUrl = await getSignedUrl(
      client,
      new PutObjectCommand({ Bucket: s3.bucket, Key: key, ContentType: "audio/wav" }),
      { expiresIn: 300 },
    );
    expect(new URL(putUrl).origin).toBe(s3.endpoint);
    const put = await fetch(putUrl, {
      method: "PUT",
      headers: { "Content-Type": "audio/wav" },
      body: new Uint8Array(bytes),
    });
    expect(put.status).toBe(200);
    expect(put.headers.get("ETag")).toBe(md5Etag(bytes));

    const getUrl = await getSignedUrl(client, new GetObjectCommand({ Bucket: s3.bucket, Key: key }), {
      expiresIn: 300,
    });
    const ranged = await fetch(getUrl, { headers: { Range: "bytes=10-19" } });
    expect(ranged.status).toBe(206);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(bytes.subarray(10, 20))).toBe(true);
  });

  it("lists the uploaded parts, then aborts the upload", async () => {
    const key = audioKey();
    const { uploadId, first, second } = await uploadTwoParts(key);

    const listed = await client.send(new ListPartsCommand({ Bucket: s3.bucket, Key: key, UploadId: uploadId }));
    expect(listed).toMatchObject({ Bucket: s3.bucket, Key: key, UploadId: uploadId, MaxParts: 1000 });
    expect(listed.IsTruncated).toBe(false);
    expect(listed.Parts?.map(({ PartNumber, Size, ETag }) => ({ PartNumber, Size, ETag }))).toEqual([
      { PartNumber: 1, Size: 5 * MiB, ETag: md5Etag(first) },
      { PartNumber: 2, Size: 1234, ETag: md5Etag(second) },
    ]);
    expect(listed.Parts?.[0].LastModified).toBeInstanceOf(Date);

    await client.send(new AbortMultipartUploadCommand({ Bucket: s3.bucket, Key: key, UploadId: uploadId }));
    await expect(
      client.send(new ListPartsCommand({ Bucket: s3.bucket, Key: key, UploadId: uploadId })),
    ).rejects.toMatchObject({ name: "NoSuchUpload", $metadata: { httpStatusCode: 404 } });
    await expect(
      client.send(new AbortMultipartUploadCommand({ Bucket: s3.bucket, Key: key, UploadId: uploadId })),
    ).rejects.toMatchObject({ name: "NoSuchUpload", $metadata: { httpStatusCode: 404 } });
  });

  it("pages ListParts with max-parts and part-number-marker", async () => {
    const key = audioKey();
    const { uploadId, second } = await uploadTwoParts(key);

    const firstPage = await client.send(
      new ListPartsCommand({ Bucket: s3.bucket, Key: key, UploadId: uploadId, MaxParts: 1 }),
    );
    expect(firstPage.Parts?.map((part) => part.PartNumber)).toEqual([1]);
    expect(firstPage).toMatchObject({ IsTruncated: true, NextPartNumberMarker: "1", MaxParts: 1 });

    const secondPage = await client.send(
      new ListPartsCommand({
        Bucket: s3.bucket,
        Key: key,
        UploadId: uploadId,
        MaxParts: 1,
        PartNumberMarker: firstPage.NextPartNumberMarker,
      }),
    );
    expect(secondPage.Parts).toEqual([expect.objectContaining({ PartNumber: 2, Size: 1234, ETag: md5Etag(second) })]);
    expect(secondPage).toMatchObject({ IsTruncated: false, PartNumberMarker: "1", NextPartNumberMarker: "2" });

    await client.send(new AbortMultipartUploadCommand({ Bucket: s3.bucket, Key: key, UploadId: uploadId }));
  });

  it("knows an upload only under its own key", async () => {
    const key = audioKey();
    const { uploadId } = await uploadTwoParts(key);
    const other = audioKey();
    await expect(
      client.send(new ListPartsCommand({ Bucket: s3.bucket, Key: other, UploadId: uploadId })),
    ).rejects.toMatchObject({ name: "NoSuchUpload" });
    await expect(
      client.send(new AbortMultipartUploadCommand({ Bucket: s3.bucket, Key: other, UploadId: uploadId })),
    ).rejects.toMatchObject({ name: "NoSuchUpload" });
    await expect(
      client.send(new ListPartsCommand({ Bucket: s3.bucket, Key: key, UploadId: "0".repeat(32) })),
    ).rejects.toMatchObject({ name: "NoSuchUpload", UploadId: "0".repeat(32) });
    // Still there under its own key.
    const listed = await client.send(new ListPartsCommand({ Bucket: s3.bucket, Key: key, UploadId: uploadId }));
    expect(listed.Parts).toHaveLength(2);
    await client.send(new AbortMultipartUploadCommand({ Bucket: s3.bucket, Key: key, UploadId: uploadId }));
  });

  it("completes a multipart upload into an object with the concatenated bytes", async () => {
    const key = audioKey();
    const { uploadId, first, second, etags } = await uploadTwoParts(key);
    await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: s3.bucket,
        Key: key,
        UploadId: uploadId,
        MultipartUpload: {
          Parts: [
            { PartNumber: 1, ETag: etags[0] },
            { PartNumber: 2, ETag: etags[1] },
          ],
        },
      }),
    );
    const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
    expect(got.ContentType).toBe("audio/wav");
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(Buffer.concat([first, second]))).toBe(true);
    // A completed upload is gone.
    await expect(
      client.send(new ListPartsCommand({ Bucket: s3.bucket, Key: key, UploadId: uploadId })),
    ).rejects.toMatchObject({ name: "NoSuchUpload" });
  });
});
