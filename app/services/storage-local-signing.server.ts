import { createHmac, timingSafeEqual } from "node:crypto";

// Signed URLs of the local object store: what the store hands out in place of S3 presigned URLs, and the check
// the storage route runs before it serves or accepts any bytes.

export type LocalSignatureResult = { ok: true; contentType: string | undefined } | { ok: false; detail: string };

export const LOCAL_STORAGE_ROUTE_PREFIX = "/resources/storage/";
export const INVALID_SIGNATURE_DETAIL = "Invalid or expired signature";

function stringToSign(method: "GET" | "PUT", key: string, exp: string, contentType: string): string {
  // Newline-separated so no field can shift into another (keys and content types never contain "\n").
  return `${method}\n${key}\n${exp}\n${contentType}`;
}

function sign(secret: string, value: string): string {
  return createHmac("sha256", secret).update(value).digest("base64url");
}

/** A URL under `baseUrl` that `verifyLocalSignature` accepts for `method` and `key` until it expires. */
export function createLocalSignedUrl(args: {
  secret: string;
  baseUrl: string;
  method: "GET" | "PUT";
  key: string;
  expiresInSeconds: number;
  contentType: string;
}): string {
  const { method, key, contentType } = args;
  const exp = String(Math.floor(Date.now() / 1000) + args.expiresInSeconds);
  const query = new URLSearchParams({ m: method, exp });
  if (contentType !== "") query.set("ct", contentType);
  query.set("sig", sign(args.secret, stringToSign(method, key, exp, contentType)));
  // Key segments use a URL-safe alphabet, so the path needs no escaping and matches the route's splat.
  return `${args.baseUrl}${LOCAL_STORAGE_ROUTE_PREFIX}${key}?${query.toString()}`;
}

/**
 * Verifies `m`, `exp`, `ct` and `sig` of a local signed URL. The signature is checked before the expiry so
 * "expired" is only ever said about a URL this server issued.
 */
export function verifyLocalSignature(args: {
  secret: string;
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
  if (m !== args.method || exp === null || sig === null || !/^\d{1,12}$/.test(exp)) return invalid;

  const expected = Buffer.from(sign(args.secret, stringToSign(args.method, args.key, exp, ct)));
  const given = Buffer.from(sig);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return invalid;

  const now = args.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Number(exp) < now) return { ok: false, detail: "Signed URL has expired" };
  return { ok: true, contentType: ct === "" ? undefined : ct };
}
