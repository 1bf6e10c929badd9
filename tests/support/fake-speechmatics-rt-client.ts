import { WebSocket } from "ws";

// A bare WebSocket client for the fake Speechmatics realtime server's own tests: it records every message
// and lets a test wait for a condition on them instead of sleeping.

export type Message = { message: string; [key: string]: unknown };
export type Result = {
  type: string;
  start_time: number;
  end_time: number;
  attaches_to?: string;
  alternatives: Array<{ content: string; speaker?: string }>;
};

export const AUTH = { Authorization: "Bearer test-key" };

/** The HTTP status the handshake got: 101 on success. */
export function handshake(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.on("open", () => {
      ws.close(1000);
      resolve(101);
    });
    ws.on("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on("error", () => {});
  });
}

export function client(url: string, headers: Record<string, string> = AUTH) {
  const ws = new WebSocket(url, { headers });
  const messages: Message[] = [];
  const checks: Array<() => void> = [];
  ws.on("message", (data) => {
    messages.push(JSON.parse(String(data)) as Message);
    checks.forEach((check) => check());
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => {
      resolve({ code, reason: reason.toString() });
      checks.forEach((check) => check());
    }),
  );
  const opened = new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  return {
    ws,
    messages,
    opened,
    closed,
    /** Resolves once `done(messages)` holds, or the socket closed (the caller's expectations then fail). */
    until(done: (all: Message[]) => boolean): Promise<Message[]> {
      return new Promise((resolve) => {
        const check = () => {
          if (done(messages) || ws.readyState === ws.CLOSED) resolve(messages);
        };
        checks.push(check);
        check();
      });
    },
    send(message: Record<string, unknown>) {
      ws.send(JSON.stringify(message));
    },
  };
}

export function start(config: Record<string, unknown> = {}, format: Record<string, unknown> = {}) {
  return {
    message: "StartRecognition",
    audio_format: { type: "raw", encoding: "pcm_s16le", sample_rate: 16_000, ...format },
    transcription_config: { language: "de", operating_point: "enhanced", ...config },
  };
}

export const named = (name: string) => (all: Message[]) => all.some((m) => m.message === name);
export const finals = (all: Message[]) => all.filter((m) => m.message === "AddTranscript");
export const resultsOf = (list: Message[]) => list.flatMap((m) => m.results as Result[]);

export function joined(results: Result[]) {
  return results.map((r, i) => (i > 0 && r.attaches_to !== "previous" ? " " : "") + r.alternatives[0].content).join("");
}

/** Streams `frames` after RecognitionStarted, then EndOfStream, and waits for EndOfTranscript. */
export async function session(url: string, config: Record<string, unknown>, frames: Buffer[], format = {}) {
  const c = client(url);
  await c.opened;
  c.send(start(config, format));
  await c.until(named("RecognitionStarted"));
  for (const frame of frames) c.ws.send(frame);
  c.send({ message: "EndOfStream", last_seq_no: frames.length });
  await c.until(named("EndOfTranscript"));
  return c;
}
