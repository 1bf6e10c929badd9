import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SIGNED_OUT_REASON, type NumberedMessage } from "../protocol";
import { FakeLink } from "./fake-link";
import { ACK_STALL_MS, LiveConnection, SWITCH_CLOSE_CODE, type ConnectionOptions } from "./transport";

/** A buffer recognisable by its first sample. */
const pcm = (value: number) => Int16Array.of(value, 0, 0);
const final = (n: number, transcript: string): NumberedMessage => ({
  message: "AddTranscript",
  metadata: { start_time: 0, end_time: 1, transcript },
  results: [],
  n,
});

function setup(options: Partial<ConnectionOptions> = {}) {
  const links: FakeLink[] = [];
  const onStarted = vi.fn();
  const onResult = vi.fn();
  const onFailed = vi.fn();
  const connection = new LiveConnection({
    kind: "recording",
    language: "de",
    maxDelay: 3,
    links: (name, _id, handlers) => {
      const link = new FakeLink(name, handlers);
      links.push(link);
      return link;
    },
    onStarted,
    onResult,
    onFailed,
    ...options,
  });
  const last = () => links[links.length - 1];
  return { connection, links, last, onStarted, onResult, onFailed };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("LiveConnection: transports", () => {
  it("streams over the WebSocket when it starts, numbering buffers after the server's count", () => {
    const { connection, links, onStarted } = setup({ lastN: 7 });
    connection.open("s1");
    expect(links.map((l) => l.name)).toEqual(["websocket"]);
    expect(links[0].starts[0]).toEqual({
      message: "StartRecognition",
      audio_format: { type: "raw", encoding: "pcm_s16le", sample_rate: 16_000 },
      transcription_config: { language: "de" },
      last_n: 7,
    });
    // Captured while connecting: held, then sent once the server says where it stands.
    connection.push(pcm(1));
    connection.push(pcm(2));
    expect(links[0].sent).toEqual([]);
    links[0].started(10);
    connection.push(pcm(3));
    expect(links[0].sent).toEqual([
      { seq: 11, value: 1 },
      { seq: 12, value: 2 },
      { seq: 13, value: 3 },
    ]);
    expect(onStarted).toHaveBeenCalledWith("websocket", true);
    expect(connection.buffers).toBe(13);
    expect(connection.currentTransport).toBe("websocket");
  });

  it("falls back to HTTP when RecognitionStarted has not come after 5 s, losing nothing", () => {
    const { connection, links, onStarted } = setup();
    connection.open("s1");
    connection.push(pcm(1));
    vi.advanceTimersByTime(4_999);
    expect(links).toHaveLength(1);
    connection.push(pcm(2));
    vi.advanceTimersByTime(1);
    expect(links.map((l) => l.name)).toEqual(["websocket", "http"]);
    expect(links[0].closedWith).toBe(SWITCH_CLOSE_CODE);
    links[1].started(0);
    expect(links[1].sent.map((s) => [s.seq, s.value])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    expect(onStarted).toHaveBeenCalledWith("http", true);
  });

  it("falls back at once when the WebSocket is refused, and ignores the dead link afterwards", () => {
    const { connection, links } = setup();
    connection.open("s1");
    links[0].drop();
    expect(links.map((l) => l.name)).toEqual(["websocket", "http"]);
    links[0].started(0); // a late message from the abandoned socket
    expect(connection.currentTransport).toBeNull();
  });

  it("goes straight to HTTP where the browser has no WebSocket", () => {
    const { connection, links } = setup({ websocket: false });
    connection.open("s1");
    expect(links.map((l) => l.name)).toEqual(["http"]);
  });

  it.each([
    ["recording", 15_000],
    ["dictation", 10_000],
  ] as const)("reports 'WebSocket connection timeout' for %s only when nothing connects in %i ms", (kind, ms) => {
    const { connection, links, onFailed } = setup({ kind });
    connection.open("s1");
    // The WebSocket hangs; HTTP fails again and again (retried after 1, 2, 4 s).
    vi.advanceTimersByTime(5_000);
    for (let elapsed = 5_000; elapsed < ms - 1;) {
      const current = links[links.length - 1];
      if (current.name === "http" && current.closedWith === null) current.drop();
      const step = Math.min(500, ms - 1 - elapsed);
      vi.advanceTimersByTime(step);
      elapsed += step;
    }
    expect(links.length).toBeGreaterThan(2);
    expect(onFailed).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(onFailed).toHaveBeenCalledWith({ key: "connectTimeout" });
  });
});

describe("LiveConnection: switching mid-session", () => {
  it("resends from the server's last_seq_no + 1 after the WebSocket drops, without gaps or repeats", () => {
    const { connection, links, onStarted } = setup();
    connection.open("s1");
    links[0].started(0);
    for (let v = 1; v <= 5; v++) connection.push(pcm(v));
    links[0].ack(2);
    links[0].drop();
    expect(links[1].name).toBe("http");
    connection.push(pcm(6)); // captured while switching
    links[1].started(3); // the server had received 3 although only 2 were acknowledged
    connection.push(pcm(7));
    expect(links[1].sent.map((s) => [s.seq, s.value])).toEqual([
      [4, 4],
      [5, 5],
      [6, 6],
      [7, 7],
    ]);
    expect(onStarted).toHaveBeenLastCalledWith("http", false);
  });

  it("passes the last message number on, and shows no message twice", () => {
    const { connection, links, onResult } = setup();
    connection.open("s1");
    links[0].started(0);
    links[0].say(final(1, "eins"));
    links[0].say(final(2, "zwei"));
    links[0].drop();
    expect(links[1].starts[0].last_n).toBe(2);
    links[1].started(0);
    links[1].say(final(2, "zwei"));
    links[1].say(final(3, "drei"));
    expect(onResult.mock.calls.map(([m]) => m.metadata.transcript)).toEqual(["eins", "zwei", "drei"]);
    expect(connection.lastMessageNumber).toBe(3);
  });

  it("treats a link that acknowledges nothing for 20 s as dropped", () => {
    const { connection, links } = setup();
    connection.open("s1");
    links[0].started(0);
    connection.push(pcm(1));
    vi.advanceTimersByTime(ACK_STALL_MS + 1_000);
    expect(links.map((l) => l.name)).toEqual(["websocket", "http"]);
    links[1].started(0);
    expect(links[1].sent.map((s) => s.seq)).toEqual([1]);
  });

  it("keeps retrying HTTP, then reports 'Connection lost' when it cannot get back within 15 s", () => {
    const { connection, links, onFailed } = setup();
    connection.open("s1");
    links[0].started(0);
    links[0].drop();
    links[1].drop();
    vi.advanceTimersByTime(1_000);
    expect(links).toHaveLength(3);
    links[2].drop();
    vi.advanceTimersByTime(2_000);
    expect(links).toHaveLength(4);
    vi.advanceTimersByTime(11_999);
    expect(onFailed).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(onFailed).toHaveBeenCalledWith({ key: "connectionLost" });
    expect(links[3].closedWith).toBe(1000);
  });

  it("reports the engine's Error, and a refused sign-in as an authentication failure", () => {
    const first = setup();
    first.connection.open("s1");
    first.links[0].started(0);
    first.links[0].say({ message: "Error", type: "quota_exceeded", reason: "Quota exceeded" });
    expect(first.onFailed).toHaveBeenCalledWith({ key: "transcriptionError", values: { reason: "Quota exceeded" } });
    const second = setup();
    second.connection.open("s1");
    second.links[0].say({ message: "Error", type: "not_authorised", reason: "no" });
    expect(second.onFailed).toHaveBeenCalledWith({ key: "authFailed" });
    const third = setup();
    third.connection.open("s1");
    third.links[0].handlers.closed({ code: 1006, failure: { key: "authFailed" } });
    expect(third.onFailed).toHaveBeenCalledWith({ key: "authFailed" });
    expect(third.links).toHaveLength(1);
    // The clinician's own sign-in ended (the door's reason): said as such, not as the service's refusal.
    const fourth = setup();
    fourth.connection.open("s1");
    fourth.links[0].started(0);
    fourth.links[0].say({ message: "Error", type: "not_authorised", reason: SIGNED_OUT_REASON });
    expect(fourth.onFailed).toHaveBeenCalledWith({ key: "signedOut" });
  });
});

describe("LiveConnection: the stop sequence", () => {
  function streaming() {
    const s = setup();
    s.connection.open("s1");
    s.links[0].started(0);
    for (let v = 1; v <= 3; v++) s.connection.push(pcm(v));
    return s;
  }

  it("sends EndOfStream after the last buffer and closes with 1000 on EndOfTranscript", async () => {
    const { connection, links, onResult } = streaming();
    const ended = connection.end();
    expect(links[0].ends).toEqual([{ message: "EndOfStream", last_seq_no: 3 }]);
    connection.push(pcm(99)); // nothing more after EndOfStream
    links[0].ack(3);
    links[0].say(final(1, "letzte Worte"));
    links[0].say({ message: "EndOfTranscript", n: 2 });
    await expect(ended).resolves.toBe(true);
    expect(onResult).toHaveBeenCalledTimes(1);
    expect(links[0].closedWith).toBe(1000);
    expect(links[0].sent.map((s) => s.seq)).toEqual([1, 2, 3]);
  });

  it("waits for EndOfTranscript at most max_delay + 3 s once the server holds every buffer", async () => {
    const { connection, links } = streaming();
    let done: boolean | null = null;
    void connection.end().then((complete) => (done = complete));
    // Audio still unacknowledged: the wait has not begun (closing now could lose it).
    await vi.advanceTimersByTimeAsync(10_000);
    expect(done).toBeNull();
    links[0].ack(3);
    await vi.advanceTimersByTimeAsync(5_999);
    expect(done).toBeNull();
    await vi.advanceTimersByTimeAsync(1);
    // Ended by the time-out, not by EndOfTranscript: results may still follow on the server.
    expect(done).toBe(false);
    expect(links[0].closedWith).toBe(1000);
  });

  it("delivers the rest over HTTP when the socket drops during the stop", async () => {
    const { connection, links } = streaming();
    links[0].ack(1);
    const ended = connection.end();
    links[0].drop();
    links[1].started(1);
    expect(links[1].sent.map((s) => s.seq)).toEqual([2, 3]);
    expect(links[1].ends).toEqual([{ message: "EndOfStream", last_seq_no: 3 }]);
    links[1].ack(3);
    links[1].say({ message: "EndOfTranscript" });
    await expect(ended).resolves.toBe(true);
  });

  it("rejects the stop with 'Error stopping transcription' when the connection is lost meanwhile", async () => {
    const { connection, links, onFailed } = streaming();
    const ended = connection.end();
    const rejected = expect(ended).rejects.toMatchObject({
      failure: { key: "stopFailed", cause: { key: "connectionLost" } },
    });
    links[0].drop();
    links[1].drop();
    await vi.advanceTimersByTimeAsync(15_000);
    await rejected;
    expect(onFailed).not.toHaveBeenCalled();
  });

  it("ends at once when stopped before any transport connected", async () => {
    const { connection, links } = setup();
    connection.open("s1");
    connection.push(pcm(1));
    await expect(connection.end()).resolves.toBe(false);
    expect(links[0].closedWith).toBe(1000);
  });
});
