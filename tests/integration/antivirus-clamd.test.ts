import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ClamdError,
  clamdTarget,
  clamdUrlProblem,
  clamdVersion,
  scanFileWithClamd,
  scanWithClamd,
} from "~/services/antivirus/clamd.server";
import { noise } from "../support/audio-fixtures";
import { setupClamd, startClamd, TEST_SIGNATURE, withEicar, type Clamd } from "../support/clamd";

// The clamd conversation (ADR 0024) against Debian's real clamd: verdicts on streams and files, the daemon's own
// refusal of an oversized stream, and the failures a caller must treat as "not scanned" — nothing answering, and a
// daemon that takes the bytes but never answers.
const clamd = setupClamd();
let small: Clamd;

beforeAll(async () => {
  small = await startClamd(path.join(clamd.dir, "small"), { streamMaxBytes: 1024 * 1024 });
}, 90_000);
afterAll(async () => {
  await small.stop();
});

const target = () => clamdTarget(clamd.url);

describe("clamd", () => {
  it("finds the test signature anywhere in a stream sent in many pieces, and passes the same bytes without it", async () => {
    const clean = Buffer.from(noise(3 * 1024 * 1024));
    const pieces = (bytes: Buffer) =>
      Array.from({ length: 48 }, (_, i) => bytes.subarray(i * 65_536, (i + 1) * 65_536));
    expect(await scanWithClamd(target(), pieces(clean), 30_000)).toEqual({ infected: false });
    expect(await scanWithClamd(target(), pieces(withEicar(clean)), 30_000)).toEqual({
      infected: true,
      signature: TEST_SIGNATURE,
    });
  });

  it("scans a file from disk without reading it whole", async () => {
    const file = path.join(clamd.dir, "aufnahme.wav");
    fs.writeFileSync(file, withEicar(Buffer.from(noise(6 * 1024 * 1024))));
    expect(await scanFileWithClamd(target(), file, 30_000)).toMatchObject({ infected: true });
    fs.writeFileSync(file, Buffer.from(noise(6 * 1024 * 1024)));
    expect(await scanFileWithClamd(target(), file, 30_000)).toEqual({ infected: false });
  });

  it("names its engine's version (and an official signature database's, which this one is not)", async () => {
    expect(await clamdVersion(target(), 5_000)).toMatch(/^ClamAV \d+\.\d+\.\d+/);
  });

  it("a stream over the daemon's limit is an error, never a clean verdict", async () => {
    const big = Buffer.from(noise(2 * 1024 * 1024));
    const error = await scanWithClamd(clamdTarget(small.url), [big], 30_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClamdError);
    // clamd answers "INSTREAM size limit exceeded" and hangs up; which of the two the client sees first is a race.
    expect(error).toMatchObject({
      reason: "error",
      message: expect.stringMatching(/size limit exceeded|StreamMaxLength/),
    });
  });

  it("nothing listening is 'unreachable'; a daemon that never answers is a time-out", async () => {
    const missing = clamdTarget(`unix://${path.join(clamd.dir, "nobody.sock")}`);
    await expect(scanWithClamd(missing, [Buffer.from("x")], 5_000)).rejects.toMatchObject({ reason: "unreachable" });

    const silentPath = path.join(clamd.dir, "silent.sock");
    const silent = net.createServer((socket) => socket.resume()).listen(silentPath);
    await new Promise((resolve) => silent.once("listening", resolve));
    try {
      await expect(scanWithClamd({ path: silentPath }, [Buffer.from("x")], 300)).rejects.toMatchObject({
        reason: "timeout",
      });
    } finally {
      silent.close();
    }
  });

  it("is reached over a Unix socket or loopback only (clamd does not encrypt)", () => {
    expect(clamdUrlProblem("unix:///run/clamav/clamd.ctl")).toBeUndefined();
    expect(clamdUrlProblem("tcp://127.0.0.1:3310")).toBeUndefined();
    expect(clamdUrlProblem("tcp://localhost:3310")).toBeUndefined();
    expect(clamdUrlProblem("tcp://clamav.klinik.intern:3310")).toMatch(/only to localhost/);
    expect(clamdUrlProblem("tcp://127.0.0.1")).toMatch(/needs a port/);
    expect(clamdUrlProblem("https://127.0.0.1:3310")).toMatch(/tcp:\/\/ or unix:\/\//);
    expect(clamdUrlProblem("clamd")).toMatch(/must be/);
    expect(clamdTarget("tcp://[::1]:3310")).toEqual({ host: "::1", port: 3310 });
  });
});
