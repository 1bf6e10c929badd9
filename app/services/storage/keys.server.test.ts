import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

import { parseRangeHeader } from "./http.server";
import { createLocalStorage } from "./local.server";
import { createS3Storage } from "./s3.server";
import { BASE_URL, SECRET } from "../../../tests/support/storage-helpers";
import {
  InvalidStorageKeyError,
  assertKeyOwnedBy,
  getStorage,
  makeStorageKey,
  type ObjectStorage,
} from "./storage.server";

const MALICIOUS_KEYS = [
  "audio/owner-1/../owner-2/20240101-000000-x.mp3",
  "audio/owner-1/../../../etc/passwd",
  "../audio/owner-1/x.mp3",
  "/audio/owner-1/x.mp3",
  "audio\\owner-1\\x.mp3",
  "audio/owner-1\\..\\x.mp3",
  "audio//owner-1/x.mp3",
  "audio/owner-1//x.mp3",
  "audio/owner-1/",
  "audio/owner-1",
  "secrets/owner-1/x.mp3",
  "audio/owner-1/%2e%2e/x.mp3",
  "audio/owner-1/x.mp3\u0000.txt",
  "",
];

describe("getStorage", () => {
  // Runs first in this file: the singleton is still unset.
  it("throws a clear error before setStorage was called", () => {
    expect(() => getStorage()).toThrow(/not initialised/);
  });
});

describe("makeStorageKey", () => {
  it("builds area/owner/UTC timestamp-uuid+extension", () => {
    const key = makeStorageKey({
      ownerId: "user_1-A",
      area: "audio",
      extension: ".mp3",
      now: new Date("2024-03-05T07:08:09.999Z"),
    });
    expect(key).toMatch(
      /^audio\/user_1-A\/20240305-070809-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.mp3$/,
    );
  });

  it("uses the current UTC time and a fresh id on every call", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(new Date("2031-12-31T23:59:58Z"));
      const first = makeStorageKey({ ownerId: "u", area: "transcripts", extension: ".json" });
      const second = makeStorageKey({ ownerId: "u", area: "transcripts", extension: ".json" });
      expect(first.startsWith("transcripts/u/20311231-235958-")).toBe(true);
      expect(second.startsWith("transcripts/u/20311231-235958-")).toBe(true);
      expect(first).not.toBe(second);
    } finally {
      vi.useRealTimers();
    }
  });

  it("allows no extension", () => {
    expect(makeStorageKey({ ownerId: "u", area: "context" })).toMatch(/^context\/u\/\d{8}-\d{6}-[0-9a-f-]{36}$/);
  });

  it.each(["", "a/b", "../x", "a.b", "x".repeat(65), "ü", "a b"])("refuses owner id %j", (ownerId) => {
    expect(() => makeStorageKey({ ownerId, area: "audio" })).toThrow(InvalidStorageKeyError);
  });

  it.each(["mp3", ".MP3", ".toolongxx", "./", "./../x", ".", ".mp3/x", ".m p3"])(
    "refuses extension %j",
    (extension) => {
      expect(() => makeStorageKey({ ownerId: "u", area: "audio", extension })).toThrow(InvalidStorageKeyError);
    },
  );

  it("refuses an unknown area", () => {
    // Simulates an unchecked caller (for example a value taken from a request).
    const area = "secrets" as unknown as "audio";
    expect(() => makeStorageKey({ ownerId: "u", area })).toThrow(InvalidStorageKeyError);
  });
});

describe("assertKeyOwnedBy", () => {
  it("accepts keys the server made for that owner, in every area", () => {
    for (const area of ["audio", "transcripts", "arztbriefe", "context"] as const) {
      expect(() =>
        assertKeyOwnedBy(makeStorageKey({ ownerId: "owner-1", area, extension: ".txt" }), "owner-1"),
      ).not.toThrow();
    }
  });

  it("refuses another owner's key", () => {
    const key = makeStorageKey({ ownerId: "owner-2", area: "audio", extension: ".mp3" });
    expect(() => assertKeyOwnedBy(key, "owner-1")).toThrow(InvalidStorageKeyError);
    // A prefix of the owner id is not the owner.
    expect(() => assertKeyOwnedBy("audio/owner-10/20240101-000000-x.mp3", "owner-1")).toThrow(InvalidStorageKeyError);
  });

  it.each(MALICIOUS_KEYS)("refuses malformed key %j", (key) => {
    expect(() => assertKeyOwnedBy(key, "owner-1")).toThrow(InvalidStorageKeyError);
  });
});

describe("parseRangeHeader", () => {
  it.each([
    ["bytes=0-9", 100, { start: 0, end: 9 }],
    ["bytes=90-", 100, { start: 90, end: 99 }],
    ["bytes=-10", 100, { start: 90, end: 99 }],
    ["bytes=-500", 100, { start: 0, end: 99 }],
    ["bytes=50-1000", 100, { start: 50, end: 99 }],
    ["bytes=100-", 100, "unsatisfiable"],
    ["bytes=-0", 100, "unsatisfiable"],
    ["bytes=9-3", 100, "unsatisfiable"],
    ["bytes=0-", 0, "unsatisfiable"],
    ["bytes=0-1,4-5", 100, null],
    ["items=0-1", 100, null],
    ["bytes=-", 100, null],
  ] as const)("%s of %i bytes", (header, size, expected) => {
    expect(parseRangeHeader(header, size)).toEqual(expected);
  });
});

describe("both implementations refuse malformed keys", () => {
  let dir: string;
  let local: ObjectStorage;
  // No server behind this endpoint: a key that got past validation would fail with a network error
  // instead of InvalidStorageKeyError, so the test would notice.
  const s3 = createS3Storage({
    kind: "s3",
    bucket: "b",
    region: "us-east-1",
    endpoint: "http://127.0.0.1:9",
    accessKeyId: "x",
    secretAccessKey: "y",
  });

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "skribent-storage-keys-"));
    local = createLocalStorage({
      kind: "local",
      directory: path.join(dir, "store"),
      publicBaseUrl: BASE_URL,
      signingSecrets: [SECRET],
      maxUploadBytes: 1024,
    });
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each(MALICIOUS_KEYS)("refuses %j in every operation", async (key) => {
    for (const storage of [local, s3]) {
      await expect(storage.put({ key, body: Buffer.from("x"), contentType: "text/plain" })).rejects.toThrow(
        InvalidStorageKeyError,
      );
      await expect(storage.head(key)).rejects.toThrow(InvalidStorageKeyError);
      await expect(storage.getStream(key)).rejects.toThrow(InvalidStorageKeyError);
      await expect(storage.delete(key)).rejects.toThrow(InvalidStorageKeyError);
      await expect(storage.createUploadUrl({ key, contentType: "audio/mpeg" })).rejects.toThrow(InvalidStorageKeyError);
      await expect(storage.createDownloadUrl({ key })).rejects.toThrow(InvalidStorageKeyError);
    }
    // Nothing escaped the store: the temp dir holds only the store folder (if that).
    expect((await readdir(dir)).filter((name) => name !== "store")).toEqual([]);
  });

  it("refuses content types that could break a header", async () => {
    const key = makeStorageKey({ ownerId: "u", area: "audio" });
    for (const storage of [local, s3]) {
      await expect(storage.createUploadUrl({ key, contentType: "audio/mpeg\r\nX-Evil: 1" })).rejects.toThrow(
        /content type/,
      );
      await expect(storage.createUploadUrl({ key, contentType: "" })).rejects.toThrow(/content type/);
    }
  });
});
