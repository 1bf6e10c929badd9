import { findDataBlocks } from "../../app/services/letters/data-blocks";
import {
  CHAT_ANSWER_PREFIX,
  CHAT_CONTEXT_PREFIX,
  CHAT_FAILURE_MARKER,
  CHAT_SLOW_MARKER,
  CHAT_SLOW_MS,
} from "./fake-llm-chat-names";
import { reply, type FakeChatReply, type FakeChatRequest } from "./fake-openai-chat";

// The named chat behaviour of the tests' language model (scripts/fake-llm-server.mjs, via fake-llm-letters.ts's
// plain-chat case): a deterministic answer that says what reached the model, so the end-to-end tests can check
// it on the screen (the names are in fake-llm-chat-names.ts): "Antwort auf: <question>", plus
// " | PDF <name>: <first line>" for each PDF block of the question; a failure marker gets a server error, a slow
// marker an answer after a few seconds.

/** The question of the last user message: its text after the PDF blocks and notes. */
export function questionOf(content: string): string {
  const parts = content.split(/\n\n/);
  return (parts[parts.length - 1] ?? "").trim();
}

export function chatModel(request: FakeChatRequest): FakeChatReply {
  const messages = (request.body?.messages ?? []) as Array<{ role: string; content: string }>;
  const last = [...messages].reverse().find((m) => m.role === "user")?.content ?? "";
  const question = questionOf(last);
  if (question.includes(CHAT_FAILURE_MARKER)) return reply.error(500, { message: "Simulated failure" });
  const context = findDataBlocks(last)
    .filter((block) => block.kind === "CONTEXT")
    .map((block) => `${CHAT_CONTEXT_PREFIX}${block.attributes.name}: ${block.body.split("\n")[0]}`);
  const answer = reply.text(`${CHAT_ANSWER_PREFIX}${question}${context.join("")}`);
  return question.includes(CHAT_SLOW_MARKER) ? reply.slow(CHAT_SLOW_MS, answer) : answer;
}
