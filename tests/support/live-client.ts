import { readFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import WebSocket from "ws";
import { LIVE_BUFFER_BYTES, type NumberedMessage } from "~/live/protocol";
import { handleLiveUpgrade } from "~/services/live/transport-ws.server";
import { makeSpeechWav } from "./audio-fixtures";

// What the live tests drive the app's live door with: the WebSocket door served by a real HTTP server (the
// same upgrade handler server/index.mjs installs), a WebSocket client that records what it is sent, and speech as
// 16-bit PCM cut into the recorder's 4096-sample buffers.

export async function startLiveDoor() {
  const server = http.createServer((_req, res) => {
    res.statusCode = 404;
    res.end();
  });
  server.on("upgrade", (req, socket, head) => void handleLiveUpgrade(req, socket, head));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/live/ws`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Speech sentences with a second of silence between them, as s16le PCM buffers of 4096 samples. */
export async function speechBuffers(dir: string, sentences: string[]) {
  const parts: Buffer[] = [];
  for (const sentence of sentences) {
    const wav = await readFile(await makeSpeechWav(dir, sentence));
    // sox writes a plain 44-byte header for 16-bit mono PCM.
    parts.push(wav.subarray(44), Buffer.alloc(16_000 * 2));
  }
  const pcm = Buffer.concat(parts);
  const buffers: Buffer[] = [];
  for (let at = 0; at < pcm.length; at += LIVE_BUFFER_BYTES) buffers.push(pcm.subarray(at, at + LIVE_BUFFER_BYTES));
  return buffers;
}

export type LiveSocket = {
  socket: WebSocket;
  messages: NumberedMessage[];
  /** Resolves with the first message (already received or later) that matches. */
  next(match: (message: NumberedMessage) => boolean): Promise<NumberedMessage>;
  closed: Promise<{ code: number; reason: string }>;
};

export function openLiveSocket(url: string, headers: Record<string, string>): Promise<LiveSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    const messages: NumberedMessage[] = [];
    const waiters: Array<{ match: (m: NumberedMessage) => boolean; resolve: (m: NumberedMessage) => void }> = [];
    const closed = new Promise<{ code: number; reason: string }>((done) =>
      socket.on("close", (code, reason) => done({ code, reason: reason.toString() })),
    );
    socket.on("message", (data) => {
      const message = JSON.parse(String(data)) as NumberedMessage;
      messages.push(message);
      for (const waiter of [...waiters])
        if (waiter.match(message)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(message);
        }
    });
    socket.on("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    socket.on("error", reject);
    socket.on("open", () =>
      resolve({
        socket,
        messages,
        closed,
        next: (match) => {
          const seen = messages.find(match);
          return seen ? Promise.resolve(seen) : new Promise((done) => waiters.push({ match, resolve: done }));
        },
      }),
    );
  });
}

/** Reads server-sent events from a Response until `until` matches; returns the messages in order. */
export async function readEvents(response: Response, until: (message: NumberedMessage) => boolean) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const messages: NumberedMessage[] = [];
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return messages;
    text += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = text.indexOf("\n\n")) >= 0) {
      const event = text.slice(0, cut);
      text = text.slice(cut + 2);
      const data = event
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => line.slice(6))
        .join("\n");
      if (!data) continue;
      const message = JSON.parse(data) as NumberedMessage;
      messages.push(message);
      if (until(message)) {
        await reader.cancel();
        return messages;
      }
    }
  }
}
