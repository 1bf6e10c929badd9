import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { makeTempDir, removeTempDir } from "../../../tests/support/audio-fixtures";
import { MediaProbeError, runProgram } from "./ffprobe.server";

// The runner the live path (and the health check's `ffmpeg -version`) still starts ffmpeg and ffprobe with.
// Uploads no longer go through it: media/decode.server.ts decodes them in process.

let dir: string;

beforeAll(async () => {
  dir = await makeTempDir("skribent-media-ffprobe-");
});

afterAll(async () => {
  await removeTempDir(dir);
});

describe("runProgram", () => {
  test("passes the arguments as they are, without a shell", async () => {
    const argsFile = path.join(dir, "args.txt");
    const script = path.join(dir, "print-args.sh");
    await writeFile(script, `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}'\nexit 3\n`, { mode: 0o755 });
    const odd = "-v quiet concat:a|b;$(touch x).wav";
    expect(await runProgram(script, ["-i", odd], 5_000)).toMatchObject({ code: 3 });
    expect((await readFile(argsFile, "utf8")).trimEnd().split("\n")).toEqual(["-i", odd]);
  });

  test("a program that hangs is killed at the time-out", async () => {
    const pidFile = path.join(dir, "hang.pid");
    const script = path.join(dir, "hang.sh");
    await writeFile(script, `#!/bin/sh\necho $$ > '${pidFile}'\nexec sleep 10\n`, { mode: 0o755 });

    const started = performance.now();
    const error = await runProgram(script, [], 200).catch((e: unknown) => e);
    const elapsed = performance.now() - started;

    expect(error).toBeInstanceOf(MediaProbeError);
    expect(error).toMatchObject({ reason: "timeout" });
    expect(elapsed).toBeGreaterThanOrEqual(190);
    // Killed at the time-out, well before the 10 s the program would sleep (margin: a loaded CI machine).
    expect(elapsed).toBeLessThan(5_000);
    const pid = Number((await readFile(pidFile, "utf8")).trim());
    expect(pid).toBeGreaterThan(0);
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
  });

  test("a missing program is a server fault: unavailable", async () => {
    await expect(runProgram(path.join(dir, "no-such-ffprobe"), [], 1_000)).rejects.toMatchObject({
      name: "MediaProbeError",
      reason: "unavailable",
    });
  });
});
