import type { Response } from "undici";

import { errorBodyInfo } from "../speech/retry";
import { LlmError, type TextSink } from "./types";

// A streamed chat completion as OpenAI-compatible servers send it (PROTOCOLS.md §3.2): `text/event-stream`,
// one `data: {"object":"chat.completion.chunk","choices":[{"delta":{"content":…},"finish_reason":…}]}` per
// event, the last content chunk with `finish_reason`, optionally one more chunk with `choices: []` and `usage`
// (stream_options.include_usage), then `data: [DONE]`. An error in mid-stream is an event `{"error":{…}}`.
// Comment lines (": ping"), `event:`/`id:`/`retry:` fields and CRLF line ends are tolerated, as any SSE reader
// must. A stream that ends without [DONE] and without a finish_reason broke off on the way.

/** What one chat-completions answer said, streamed or not. */
export type Completion = {
  content: string | null;
  refusal: string | null;
  finishReason: string | null;
  usage: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
};

type Chunk = {
  error?: unknown;
  usage?: unknown;
  choices?: Array<{ delta?: { content?: unknown; refusal?: unknown }; finish_reason?: unknown }>;
};

/** The `data` of one event (its data lines joined by newlines), or null for an event without data. */
function eventData(event: string): string | null {
  const lines = event
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).replace(/^ /, ""));
  return lines.length > 0 ? lines.join("\n") : null;
}

function streamError(host: string, chunk: Chunk): LlmError {
  const info = errorBodyInfo(JSON.stringify(chunk));
  const transient = /server_error|overloaded|unavailable|timeout/i.test(`${info.type ?? ""} ${info.code ?? ""}`);
  return new LlmError(
    transient ? "transient" : "permanent",
    `${host} reported an error in the middle of the answer${info.message ? `: ${info.message}` : ""}`,
  );
}

/**
 * Reads the stream to its end, handing each piece of content to `onText`; resolves with the whole answer.
 * Rejects with the caller's abort reason when `signal` aborts, and with a transient LlmError when the stream
 * breaks off (the caller decides whether a retry is still possible).
 */
export async function readCompletionStream(
  response: Response,
  options: { host: string; onText: TextSink; signal?: AbortSignal },
): Promise<Completion> {
  const { host, onText, signal } = options;
  const completion: Completion = { content: null, refusal: null, finishReason: null, usage: null };
  const decoder = new TextDecoder();
  let buffer = "";
  let done = false;

  const handle = (data: string) => {
    if (data === "[DONE]") {
      done = true;
      return;
    }
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data) as Chunk;
    } catch (error) {
      throw new LlmError("transient", `${host} sent a stream event that is not JSON`, { cause: error });
    }
    if (chunk.error) throw streamError(host, chunk);
    if (typeof chunk.usage === "object" && chunk.usage !== null) completion.usage = chunk.usage as Completion["usage"];
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!choice) return;
    const text = choice.delta?.content;
    if (typeof text === "string" && text) {
      completion.content = (completion.content ?? "") + text;
      onText(text);
    }
    const refusal = choice.delta?.refusal;
    if (typeof refusal === "string" && refusal) completion.refusal = (completion.refusal ?? "") + refusal;
    if (typeof choice.finish_reason === "string") completion.finishReason = choice.finish_reason;
  };

  try {
    if (!response.body) throw new LlmError("transient", `${host} answered without a body`);
    for await (const bytes of response.body) {
      buffer += decoder.decode(bytes as Uint8Array, { stream: true });
      let end: RegExpExecArray | null;
      while (!done && (end = /\r?\n\r?\n/.exec(buffer))) {
        const event = buffer.slice(0, end.index);
        buffer = buffer.slice(end.index + end[0].length);
        const data = eventData(event);
        if (data !== null) handle(data);
      }
      if (done) break;
    }
    const rest = eventData(buffer + decoder.decode());
    if (!done && rest !== null) handle(rest);
  } catch (error) {
    if (signal?.aborted) throw signal.reason ?? error;
    if (error instanceof LlmError) throw error;
    throw new LlmError("transient", `The answer from ${host} broke off or did not complete in time`, {
      cause: error,
    });
  }
  if (!done && completion.finishReason === null) {
    throw new LlmError("transient", `The answer from ${host} broke off before it was complete`);
  }
  return completion;
}
