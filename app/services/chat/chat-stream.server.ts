import { toTemplateLanguage, type Language } from "~/i18n";
import { apiJson } from "../web/api.server";
import { auditChat, auditChatMessage } from "../audit/events.server";
import { DomainError, statusFor } from "../web/domain-error.server";
import { getFixedTFor } from "../web/i18n.server";
import { chatErrorText, readChatForm } from "./chat-form.server";
import type { ChatLanguage } from "./chat-prompt";
import { answerQuestion, prepareQuestion } from "./chat.server";

// The chat screen's streamed send (issue 8; the page's script, app/pe/chat.js, posts the question form here).
// A refused send is a JSON {detail} in the clinician's language with its status (409 while an answer is being
// written), before anything reaches the model. An accepted one answers with server-sent events:
//   data: {"type":"start","id":"<answer id>"}
//   data: {"type":"text","text":"<a piece of the answer>"}        (as the model writes)
//   data: {"type":"done","content":"<the whole answer>","truncated":false}
//   data: {"type":"error","message":"Sorry, I encountered an error. Please try again."}
// The answer is written and stored whether or not the browser stays: a reload shows it. Comment pings keep
// proxies from closing a stream that waits for a busy local engine.

const PING_MS = 15_000;

export async function streamChatAnswer(args: { request: Request; userId: string; language: Language }) {
  const { request, userId, language } = args;
  let prepared;
  try {
    const form = await readChatForm(request);
    if (form.intent !== "send") throw new DomainError("invalid", "chat:errors.questionRequired");
    prepared = await prepareQuestion({
      userId,
      language: toTemplateLanguage(language) as ChatLanguage,
      question: form.question,
      pdfs: form.pdfs,
    });
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    await auditChat(request, userId, "chat.ask", "failure");
    return apiJson({ detail: await chatErrorText(language, error) }, { status: statusFor(error.kind) });
  }
  await auditChatMessage(request, userId, "chat.ask", prepared.answerId);
  const apology = (await getFixedTFor(language, ["chat"]))("chat:errors.apology");
  const encoder = new TextEncoder();
  let open = true;
  let ping: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (chunk: string) => {
        if (!open) return;
        try {
          controller.enqueue(encoder.encode(chunk));
        } catch {
          open = false;
        }
      };
      const event = (data: unknown) => send(`data: ${JSON.stringify(data)}\n\n`);
      ping = setInterval(() => send(": ping\n\n"), PING_MS);
      event({ type: "start", id: prepared.answerId });
      void answerQuestion(prepared, (text) => event({ type: "text", text })).then((outcome) => {
        clearInterval(ping);
        if (outcome.status === "done")
          event({ type: "done", content: outcome.content, truncated: outcome.contextTruncated });
        else event({ type: "error", message: apology });
        if (open) controller.close();
        open = false;
      });
    },
    cancel() {
      // The browser went away: the answer is still written and stored.
      open = false;
      clearInterval(ping);
    },
  });
  return new Response(body, {
    headers: {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache, no-transform",
      "X-Accel-Buffering": "no",
    },
  });
}
