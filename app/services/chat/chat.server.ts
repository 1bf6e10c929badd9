import {
  clearChat,
  deleteExpiredChats,
  failStalePendingAnswers,
  findPendingAnswer,
  finishAnswer,
  insertChatContext,
  insertChatTurn,
  listChatContext,
  listChatContextNames,
  listChatMessages,
  touchPendingAnswer,
} from "~/models/chat.server";
import { lockUser } from "~/models/saved-prompt.server";
import { auditChatMessage } from "../audit/events.server";
import { getConfig } from "../config/config.server";
import { getDb } from "../../models/db.server";
import { DomainError } from "../web/domain-error.server";
import { getLanguageModel } from "../llm/engine.server";
import type { TextSink } from "../llm/types";
import { hitRateLimit } from "../web/rate-limit.server";
import { meterCall, recordTokens } from "../admin/usage.server";
import { scanUploadedFiles } from "../antivirus/antivirus.server";
import { checkChatPdfs, extractChatPdfs, type UploadedPdf } from "./chat-pdf.server";
import {
  CHAT_QUESTION_MAX_CHARS,
  chatAnswerTokens,
  planChatMessages,
  type ChatContextFile,
  type ChatLanguage,
  type ChatTurn,
} from "./chat-prompt";

// The chat conversation (issue 8, SPEC §2/§4 "Chat"): one per user, kept on the server. A send stores the
// question and a pending answer in one transaction — refused while another answer is pending, so a second send
// never reaches the model — then asks the model (streamed when the caller can show it) and stores the answer,
// or marks it failed (SPEC §8: the screen shows the apology). The writer keeps a heartbeat on the pending
// answer; one whose heartbeat stopped (its process died) counts as failed. Both doors — the form post and the
// event stream of the screen — go through prepareQuestion and answerQuestion; the JSON API's stateless call is
// chat-api.server.ts.

export const CHAT_ENDPOINT = "chat-request" as const;
/** Questions per user and hour: each one costs model time (and, with a paid API, money). */
export const CHATS_PER_HOUR = 120;
export const HEARTBEAT_MS = 15_000;
/** A pending answer without a heartbeat for this long has lost its writer. */
export const ANSWER_STALE_MS = 4 * HEARTBEAT_MS;

function staleBefore(now = new Date()) {
  return new Date(now.getTime() - ANSWER_STALE_MS);
}

/** What the chat screen shows: the messages (a pending answer without writer as failed) and the PDF names. */
export async function getConversation({ userId, now = new Date() }: { userId: string; now?: Date }) {
  const [messages, context] = await Promise.all([
    listChatMessages({ ownerId: userId }),
    listChatContextNames({ ownerId: userId }),
  ]);
  const stale = staleBefore(now);
  return {
    messages: messages.map((m) => ({
      id: m.id,
      role: m.role,
      content: m.content,
      status: m.status === "pending" && m.updated_at < stale ? ("failed" as const) : m.status,
      contextTruncated: m.context_truncated,
    })),
    context: context.map((c) => ({ id: c.id, name: c.file_name, readable: Boolean(c.readable) })),
    hasReply: answeredOrAnswering(messages),
  };
}

/** An answer given or being written closes the PDF area; a failed one does not (the question can go again). */
function answeredOrAnswering(messages: Array<{ role: string; status: string }>) {
  return messages.some((m) => m.role === "assistant" && m.status !== "failed");
}

export async function checkRateLimit(userId: string) {
  const verdict = await hitRateLimit({ bucket: `chat:${userId}`, limit: CHATS_PER_HOUR, windowSeconds: 3600, userId });
  if (!verdict.allowed) throw new DomainError("rate_limited", "chat:errors.tooManyRequests");
}

function checkQuestion(value: unknown): string {
  const question = typeof value === "string" ? value.trim() : "";
  if (!question) throw new DomainError("invalid", "chat:errors.questionRequired");
  if (question.length > CHAT_QUESTION_MAX_CHARS)
    throw new DomainError("invalid", "chat:errors.questionTooLong", [], { max: String(CHAT_QUESTION_MAX_CHARS) });
  return question;
}

/**
 * PDFs are context only until the first answer (SPEC §2); later ones would change a conversation under way. Each
 * is scanned (ADR 0024) before it is read; nothing of a refused upload is kept.
 */
async function checkAttachable(userId: string, pdfs: UploadedPdf[]) {
  const [messages, context] = await Promise.all([
    listChatMessages({ ownerId: userId }),
    listChatContextNames({ ownerId: userId }),
  ]);
  if (answeredOrAnswering(messages)) throw new DomainError("conflict", "chat:errors.contextClosed");
  checkChatPdfs(pdfs, context.length);
  await scanUploadedFiles({ userId, entityType: "chat" }, pdfs);
}

async function assertNotBusy(userId: string) {
  await failStalePendingAnswers(getDb(), { before: staleBefore(), ownerId: userId });
  if (await findPendingAnswer(getDb(), { ownerId: userId })) throw new DomainError("conflict", "chat:errors.busy");
}

/** "Add PDF" without a question: the conversation's context grows (SPEC §4 "with PDF context"). */
export async function attachPdfs(args: { userId: string; pdfs: UploadedPdf[] }) {
  if (args.pdfs.length === 0) throw new DomainError("invalid", "chat:errors.noPdfChosen");
  await checkAttachable(args.userId, args.pdfs);
  const files = await extractChatPdfs(args.pdfs);
  await insertChatContext(getDb(), { ownerId: args.userId, files });
  return { attached: files.filter((file) => file.text.trim()).length };
}

export type PreparedQuestion = {
  userId: string;
  answerId: string;
  language: ChatLanguage;
  question: string;
  history: ChatTurn[];
  context: ChatContextFile[];
};

/**
 * A send, up to the model call: checks, PDFs attached with it, the question and its pending answer stored.
 * Refused (DomainError) while another answer is pending, so nothing reaches the model twice.
 */
export async function prepareQuestion(args: {
  userId: string;
  language: ChatLanguage;
  question: unknown;
  pdfs?: UploadedPdf[];
}): Promise<PreparedQuestion> {
  const question = checkQuestion(args.question);
  const pdfs = args.pdfs ?? [];
  if (pdfs.length > 0) await checkAttachable(args.userId, pdfs);
  await assertNotBusy(args.userId);
  await checkRateLimit(args.userId);
  const files = pdfs.length > 0 ? await extractChatPdfs(pdfs) : [];
  const answerId = await getDb()
    .transaction()
    .execute(async (trx) => {
      await lockUser(trx, args.userId);
      await failStalePendingAnswers(trx, { before: staleBefore(), ownerId: args.userId });
      if (await findPendingAnswer(trx, { ownerId: args.userId })) throw new DomainError("conflict", "chat:errors.busy");
      await insertChatContext(trx, { ownerId: args.userId, files });
      return (await insertChatTurn(trx, { ownerId: args.userId, question })).id;
    })
    .catch((error: unknown) => {
      // Two sends racing past the lock (another database) meet the one-pending-answer index.
      if ((error as { code?: string }).code === "23505") throw new DomainError("conflict", "chat:errors.busy");
      throw error;
    });
  // The screen's send is SPEC §7's chat-request by another door: one call on the usage dashboard.
  meterCall(args.userId, CHAT_ENDPOINT);
  const [messages, context] = await Promise.all([
    listChatMessages({ ownerId: args.userId }),
    listChatContext({ ownerId: args.userId }),
  ]);
  // The earlier conversation: answered questions and their answers (a failed turn is left out).
  const history: ChatTurn[] = [];
  for (let i = 0; i < messages.length - 2; i++) {
    const [asked, answered] = [messages[i]!, messages[i + 1]];
    if (asked.role !== "user" || answered?.role !== "assistant" || answered.status !== "done") continue;
    history.push({ role: "user", content: asked.content }, { role: "assistant", content: answered.content });
  }
  return {
    userId: args.userId,
    answerId,
    language: args.language,
    question,
    history,
    context: context.map((c) => ({ name: c.file_name, text: c.text })),
  };
}

export type AnswerOutcome = { status: "done"; content: string; contextTruncated: boolean } | { status: "failed" };

/** The model's answer to a prepared question, streamed to `onText` when given; never throws. */
export async function answerQuestion(prepared: PreparedQuestion, onText?: TextSink): Promise<AnswerOutcome> {
  const { userId, answerId } = prepared;
  const controller = new AbortController();
  const heartbeat = setInterval(() => {
    touchPendingAnswer({ ownerId: userId, id: answerId }).then(
      (pending) => {
        // Cleared meanwhile ("clear chat"): nobody waits for this answer any more.
        if (!pending) controller.abort(new Error("the chat was cleared"));
      },
      (error: unknown) => console.warn("[chat] heartbeat failed:", (error as Error).message),
    );
  }, HEARTBEAT_MS);
  let contextTruncated = false;
  try {
    const model = getLanguageModel();
    const maxTokens = chatAnswerTokens(model.contextTokens);
    const plan = planChatMessages(prepared, {
      contextTokens: model.contextTokens,
      countTokens: (text) => model.countTokens(text),
      maxTokens,
    });
    contextTruncated = plan.contextTruncated;
    const request = { messages: plan.messages, maxTokens, temperature: 0.3, signal: controller.signal };
    const result = onText && model.chatStream ? await model.chatStream(request, onText) : await model.chat(request);
    if (onText && !model.chatStream) onText(result.content);
    await recordTokens(userId, CHAT_ENDPOINT, result.usage, model.name === "local");
    const content = result.content.trim();
    if (!content) throw new Error("the model answered with no text");
    await finishAnswer({ ownerId: userId, id: answerId, status: "done", content, contextTruncated });
    await auditChatMessage(undefined, userId, "chat.answer", answerId);
    return { status: "done", content, contextTruncated };
  } catch (error) {
    // The message of an engine failure names the engine and the status, never the conversation.
    console.warn("[chat] the answer failed:", error instanceof Error ? error.message : String(error));
    await finishAnswer({ ownerId: userId, id: answerId, status: "failed", content: "", contextTruncated }).catch(
      (finishError: unknown) => console.warn("[chat] could not record the failure:", (finishError as Error).message),
    );
    await auditChatMessage(undefined, userId, "chat.answer", answerId, "failure").catch(() => undefined);
    return { status: "failed" };
  } finally {
    clearInterval(heartbeat);
  }
}

/** SPEC §4 "Clear chat": messages and context (the input is the screen's). */
export async function clearConversation({ userId }: { userId: string }) {
  return clearChat({ ownerId: userId });
}

/** The minute sweep: answers whose writer died fail; conversations past their retention go. */
export async function sweepChats(now = new Date()) {
  const failed = await failStalePendingAnswers(getDb(), { before: staleBefore(now) });
  const deleted = await deleteExpiredChats(new Date(now.getTime() - getConfig().chat.retentionMs));
  return { failed, ...deleted };
}
