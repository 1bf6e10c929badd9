import { Readable } from "node:stream";

import { createReadableStreamFromReadable } from "@remix-run/node";

import type { ByteRange } from "./types.server";

// HTTP plumbing of the local object store: Range headers, and turning request and response bodies into the
// stream types Node and the web API each expect.

/** An upload body: bytes, a Node stream, or the web stream a Remix action hands over as `request.body`. */
type StreamBody = Uint8Array | NodeJS.ReadableStream | ReadableStream<Uint8Array>;

/**
 * Parses a single-range `Range` header against an object of `size` bytes. Returns null when the header is
 * absent, malformed or asks for several ranges (all of which RFC 9110 lets a server answer with the whole
 * object), and "unsatisfiable" for a 416.
 */
export function parseRangeHeader(header: string | null, size: number): ByteRange | "unsatisfiable" | null {
  if (header === null) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null;
  const [, first = "", last = ""] = match;
  if (first === "" && last === "") return null;
  if (first === "") {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === "" ? size - 1 : Math.min(Number(last), size - 1);
  if (start >= size || (last !== "" && Number(last) < start)) return "unsatisfiable";
  return { start, end };
}

/** For a Response body. Lives here so the route module imports no Node built-ins. */
export function toWebStream(stream: NodeJS.ReadableStream): ReadableStream<Uint8Array> {
  return createReadableStreamFromReadable(stream instanceof Readable ? stream : new Readable().wrap(stream));
}

function isWebStream(body: StreamBody): body is ReadableStream<Uint8Array> {
  return typeof (body as Partial<ReadableStream<Uint8Array>>).getReader === "function";
}

/** The chunks of an upload body, whatever its kind. */
export async function* chunksOf(body: StreamBody): AsyncGenerator<Uint8Array> {
  if (body instanceof Uint8Array) {
    yield body;
    return;
  }
  if (isWebStream(body)) {
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally {
      // Release rather than cancel: cancelling a request body destroys the socket in Node adapters, and
      // the client would then never see the 413.
      reader.releaseLock();
    }
  }
  for await (const chunk of body) {
    yield typeof chunk === "string" ? Buffer.from(chunk) : chunk;
  }
}
