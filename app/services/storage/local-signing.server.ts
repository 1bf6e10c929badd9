import { createHmac, timingSafeEqual } from "node:crypto";

// Signed URLs of the local object store: what the store hands out in place of S3 presigned URLs, and the check
// the storage route runs before it serves or accepts any bytes.

/** A part of a multipart upload: signed into the URL, so a URL for one part cannot write another. */
export type LocalPartTarget = { uploadId: string; partNumber: number };

export type LocalSignatureResult =
  { ok: true; contentType: string | undefined; part: LocalPartTarget | undefined } | { ok: false; detail: string };

export const LOCAL_STORAGE_ROUTE_PREFIX = "/resources/storage/";
export const INVALID_SIGNATURE_DETAIL = "Invalid or expired signature";

function stringToSign(
  method: "GET" | "PUT",
  key: string,
  exp: string,
  contentType: string,
  part: LocalPartTarget | undefined,
): string {
  // Newline-separated so no field can shift into another (keys and content types never contain "\n").
  const base = `${method}\n${key}\n${exp}\n${contentType}`;
  return part ? `${base}\npart\n${part.uploadId}\n${part.partNumber}` : base;
}

const UPLOAD_ID_PATTERN = /^[A-Za-z0-9-]{1,64}$/;

function partFrom(searchParams: URLSearchParams): LocalPartTarget | undefined | "malformed" {
  const uploadId = searchParams.get("uploadId");
  const partNumber = searchParams.get("partNumber");
  if (uploadId === null && partNumber === null) return undefined;
  if (uploadId === null || partNumber === null) return "malformed";
  if (!UPLOAD_ID_PATTERN.test(uploadId) || !/^[1-9]\d{0,4}$/.test(partNumber)) return "malformed";
  return { uploadId, partNumber: Number(partNumber) };
}

function sign(secret: string, value: string): string {
  return createHmac("sha256", secret).update(value).digest("base64url");
}

/**
 * A URL under `baseUrl` that `verifyLocalSignature` accepts for `method` and `key` until it expires, as long as
 * `secret` stays in the store's rotation list. The store signs with the list's first secret.
 */
export function createLocalSignedUrl(args: {
  secret: string;
  baseUrl: string;
  method: "GET" | "PUT";
  key: string;
  expiresInSeconds: number;
  contentType: string;
  part?: LocalPartTarget;
}): string {
  const { method, key, contentType, part } = args;
  const exp = String(Math.floor(Date.now() / 1000) + args.expiresInSeconds);
  const query = new URLSearchParams({ m: method, exp });
  if (contentType !== "") query.set("ct", contentType);
  if (part) {
    query.set("uploadId", part.uploadId);
    query.set("partNumber", String(part.partNumber));
  }
  query.set("sig", sign(args.secret, stringToSign(method, key, exp, contentType, part)));
  // Key segments use a URL-safe alphabet, so the path needs no escaping and matches the route's splat.
  return `${args.baseUrl}${LOCAL_STORAGE_ROUTE_PREFIX}${key}?${query.toString()}`;
}

/**
 * Verifies `m`, `exp`, `ct` and `sig` of a local signed URL against every secret of the rotation list (ASVS
 * 11.2.2), so URLs signed before a new secret was put first keep working until they expire. The signature is
 * checked before the expiry so "expired" is only ever said about a URL this server issued.
 */
export function verifyLocalSignature(args: {
  secrets: readonly string[];
  method: "GET" | "PUT";
  key: string;
  searchParams: URLSearchParams;
  nowSeconds?: number;
}): LocalSignatureResult {
  const invalid = { ok: false, detail: INVALID_SIGNATURE_DETAIL } as const;
  const { searchParams } = args;
  const m = searchParams.get("m");
  const exp = searchParams.get("exp");
  const sig = searchParams.get("sig");
  const ct = searchParams.get("ct") ?? "";
  const part = partFrom(searchParams);
  if (m !== args.method || exp === null || sig === null || !/^\d{1,12}$/.test(exp) || part === "malformed") {
    return invalid;
  }

  const signed = stringToSign(args.method, args.key, exp, ct, part);
  const given = Buffer.from(sig);
  const matches = (secret: string) => {
    const expected = Buffer.from(sign(secret, signed));
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  if (!args.secrets.some(matches)) return invalid;

  const now = args.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Number(exp) < now) return { ok: false, detail: "Signed URL has expired" };
  return { ok: true, contentType: ct === "" ? undefined : ct, part };
}
