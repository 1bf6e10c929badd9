import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Capture, CaptureOptions, RecordedAudio } from "./capture";
import { LiveError } from "./messages";
import {
  canMove,
  LiveSession,
  requirementFailure,
  widgetState,
  type ConnectionState,
  type Environment,
} from "./session";
import { FakeLink } from "./fake-link";

const fine: Environment = { secure: true, getUserMedia: true, audioContext: true, webSocket: true, eventSource: true };

describe("the SPEC §4 state machine", () => {
  it("allows only the spec's moves", () => {
    expect(canMove("disconnected", "connecting")).toBe(true);
    expect(canMove("connecting", "connected")).toBe(true);
    expect(canMove("connected", "disconnecting")).toBe(true);
    expect(canMove("disconnecting", "disconnected")).toBe(true);
    expect(canMove("connecting", "error")).toBe(true);
    expect(canMove("error", "connecting")).toBe(true);
    expect(canMove("disconnected", "connected")).toBe(false);
    expect(canMove("connected", "connecting")).toBe(false);
    expect(canMove("disconnected", "error")).toBe(false);
  });

  it("names the widget's states: paused after a stop with segments", () => {
    const idle = { segments: 0, saving: false };
    expect(widgetState("disconnected", idle)).toBe("ready");
    expect(widgetState("connecting", idle)).toBe("connecting");
    expect(widgetState("connected", idle)).toBe("listening");
    expect(widgetState("disconnecting", idle)).toBe("stopping");
    expect(widgetState("error", idle)).toBe("error");
    expect(widgetState("disconnected", { segments: 3, saving: false })).toBe("paused");
    expect(widgetState("disconnected", { segments: 3, saving: true })).toBe("saving");
    // Recorded while the speech model downloaded: paused (to save or continue) without any text.
    expect(widgetState("disconnected", { segments: 0, saving: false, later: true })).toBe("paused");
  });
});

describe("requirements (SPEC §5/§8)", () => {
  it("needs a secure context, a microphone API, an audio context and a way to the server", () => {
    expect(requirementFailure("recording", fine)).toBeNull();
    expect(requirementFailure("recording", { ...fine, webSocket: false })).toBeNull();
    expect(requirementFailure("recording", { ...fine, secure: false })).toEqual({ key: "unsupported" });
    expect(requirementFailure("dictation", { ...fine, secure: false })).toEqual({ key: "httpsRequired" });
    expect(requirementFailure("dictation", { ...fine, getUserMedia: false })).toEqual({ key: "micUnavailable" });
    expect(requirementFailure("dictation", { ...fine, audioContext: false })).toEqual({ key: "apisMissing" });
    expect(requirementFailure("dictation", { ...fine, webSocket: false, eventSource: false })).toEqual({
      key: "apisMissing",
    });
  });
});

function setup(
  options: { env?: Environment; capture?: () => Promise<Capture>; kind?: "recording" | "dictation" } = {},
) {
  const links: FakeLink[] = [];
  const states: ConnectionState[] = [];
  const failed = vi.fn();
  const recorded: RecordedAudio = { blob: new Blob(["x"]), mimeType: "audio/webm", extension: "webm" };
  const capture = { mode: "worklet" as const, copyFailed: false, stop: vi.fn(async () => recorded), abort: vi.fn() };
  let onBuffer: CaptureOptions["onBuffer"] = () => undefined;
  const session = new LiveSession(
    options.kind ?? "recording",
    { state: (s) => states.push(s), result: vi.fn(), failed },
    {
      startCapture: async (o) => {
        onBuffer = o.onBuffer;
        return options.capture ? options.capture() : capture;
      },
      links: (name, _id, handlers) => {
        const link = new FakeLink(name, handlers);
        links.push(link);
        return link;
      },
      environment: () => options.env ?? fine,
    },
  );
  const open = vi.fn(async () => ({ id: "s1", maxDelay: 3, lastN: 0 }));
  return { session, links, states, failed, capture, recorded, open, buffer: (v: number) => onBuffer(Int16Array.of(v)) };
}

describe("LiveSession", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("starts: disconnected → connecting → connected, sending what was captured meanwhile", async () => {
    const { session, links, states, open, buffer } = setup();
    await session.start("de", open);
    buffer(1);
    expect(states).toEqual(["connecting"]);
    links[0].started(0);
    expect(states).toEqual(["connecting", "connected"]);
    expect(links[0].sent.map((s) => s.seq)).toEqual([1]);
    expect(session.buffers).toBe(1);
  });

  it("stops: connected → disconnecting → disconnected, with EndOfStream and the compressed copy", async () => {
    const { session, links, states, open, recorded } = setup();
    await session.start("de", open);
    links[0].started(0);
    const stopped = session.stop();
    await vi.advanceTimersByTimeAsync(0);
    expect(links[0].ends).toEqual([{ message: "EndOfStream", last_seq_no: 0 }]);
    links[0].say({ message: "EndOfTranscript", n: 4 });
    await expect(stopped).resolves.toBe(recorded);
    expect(states).toEqual(["connecting", "connected", "disconnecting", "disconnected"]);
    // A continued run starts after the messages already seen.
    expect(session.info?.lastN).toBe(4);
  });

  it("goes to error and tears everything down when the start fails", async () => {
    const denied = setup({
      capture: async () => {
        throw new LiveError({ key: "micDenied" });
      },
    });
    await denied.session.start("de", denied.open);
    expect(denied.states).toEqual(["connecting", "error"]);
    expect(denied.failed).toHaveBeenCalledWith({ key: "micDenied" });
    expect(denied.open).not.toHaveBeenCalled();

    const refused = setup();
    refused.open.mockRejectedValueOnce(new LiveError({ key: "startFailed" }));
    await refused.session.start("de", refused.open);
    expect(refused.failed).toHaveBeenCalledWith({ key: "startFailed" });
    expect(refused.capture.abort).toHaveBeenCalled();
  });

  it("reports unmet requirements without touching the microphone", async () => {
    const { session, states, failed, open } = setup({ env: { ...fine, secure: false }, kind: "dictation" });
    await session.start("de", open);
    expect(states).toEqual(["connecting", "error"]);
    expect(failed).toHaveBeenCalledWith({ key: "httpsRequired" });
    expect(open).not.toHaveBeenCalled();
  });

  it("cancels a start that is still connecting", async () => {
    const { session, links, states, capture, open } = setup();
    await session.start("de", open);
    await expect(session.stop()).resolves.toBeNull();
    expect(states).toEqual(["connecting", "disconnecting", "disconnected"]);
    expect(capture.abort).toHaveBeenCalled();
    expect(links[0].closedWith).toBe(1000);
  });

  it("turns a lost connection into error, releasing the microphone; the session stays to continue", async () => {
    const { session, links, states, failed, capture, open } = setup();
    await session.start("de", open);
    links[0].started(0);
    links[0].say({ message: "Error", type: "job_error", reason: "Engine failed" });
    expect(states.at(-1)).toBe("error");
    expect(failed).toHaveBeenCalledWith({ key: "transcriptionError", values: { reason: "Engine failed" } });
    expect(capture.abort).toHaveBeenCalled();
    expect(session.info?.id).toBe("s1");
    session.reset();
    await session.start("de", async () => session.info!);
    expect(states.slice(-2)).toEqual(["disconnected", "connecting"]);
  });
});
