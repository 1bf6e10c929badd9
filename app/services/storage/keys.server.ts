import { randomUUID } from "node:crypto";

// The key and URL rules every implementation enforces. Kept apart from storage/storage.server.ts so the
// implementations never import the module that picks between them.

export const STORAGE_AREAS = ["audio", "transcripts", "arztbriefe", "context"] as const;
export type StorageArea = (typeof STORAGE_AREAS)[number];

const OWNER_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const EXTENSION_PATTERN = /^\.[a-z0-9]{1,8}$/;
// A conservative alphabet keeps keys identical in URLs, file paths and S3, so no layer has to escape them.
const KEY_SEGMENT_PATTERN = /^[A-Za-z0-9._-]+$/;
// S3's own limit on key length.
const MAX_KEY_LENGTH = 1024;
// S3 refuses presigned URLs that live longer than seven days; the local store follows the same limit.
export const MAX_URL_EXPIRY_SECONDS = 7 * 24 * 60 * 60;
// type "/" subtype, optional parameters; nothing that could split a header or a signed string.
const CONTENT_TYPE_PATTERN =
  /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(\s*;\s*[A-Za-z0-9_-]+=("[A-Za-z0-9 ._-]*"|[A-Za-z0-9._-]+))*$/;

/** Thrown for any key that is malformed or not owned by the caller. Routes map it to 404. */
export class InvalidStorageKeyError extends Error {
  constructor(reason: string) {
    // The key itself stays out of the message: messages end up in logs.
    super(`Invalid storage key: ${reason}`);
    this.name = "InvalidStorageKeyError";
  }
}

function isStorageArea(value: string | undefined): value is StorageArea {
  return (STORAGE_AREAS as readonly (string | undefined)[]).includes(value);
}

function formatUtcTimestamp(date: Date): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return (
    `${pad(date.getUTCFullYear(), 4)}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}` +
    `-${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}`
  );
}

/**
 * `${area}/${ownerId}/${yyyymmdd-hhmmss}-${uuid}${extension}` in UTC. SPEC numbers recordings by the
 * 8-digit-dash-6-digit timestamp inside the key, so its position and shape are part of the contract.
 */
export function makeStorageKey(args: { ownerId: string; area: StorageArea; extension?: string; now?: Date }): string {
  if (!OWNER_ID_PATTERN.test(args.ownerId)) throw new InvalidStorageKeyError("bad owner id");
  if (!isStorageArea(args.area)) throw new InvalidStorageKeyError("unknown area");
  if (args.extension !== undefined && !EXTENSION_PATTERN.test(args.extension)) {
    throw new InvalidStorageKeyError("bad extension");
  }
  const now = args.now ?? new Date();
  if (Number.isNaN(now.getTime())) throw new InvalidStorageKeyError("bad timestamp");
  return `${args.area}/${args.ownerId}/${formatUtcTimestamp(now)}-${randomUUID()}${args.extension ?? ""}`;
}

/**
 * The rules every implementation enforces before touching a key, so a key can never name a path outside
 * the store even if a caller forgot `assertKeyOwnedBy`. Returns the owner segment.
 */
export function assertWellFormedKey(key: string): string {
  if (typeof key !== "string" || key.length === 0) throw new InvalidStorageKeyError("empty");
  if (key.length > MAX_KEY_LENGTH) throw new InvalidStorageKeyError("too long");
  if (key.startsWith("/")) throw new InvalidStorageKeyError("absolute");
  if (key.includes("\\")) throw new InvalidStorageKeyError("backslash");
  if (key.includes("..")) throw new InvalidStorageKeyError("dot segment");
  if (key.includes("//")) throw new InvalidStorageKeyError("empty segment");
  const segments = key.split("/");
  const [area, owner, ...rest] = segments;
  if (!isStorageArea(area)) throw new InvalidStorageKeyError("unknown area");
  if (owner === undefined || !OWNER_ID_PATTERN.test(owner)) throw new InvalidStorageKeyError("bad owner id");
  if (rest.length === 0) throw new InvalidStorageKeyError("no object name");
  for (const segment of rest) {
    if (!KEY_SEGMENT_PATTERN.test(segment) || segment === ".") {
      throw new InvalidStorageKeyError("bad character");
    }
  }
  return owner;
}

/** `${area}/${ownerId}/`: where every object of one owner in one area lives (what `list` takes). */
export function ownerPrefix(area: StorageArea, ownerId: string): string {
  if (!isStorageArea(area)) throw new InvalidStorageKeyError("unknown area");
  if (!OWNER_ID_PATTERN.test(ownerId)) throw new InvalidStorageKeyError("bad owner id");
  return `${area}/${ownerId}/`;
}

/** Throws unless `prefix` is exactly an owner prefix: listing never reaches across owners or areas. */
export function assertOwnerPrefix(prefix: string): void {
  const [area, owner, rest] = typeof prefix === "string" ? prefix.split("/") : [];
  if (!isStorageArea(area) || owner === undefined || rest !== "" || prefix !== ownerPrefix(area, owner)) {
    throw new InvalidStorageKeyError("bad prefix");
  }
}

/** Throws unless `key` is a well-formed key under `${area}/${ownerId}/` for a known area. */
export function assertKeyOwnedBy(key: string, ownerId: string): void {
  if (!OWNER_ID_PATTERN.test(ownerId)) throw new InvalidStorageKeyError("bad owner id");
  const owner = assertWellFormedKey(key);
  if (owner !== ownerId) throw new InvalidStorageKeyError("not owned by caller");
}

/** Content types end up in headers, signed strings and metadata files: refuse anything that is not plain. */
export function assertContentType(contentType: string): void {
  if (typeof contentType !== "string" || contentType.length > 255 || !CONTENT_TYPE_PATTERN.test(contentType)) {
    throw new Error("Invalid content type");
  }
}

export function resolveExpiry(expiresInSeconds: number | undefined, fallback: number): number {
  const seconds = expiresInSeconds ?? fallback;
  if (!Number.isInteger(seconds) || seconds > MAX_URL_EXPIRY_SECONDS) {
    throw new Error(`expiresInSeconds must be an integer of at most ${MAX_URL_EXPIRY_SECONDS}`);
  }
  return seconds;
}

export const DEFAULT_UPLOAD_URL_SECONDS = 15 * 60;
export const DEFAULT_DOWNLOAD_URL_SECONDS = 5 * 60;
export const DEFAULT_CHECK_TIMEOUT_MS = 3_000;

/**
 * What every store checks before it signs an upload or download URL (the key, and the content type when there is
 * one), and the URL's lifetime in seconds: the one asked for, else the default for `purpose`.
 */
export function signedUrlSeconds(
  purpose: "upload" | "download",
  args: { key: string; contentType?: string; expiresInSeconds?: number },
): number {
  assertWellFormedKey(args.key);
  if (args.contentType !== undefined) assertContentType(args.contentType);
  const fallback = purpose === "upload" ? DEFAULT_UPLOAD_URL_SECONDS : DEFAULT_DOWNLOAD_URL_SECONDS;
  return resolveExpiry(args.expiresInSeconds, fallback);
}
