import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { TranscriptMessage } from "../protocol";
import { parseLiveSave } from "~/services/live/save-payload.server";
import { directSaveBody, onSessionTimeline, wavCopy } from "./direct-save";
import { FakeLink } from "./fake-link";
import type { DirectTarget } from "./link";
import { LiveConnection } from "./transport";

// Direct mode in the browser's code (ADR 0013): one transport only, a drop ends the run, and the page's own
// record of the session — its finals on one time line and its audio — becomes what SPEC §3 says a save sends.

const target: DirectTarget = { url: "wss://eu.rt.speechmatics.com/v2", start: { message: "StartRecognition" } };

function setup() {
  const links: FakeLink[] = [];
  const targets: Array<DirectTarget | undefined> = [];
  const onFailed = vi.fn();
  const onStarted = vi.fn();
  const connection = new LiveConnection({
    kind: "recording",
    language: "de",
    maxDelay: 3,
    direct: target,
    links: (name, _id, handlers, direct) => {
      targets.push(direct);
      const link = new FakeLink(name, handlers);
      links.push(link);
      return link;
    },
    onStarted,
    onResult: vi.fn(),
    onFailed,
  });
  return { connection, links, targets, onFailed, onStarted };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("LiveConnection in direct mode", () => {
  it("uses the provider's socket only: no HTTP fallback while it connects", async () => {
    const { connection, links, targets, onStarted } = setup();
    connection.open("");
    expect(links.map((l) => l.name)).toEqual(["direct"]);
    expect(targets).toEqual([target]);
    await vi.advanceTimersByTimeAsync(6_000);
    expect(links).toHaveLength(1);
    links[0].started(0);
    connection.push(Int16Array.of(1));
    expect(links[0].sent).toEqual([{ seq: 1, value: 1 }]);
    expect(onStarted).toHaveBeenCalledWith("direct", true);
  });

  it("a drop before the start is a connection error; after it, 'connection lost' — never another link", () => {
    const early = setup();
    early.connection.open("");
    early.links[0].drop();
    expect(early.onFailed).toHaveBeenCalledWith({ key: "connectionError" });

    const late = setup();
    late.connection.open("");
    late.links[0].started(0);
    late.links[0].drop();
    expect(late.onFailed).toHaveBeenCalledWith({ key: "connectionLost" });
    expect(late.links).toHaveLength(1);
  });
});

const word = (content: string, start: number, speaker: string) => ({
  type: "word" as const,
  start_time: start,
  end_time: start + 0.5,
  alternatives: [{ content, confidence: 0.9, speaker }],
});
const final = (words: ReturnType<typeof word>[]): TranscriptMessage => ({
  message: "AddTranscript",
  metadata: { start_time: words[0].start_time, end_time: words.at(-1)!.end_time, transcript: "" },
  results: words,
});

describe("the page's record of a direct session", () => {
  it("moves a continued run's finals onto the session's time line", () => {
    const moved = onSessionTimeline(final([word("Schwindel", 1.25, "S2")]), 30.5);
    expect(moved.results[0]).toMatchObject({ start_time: 31.75, end_time: 32.25 });
    expect(moved.metadata).toMatchObject({ start_time: 31.75, end_time: 32.25 });
  });

  it("builds the SPEC §3 save payload the server accepts, with speakers and their statistics", () => {
    const finals = [final([word("Guten", 0, "S1"), word("Tag", 0.6, "S1")]), final([word("Hallo", 2, "S2")])];
    const body = directSaveBody(
      {
        finals,
        language: "de",
        startedAt: new Date("2026-11-22T08:00:00Z"),
        endedAt: new Date("2026-11-22T08:00:04Z"),
        seconds: 3.6,
      },
      {
        template_id: "entlassbrief",
        transcription_mode: "transcript_and_letter",
        additional_context: "Vorbefund",
        original_mime_type: "audio/wav",
        audio_copy: true,
      },
    );
    expect(body).toMatchObject({ language_code: "de-DE", duration: 4, created_via: "realtime" });
    expect(body.transcript_data.speaker_stats).toMatchObject({ S1: { wordCount: 2 }, S2: { wordCount: 1 } });
    const parsed = parseLiveSave(body);
    expect(parsed).toMatchObject({
      language: "de-DE",
      templateId: "entlassbrief",
      mode: "transcript_and_letter",
      additionalContext: "Vorbefund",
      container: "wav",
    });
    expect(parsed.results.map((r) => r.alternatives[0].content)).toEqual(["Guten", "Tag", "Hallo"]);
  });

  it("turns the heard audio into a WAV file of exactly those samples", async () => {
    const copy = wavCopy([Int16Array.of(1, -1, 300), Int16Array.of(-32768)], 16_000);
    expect(copy).toMatchObject({ mimeType: "audio/wav", extension: "wav" });
    const bytes = new DataView(await copy.blob.arrayBuffer());
    const text = (at: number) => String.fromCharCode(...new Uint8Array(bytes.buffer, at, 4));
    expect([text(0), text(8), text(12), text(36)]).toEqual(["RIFF", "WAVE", "fmt ", "data"]);
    expect(bytes.getUint32(24, true)).toBe(16_000);
    expect(bytes.getUint16(34, true)).toBe(16);
    expect(bytes.getUint32(40, true)).toBe(8);
    expect(bytes.byteLength).toBe(44 + 8);
    expect([bytes.getInt16(44, true), bytes.getInt16(48, true), bytes.getInt16(50, true)]).toEqual([1, 300, -32768]);
  });
});
