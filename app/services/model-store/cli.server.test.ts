import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "./cli.server";
import { LOCK_FILE } from "./hub-pin.server";

// `npm run models -- --from DIR` (issue 21: "copies are verified like downloads"): a copy that does not match its pin
// never takes the model's name, and a file with no pin at all is pinned in the lock as it is copied.

const SHARED = path.resolve("../shared/models");
let dir: string;
let share: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-cli-models-"));
  share = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-share-"));
  vi.spyOn(process.stdout, "write").mockReturnValue(true);
  vi.spyOn(process.stderr, "write").mockReturnValue(true);
  vi.stubEnv("LOCAL_RECOGNISER", "whisper");
  vi.stubEnv("LOCAL_WHISPER_MODEL", "for-tests-ggml-tiny.bin");
  vi.stubEnv("LOCAL_LLM_MODEL", "stories260K.gguf");
  vi.stubEnv("LOCAL_SEGMENTATION_MODEL", "none");
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(share, { recursive: true, force: true });
});

describe("npm run models -- --from DIR", () => {
  it("copies and verifies every file the engines need", async () => {
    expect(await main(["--dir", dir, "--from", SHARED])).toBe(0);
    expect(fs.readdirSync(dir).sort()).toEqual(["for-tests-ggml-tiny.bin", "silero_vad.onnx", "stories260K.gguf"]);
  });

  it("refuses a copy whose bytes differ from the pin, and leaves no file under the model's name", async () => {
    const altered = fs.readFileSync(path.join(SHARED, "stories260K.gguf"));
    altered[500] ^= 0xff;
    fs.writeFileSync(path.join(share, "stories260K.gguf"), altered);
    expect(await main(["--dir", dir, "--from", share, "--only", "letter"])).toBe(1);
    expect(fs.readdirSync(dir)).toEqual([]);
    expect(vi.mocked(process.stderr.write)).toHaveBeenCalledWith(expect.stringContaining("checksum mismatch"));
  });

  it("pins a file nobody published a pin for as it copies it, and holds it to that pin afterwards", async () => {
    vi.stubEnv("LOCAL_LLM_MODEL", "own-model.gguf");
    fs.copyFileSync(path.join(SHARED, "stories260K.gguf"), path.join(share, "own-model.gguf"));
    expect(await main(["--dir", dir, "--from", share, "--only", "letter"])).toBe(0);
    const lock = JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), "utf8"));
    expect(lock.files["own-model.gguf"]).toMatchObject({ size: 1_185_376, source: "local" });
    // Replaced behind the app's back: the next check refuses it.
    const altered = fs.readFileSync(path.join(dir, "own-model.gguf"));
    altered[10] ^= 0xff;
    fs.writeFileSync(path.join(dir, "own-model.gguf"), altered);
    expect(await main(["--dir", dir, "--only", "letter"])).toBe(1);
    expect(vi.mocked(process.stderr.write)).toHaveBeenCalledWith(
      expect.stringContaining("does not match its pinned SHA-256"),
    );
  });

  it("answers a usage error with the usage and exit code 2", async () => {
    expect(await main(["--only", "everything"])).toBe(2);
  });
});
