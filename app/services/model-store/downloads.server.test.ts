import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startModelMirror, type ModelMirror } from "../../../tests/support/model-mirror";
import type { NeededModel } from "../config/engines.server";
import { loadableModelProblems } from "../speech/local-models.server";
import {
  modelStatus,
  startModelDownloads,
  stopModelDownloads,
  waitingForModels,
  SPEECH_ROLES,
  type ModelsSettings,
} from "./downloads.server";
import { LOCK_FILE, parseModelSetting } from "./hub-pin.server";

// The background download of issue 21 against a protocol-faithful mirror serving the small real models of
// ../shared/models under their catalogue names (each pinned there): progress, resume after a drop, refusal of bad
// bytes, HTTP errors, the operator's switch, hub pins and two processes sharing one directory.

const SHARED = path.resolve("../shared/models");
const VAD = path.join(SHARED, "silero_vad.onnx");
const WHISPER = path.join(SHARED, "for-tests-ggml-tiny.bin");
const LETTER = path.join(SHARED, "stories260K.gguf");

let mirror: ModelMirror;
let dir: string;
let lines: string[];

function needed(names: Array<[NeededModel["role"], string]>): NeededModel[] {
  return names.map(([role, name]) => ({ role, setting: parseModelSetting(name, dir) }));
}

function settings(over: Partial<ModelsSettings> = {}): ModelsSettings {
  return {
    dir,
    mirrorUrl: mirror.url,
    hubUrl: mirror.url,
    autoDownload: true,
    needed: needed([
      ["speech", "for-tests-ggml-tiny.bin"],
      ["vad", "silero_vad.onnx"],
      ["letter", "stories260K.gguf"],
    ]),
    ...over,
  };
}

const start = (s: ModelsSettings) =>
  startModelDownloads(s, { retryMs: 50, maxRetryMs: 200, log: (l) => lines.push(l), logEveryMs: 0 });

function sameBytes(a: string, b: string) {
  const hash = (f: string) => createHash("sha256").update(fs.readFileSync(f)).digest("hex");
  return hash(a) === hash(b);
}

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-models-"));
  lines = [];
  mirror = await startModelMirror();
  mirror.serve("silero_vad.onnx", VAD);
  mirror.serve("for-tests-ggml-tiny.bin", WHISPER);
  mirror.serve("stories260K.gguf", LETTER);
});

afterEach(async () => {
  await stopModelDownloads();
  await mirror.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("first start", () => {
  it("downloads every missing model, smallest role first, with progress lines, and verifies each", async () => {
    mirror.throttle(4 * 1024 * 1024);
    const done = start(settings());
    // While it runs, jobs needing speech models wait and see a percentage.
    expect(waitingForModels(SPEECH_ROLES)).toEqual({ percent: expect.any(Number) });
    await done;
    expect(modelStatus().files.map((f) => [f.name, f.state])).toEqual([
      ["silero_vad.onnx", "ready"],
      ["for-tests-ggml-tiny.bin", "ready"],
      ["stories260K.gguf", "ready"],
    ]);
    expect(sameBytes(path.join(dir, "silero_vad.onnx"), VAD)).toBe(true);
    expect(sameBytes(path.join(dir, "stories260K.gguf"), LETTER)).toBe(true);
    expect(waitingForModels(SPEECH_ROLES)).toBeUndefined();
    // A line per file with size, speed and time left; the last one at 100 %.
    const vadLines = lines.filter((l) => l.includes("silero_vad.onnx"));
    expect(vadLines.at(-1)).toMatch(
      /silero_vad\.onnx {2}100\.0 % {2}2\.2 MiB of 2\.2 MiB {2}[\d.]+ MiB\/s {2}0 s left/,
    );
    expect(fs.readdirSync(dir).filter((f) => f.endsWith(".part") || f.endsWith(".lock"))).toEqual([]);
  });

  it("leaves present, verified files alone and asks the mirror for nothing", async () => {
    for (const file of [VAD, WHISPER, LETTER]) fs.copyFileSync(file, path.join(dir, path.basename(file)));
    await start(settings());
    expect(modelStatus().files.every((f) => f.state === "ready")).toBe(true);
    expect(mirror.requests).toEqual([]);
  });
});

describe("a broken connection", () => {
  it("resumes where it stopped with a Range request and ends with the right bytes", async () => {
    mirror.fault("silero_vad.onnx", { kind: "drop", afterBytes: 1_000_000, times: 1 });
    await start(settings({ needed: needed([["vad", "silero_vad.onnx"]]) }));
    const gets = mirror.requests.filter((r) => r.path === "/silero_vad.onnx");
    expect(gets).toHaveLength(2);
    expect(gets[0].range).toBeUndefined();
    // The second request continues from what had arrived (bytes still in flight when the socket died are lost),
    // not from the start.
    const resumedAt = Number(/^bytes=(\d+)-$/.exec(gets[1].range ?? "")?.[1]);
    expect(resumedAt).toBeGreaterThan(0);
    expect(resumedAt).toBeLessThanOrEqual(1_000_000);
    expect(fs.statSync(path.join(dir, "silero_vad.onnx")).size).toBe(2_327_524);
    expect(sameBytes(path.join(dir, "silero_vad.onnx"), VAD)).toBe(true);
    expect(lines.some((l) => /broke off after .* it resumes from there; next attempt in/.test(l))).toBe(true);
  });
});

describe("bad bytes and errors", () => {
  it("refuses a corrupted file, says why, never gives it the model's name, and fetches it again", async () => {
    mirror.fault("stories260K.gguf", { kind: "corrupt", times: 1 });
    const done = start(settings({ needed: needed([["letter", "stories260K.gguf"]]) }));
    await expect
      .poll(() => modelStatus().files[0].state === "retrying" || modelStatus().files[0].state === "ready")
      .toBe(true);
    await done;
    expect(lines.some((l) => l.includes("stories260K.gguf: checksum mismatch") && l.includes("discarded"))).toBe(true);
    expect(modelStatus().files[0].state).toBe("ready");
    expect(sameBytes(path.join(dir, "stories260K.gguf"), LETTER)).toBe(true);
  });

  it("shows a mirror's 404 and 500 while it retries with growing waits, then recovers", async () => {
    mirror.fault("silero_vad.onnx", { kind: "status", status: 500, times: 2 });
    mirror.fault("for-tests-ggml-tiny.bin", { kind: "status", status: 404, times: 1 });
    await start(
      settings({
        needed: needed([
          ["vad", "silero_vad.onnx"],
          ["speech", "for-tests-ggml-tiny.bin"],
        ]),
      }),
    );
    expect(lines).toContainEqual(
      expect.stringContaining("answered 500 Internal Server Error for silero_vad.onnx; next attempt in 0 s"),
    );
    expect(lines).toContainEqual(expect.stringContaining("answered 404 Not Found for for-tests-ggml-tiny.bin"));
    expect(modelStatus().files.every((f) => f.state === "ready")).toBe(true);
  });

  it("keeps the reason visible while a download keeps failing", async () => {
    mirror.fault("silero_vad.onnx", { kind: "status", status: 503, times: 1000 });
    void start(settings({ needed: needed([["vad", "silero_vad.onnx"]]) }));
    await expect.poll(() => modelStatus().problem?.error).toContain("answered 503");
    expect(modelStatus().files[0].state).toBe("retrying");
    expect(modelStatus().problem?.nextAttemptAt).toBeInstanceOf(Date);
    // Still coming: jobs keep waiting rather than failing.
    expect(waitingForModels(SPEECH_ROLES)).toBeDefined();
  });

  it("sets an altered file aside instead of loading it, and the engine check refuses it too", async () => {
    const altered = Buffer.from(fs.readFileSync(VAD));
    altered[100] ^= 0x01;
    fs.writeFileSync(path.join(dir, "silero_vad.onnx"), altered);
    fs.copyFileSync(WHISPER, path.join(dir, "for-tests-ggml-tiny.bin"));
    const problems = await loadableModelProblems({
      modelsDir: dir,
      whisperModel: path.join(dir, "for-tests-ggml-tiny.bin"),
      vadModel: path.join(dir, "silero_vad.onnx"),
      threads: 1,
    });
    expect(problems).toEqual([expect.stringContaining("silero_vad.onnx does not match its pinned SHA-256")]);
    await start(settings({ needed: needed([["vad", "silero_vad.onnx"]]) }));
    expect(fs.existsSync(path.join(dir, "silero_vad.onnx.rejected"))).toBe(true);
    expect(sameBytes(path.join(dir, "silero_vad.onnx"), VAD)).toBe(true);
  });
});

describe("the operator's choices", () => {
  it("MODELS_AUTO_DOWNLOAD=0 fetches nothing and says what to run", async () => {
    await start(settings({ autoDownload: false }));
    expect(mirror.requests).toEqual([]);
    expect(modelStatus().files.every((f) => f.state === "missing")).toBe(true);
    expect(modelStatus().problem?.error).toContain("npm run models");
    // Nothing will come: jobs do not wait, they fail with the engine's own message.
    expect(waitingForModels(SPEECH_ROLES)).toBeUndefined();
  });

  it("pins a hub model to its published LFS hash and holds later fetches to that pin", async () => {
    const bytes = fs.readFileSync(LETTER);
    mirror.serveHub({ repo: "acme/tiny-GGUF", file: "tiny-q4.gguf", bytes });
    const hubModel = needed([["letter", "hf:acme/tiny-GGUF/tiny-q4.gguf"]]);
    await start(settings({ mirrorUrl: undefined, needed: hubModel }));
    expect(modelStatus().files[0].state).toBe("ready");
    const lock = JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), "utf8"));
    expect(lock.files["tiny-q4.gguf"]).toMatchObject({
      sha256: createHash("sha256").update(bytes).digest("hex"),
      size: bytes.length,
      source: "hf:acme/tiny-GGUF@main/tiny-q4.gguf",
    });
    // The hub now serves other bytes (with their own hash): the lock still decides, so they are refused.
    fs.rmSync(path.join(dir, "tiny-q4.gguf"));
    await stopModelDownloads();
    mirror.serveHub({ repo: "acme/tiny-GGUF", file: "tiny-q4.gguf", bytes: fs.readFileSync(VAD) });
    void start(settings({ mirrorUrl: undefined, needed: hubModel }));
    await expect.poll(() => modelStatus().problem?.error ?? "").toMatch(/got \d+ bytes, expected|more than the pinned/);
    expect(fs.existsSync(path.join(dir, "tiny-q4.gguf"))).toBe(false);
  });

  it("gives up on a hub file it could never verify, or that does not exist, and says why", async () => {
    // Kept in Git, not LFS: the hub publishes no SHA-256 for it.
    mirror.serveHub({ repo: "acme/small", file: "model.gguf", bytes: Buffer.from("GGUF"), lfs: false });
    await start(settings({ mirrorUrl: undefined, needed: needed([["letter", "hf:acme/small/model.gguf"]]) }));
    expect(modelStatus().files[0].state).toBe("failed");
    expect(modelStatus().problem?.error).toContain("publishes no LFS SHA-256 for acme/small/model.gguf");
    // A typo in the setting: no retries, the operator is told to check it.
    await start(settings({ mirrorUrl: undefined, needed: needed([["letter", "hf:acme/typo/modle.gguf"]]) }));
    expect(modelStatus().files[0].state).toBe("failed");
    expect(modelStatus().problem?.error).toContain("the hub has no file modle.gguf in acme/typo@main");
  });

  it("refuses a file that has no pin and no address, and says how to provide it", async () => {
    await start(settings({ mirrorUrl: undefined, needed: needed([["letter", "my-own-model.gguf"]]) }));
    expect(modelStatus().files[0].state).toBe("failed");
    expect(modelStatus().problem?.error).toContain("has no pinned checksum");
  });
});

describe("several processes on one models directory", () => {
  it("leaves a file another live process is downloading to it, shows the part's growth, and takes the finished file", async () => {
    // Another process holds the lock and has written part of the file.
    const target = path.join(dir, "silero_vad.onnx");
    fs.writeFileSync(`${target}.lock`, "12345");
    fs.writeFileSync(`${target}.part`, fs.readFileSync(VAD).subarray(0, 1_000_000));
    const done = start(settings({ needed: needed([["vad", "silero_vad.onnx"]]) }));
    await expect.poll(() => modelStatus().files[0].state).toBe("elsewhere");
    expect(modelStatus().files[0].bytes).toBe(1_000_000);
    expect(modelStatus().percent).toBe(42);
    // It finishes there: renamed into place, lock gone.
    fs.rmSync(`${target}.part`);
    fs.copyFileSync(VAD, target);
    fs.rmSync(`${target}.lock`);
    await done;
    expect(modelStatus().files[0].state).toBe("ready");
    expect(mirror.requests).toEqual([]);
  });
});
