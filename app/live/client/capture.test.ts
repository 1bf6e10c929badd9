import { describe, expect, it } from "vitest";
import { chooseRecorderMime, extensionFor, microphoneFailure, rmsDb, SpeechGate } from "./capture";

describe("chooseRecorderMime (SPEC §9 preference)", () => {
  const supporting =
    (...types: string[]) =>
    (type: string) =>
      types.includes(type);

  it("prefers WebM/Opus, then MP4 (as .m4a), MPEG (.mp3), WAV, plain WebM", () => {
    expect(chooseRecorderMime(supporting("audio/webm;codecs=opus", "audio/mp4"))).toEqual({
      mimeType: "audio/webm;codecs=opus",
      extension: "webm",
    });
    expect(chooseRecorderMime(supporting("audio/mp4", "audio/mpeg"))).toEqual({
      mimeType: "audio/mp4",
      extension: "m4a",
    });
    expect(chooseRecorderMime(supporting("audio/mpeg", "audio/wav"))).toEqual({
      mimeType: "audio/mpeg",
      extension: "mp3",
    });
    expect(chooseRecorderMime(supporting("audio/wav", "audio/webm"))).toEqual({
      mimeType: "audio/wav",
      extension: "wav",
    });
    expect(chooseRecorderMime(supporting("audio/webm"))).toEqual({ mimeType: "audio/webm", extension: "webm" });
  });

  it("falls back to the browser's default, named .webm, and survives a throwing probe", () => {
    expect(chooseRecorderMime(() => false)).toEqual({ mimeType: "", extension: "webm" });
    expect(
      chooseRecorderMime(() => {
        throw new Error("unknown type");
      }),
    ).toEqual({ mimeType: "", extension: "webm" });
  });

  it("names what the recorder actually produced", () => {
    expect(extensionFor("audio/mp4;codecs=mp4a.40.2")).toBe("m4a");
    expect(extensionFor("audio/webm;codecs=opus")).toBe("webm");
    expect(extensionFor("audio/ogg")).toBe("webm");
  });
});

describe("speech or silence", () => {
  const tone = (amplitude: number) => new Int16Array(4096).fill(amplitude);

  it("measures buffer levels in dBFS", () => {
    expect(rmsDb(tone(0))).toBe(-Infinity);
    expect(rmsDb(tone(32767))).toBeCloseTo(0, 1);
    expect(rmsDb(tone(3277))).toBeCloseTo(-20, 0);
    expect(rmsDb(new Int16Array(0))).toBe(-Infinity);
  });

  it("counts speech only after two loud buffers in a row", () => {
    const gate = new SpeechGate(-45, 2);
    expect(gate.feed(-30)).toBe(false);
    expect(gate.feed(-60)).toBe(false);
    expect(gate.feed(-30)).toBe(false);
    expect(gate.feed(-20)).toBe(true);
    expect(gate.feed(-25)).toBe(true);
    expect(gate.feed(-70)).toBe(false);
  });
});

describe("microphoneFailure (SPEC §8)", () => {
  const named = (name: string, message = "") => Object.assign(new Error(message), { name });

  it("maps getUserMedia's errors to the spec's messages", () => {
    expect(microphoneFailure(named("NotAllowedError"))).toEqual({ key: "micDenied" });
    expect(microphoneFailure(named("SecurityError"))).toEqual({ key: "micDenied" });
    expect(microphoneFailure(named("NotFoundError"))).toEqual({ key: "micNotFound" });
    expect(microphoneFailure(named("OverconstrainedError"))).toEqual({ key: "constraints" });
    expect(microphoneFailure(named("NotSupportedError"))).toEqual({ key: "unsupported" });
    expect(microphoneFailure(named("NotReadableError", "Device in use"))).toEqual({
      key: "setupFailed",
      values: { message: "Device in use" },
    });
  });
});
