import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { makeSpeechWav, makeTempDir, removeTempDir } from "../../tests/support/audio-fixtures";
import { MediaProbeError, probeAudioFile } from "./media-ffprobe.server";
import { validateAudioFile } from "./media-probe.server";
import { unsupported } from "./media-probe-test-helpers";

let dir: string;
let speechWav: string;

beforeAll(async () => {
  dir = await makeTempDir("skribent-media-ffprobe-");
  speechWav = await makeSpeechWav(dir);
});

afterAll(async () => {
  await removeTempDir(dir);
});

describe("running ffprobe", () => {
  test("passes the file only as a file: URL of its absolute path, with only the file protocol allowed", async () => {
    const argsFile = path.join(dir, "args.txt");
    const script = path.join(dir, "print-args.sh");
    await writeFile(script, `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}'\nexit 1\n`, { mode: 0o755 });
    const relative = path.relative(process.cwd(), speechWav);
    await expect(probeAudioFile(relative, { ffprobePath: script })).rejects.toMatchObject({ reason: "failed" });
    const args = (await readFile(argsFile, "utf8")).trimEnd().split("\n");
    expect(args.at(-1)).toBe(`file:${speechWav}`);
    expect(args.slice(args.indexOf("-protocol_whitelist"), args.indexOf("-protocol_whitelist") + 2)).toEqual([
      "-protocol_whitelist",
      "file",
    ]);
    expect(args.filter((a) => a.includes(path.basename(speechWav)))).toHaveLength(1);
  });

  test("a probe that hangs is killed at the time-out and the file counts as unreadable", async () => {
    const pidFile = path.join(dir, "hang.pid");
    const script = path.join(dir, "hang.sh");
    await writeFile(script, `#!/bin/sh\necho $$ > '${pidFile}'\nexec sleep 10\n`, { mode: 0o755 });

    const started = performance.now();
    const result = await validateAudioFile(speechWav, { ffprobePath: script, timeoutMs: 200 });
    const elapsed = performance.now() - started;

    expect(result).toEqual({ ok: false, rejection: { code: "unreadable", message: unsupported("audio/wav") } });
    expect(elapsed).toBeGreaterThanOrEqual(190);
    // Killed at the time-out, well before the 10 s the probe would sleep (margin: a loaded CI machine).
    expect(elapsed).toBeLessThan(5_000);
    const pid = Number((await readFile(pidFile, "utf8")).trim());
    expect(pid).toBeGreaterThan(0);
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
  });

  test("probeAudioFile reports the time-out as such", async () => {
    const script = path.join(dir, "hang2.sh");
    await writeFile(script, `#!/bin/sh\nexec sleep 10\n`, { mode: 0o755 });
    const error = await probeAudioFile(speechWav, { ffprobePath: script, timeoutMs: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MediaProbeError);
    expect(error).toMatchObject({ reason: "timeout" });
  });

  test("a missing ffprobe is a server fault, not the file's: validateAudioFile throws", async () => {
    const missing = path.join(dir, "no-such-ffprobe");
    await expect(validateAudioFile(speechWav, { ffprobePath: missing })).rejects.toMatchObject({
      name: "MediaProbeError",
      reason: "unavailable",
    });
  });
});
