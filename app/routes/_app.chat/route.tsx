import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { RouteHandle } from "~/components/page-scripts";
import { SectionHeader } from "~/components/ui/section";
import { auditChat } from "~/services/audit/events.server";
import { maxMegabytes, MAX_CHAT_PDFS } from "~/services/chat/chat-pdf.server";
import { CHAT_QUESTION_MAX_CHARS } from "~/services/chat/chat-prompt";
import { getConversation } from "~/services/chat/chat.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { requireUser } from "~/services/web/session.server";
import { chatAction, type ChatActionData } from "./actions.server";
import { ClearForm, MessageList, QuestionForm } from "./components";

// SPEC §2 "Chat": the conversation with the AI assistant, optionally with PDF files as context (issue 8). Every
// action is a plain form post, so the screen works without JavaScript; app/pe/chat.js streams the answer instead
// (server-sent events from /resources/chat-stream) and voice.js adds dictation into the question (SPEC §4).

export const handle: RouteHandle = { i18n: ["common", "chat", "live"], scripts: ["shell", "chat", "voice"] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? "Skribent" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const t = await getFixedTFor(await getLanguage(request), ["chat"]);
  const conversation = await getConversation({ userId: user.id });
  await auditChat(request, user.id, "chat.read");
  return {
    title: `${t("chat:title")} · Skribent`,
    ...conversation,
    limits: { question: CHAT_QUESTION_MAX_CHARS, pdfs: MAX_CHAT_PDFS, pdfMb: maxMegabytes() },
  };
}

export async function action({ request }: ActionFunctionArgs) {
  const user = await requireUser(request);
  return chatAction(user, request);
}

export default function ChatSection() {
  const { messages, context, hasReply, limits } = useLoaderData<typeof loader>();
  const actionData = useActionData<ChatActionData>();
  const { t } = useTranslation("chat");
  const pending = messages.some((m) => m.status === "pending");
  return (
    <>
      <SectionHeader title={t("title")} intro={t("intro")} />
      <div className="space-y-4" data-chat data-apology={t("errors.apology")}>
        <p
          role="alert"
          className="rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800"
          hidden={!actionData?.error}
          data-chat-error
        >
          {actionData?.error}
        </p>
        {/* Without JavaScript, a page showing an answer being written fetches itself again until it is there. */}
        {pending ? (
          <noscript>
            <meta httpEquiv="refresh" content="3" />
          </noscript>
        ) : null}
        <MessageList messages={messages} />
        <QuestionForm
          question={actionData?.question ?? ""}
          maxLength={limits.question}
          context={context}
          pdfOpen={!hasReply}
          pending={pending}
          limits={limits}
        />
        <ClearForm />
      </div>
    </>
  );
}
