import { DomainError } from "../web/domain-error.server";
import { recordTokens } from "../admin/usage.server";
import { getLanguageModel } from "../llm/engine.server";
import { chatAnswerTokens, planChatMessages, type ChatLanguage, type ChatTurn } from "./chat-prompt";
import { CHAT_ENDPOINT, checkRateLimit } from "./chat.server";

// SPEC §7 POST /api/chat-request { messages, language } → { message }: stateless, as the spec has it — the
// caller sends the whole conversation (with any PDF context already prefixed to its question, SPEC §7 notes)
// and nothing is stored. Same system prompt, context planning and usage as the screen's chat. Only user and
// assistant messages are taken: a caller cannot hand the model a system message of its own.

export const API_MAX_MESSAGES = 100;
/** All messages together; PDF context prefixed by the caller makes a question long. */
export const API_MAX_CHARS = 400_000;
const LANGUAGES: ChatLanguage[] = ["de-DE", "en-GB"];

export function readChatRequest(body: Record<string, unknown>) {
  const language = body.language ?? "de-DE";
  if (typeof language !== "string" || !LANGUAGES.includes(language as ChatLanguage))
    throw new DomainError("invalid", "chat:errors.languageInvalid");
  const raw = body.messages;
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > API_MAX_MESSAGES)
    throw new DomainError("invalid", "chat:errors.messagesInvalid", [], { max: String(API_MAX_MESSAGES) });
  const messages: ChatTurn[] = raw.map((item: unknown) => {
    const { role, content } = (item ?? {}) as { role?: unknown; content?: unknown };
    if ((role !== "user" && role !== "assistant") || typeof content !== "string")
      throw new DomainError("invalid", "chat:errors.messagesInvalid", [], { max: String(API_MAX_MESSAGES) });
    return { role, content };
  });
  const last = messages[messages.length - 1]!;
  if (last.role !== "user" || !last.content.trim()) throw new DomainError("invalid", "chat:errors.questionRequired");
  if (messages.reduce((sum, m) => sum + m.content.length, 0) > API_MAX_CHARS)
    throw new DomainError("invalid", "chat:errors.messagesTooLong");
  return { language: language as ChatLanguage, messages };
}

/** The model's answer to the conversation; an engine failure is SPEC §8's apology (502). */
export async function answerChatRequest(args: { userId: string; body: Record<string, unknown> }) {
  const { language, messages } = readChatRequest(args.body);
  await checkRateLimit(args.userId);
  const model = getLanguageModel();
  const maxTokens = chatAnswerTokens(model.contextTokens);
  try {
    const plan = planChatMessages(
      { language, history: messages.slice(0, -1), question: messages[messages.length - 1]!.content, context: [] },
      { contextTokens: model.contextTokens, countTokens: (text) => model.countTokens(text), maxTokens },
    );
    const result = await model.chat({ messages: plan.messages, maxTokens, temperature: 0.3 });
    await recordTokens(args.userId, CHAT_ENDPOINT, result.usage, model.name === "local");
    if (!result.content.trim()) throw new Error("the model answered with no text");
    return { message: result.content.trim() };
  } catch (error) {
    console.warn("[chat] the API answer failed:", error instanceof Error ? error.message : String(error));
    throw new DomainError("unavailable", "chat:errors.apology");
  }
}
