import { json, redirect } from "@remix-run/node";
import { toTemplateLanguage } from "~/i18n";
import { auditChat, type ChatAction } from "~/services/audit/events.server";
import { chatErrorText, readChatForm, type ChatForm } from "~/services/chat/chat-form.server";
import { CHAT_INTENT } from "~/services/chat/chat-form.schema";
import type { ChatLanguage } from "~/services/chat/chat-prompt";
import { answerQuestion, attachPdfs, clearConversation, prepareQuestion } from "~/services/chat/chat.server";
import { DomainError, statusFor } from "~/services/web/domain-error.server";
import { getLanguage } from "~/services/web/i18n.server";
import type { SessionUser } from "~/services/web/session.server";

// The chat screen's intents as plain form posts (STYLE.md §6–7), so the chat works without JavaScript: "send"
// waits for the whole answer and then redirects to the conversation's end; "attach" adds PDF context; "clear"
// empties the conversation. A refused intent renders the page again with the message and the typed question.

export type ChatActionData = { error: string; question: string };

function audited(user: SessionUser, action: ChatAction, request: Request, outcome: "success" | "failure" = "success") {
  return auditChat(request, user.id, action, outcome);
}

export async function chatAction(user: SessionUser, request: Request) {
  const language = await getLanguage(request);
  let form: ChatForm | undefined;
  try {
    form = await readChatForm(request);
    switch (form.intent) {
      case CHAT_INTENT.send: {
        const prepared = await prepareQuestion({
          userId: user.id,
          language: toTemplateLanguage(language) as ChatLanguage,
          question: form.question,
          pdfs: form.pdfs,
        });
        await audited(user, "chat.ask", request);
        // A failed answer is stored as failed; the conversation shows the apology (SPEC §8).
        await answerQuestion(prepared);
        return redirect("/chat#latest");
      }
      case CHAT_INTENT.attach:
        await attachPdfs({ userId: user.id, pdfs: form.pdfs });
        await audited(user, "chat.attach", request);
        return redirect("/chat");
      case CHAT_INTENT.clear:
        await clearConversation({ userId: user.id });
        await audited(user, "chat.clear", request);
        return redirect("/chat");
      default:
        throw new Response("Unknown intent", { status: 400 });
    }
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    await audited(user, form?.intent === CHAT_INTENT.attach ? "chat.attach" : "chat.ask", request, "failure");
    return json<ChatActionData>(
      { error: await chatErrorText(language, error), question: form?.question ?? "" },
      { status: statusFor(error.kind) },
    );
  }
}
