import { Form } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { button, quiet } from "~/components/ui/buttons";
import { DictationField } from "~/components/ui/voice-input";
import { CHAT_INTENT } from "~/services/chat/chat-form.schema";

// The chat screen's parts (SPEC §2 "Chat"): the message list (320 px high, at most 70vh, scrolling), the
// question form with the PDF area (only while the conversation has no answer) and voice input, and "clear chat".
// Everything the model wrote is React text (escaped); app/pe/chat.js writes streamed text with textContent.

export type ChatMessageView = {
  id: string;
  role: "user" | "assistant";
  content: string;
  status: "pending" | "done" | "failed";
  contextTruncated: boolean;
};

/** A PDF of the conversation's context; an unreadable one gave no text and is not used. */
export type ChatContextView = { id: string; name: string; readable: boolean };

const bubble = {
  user: "ml-auto max-w-[85%] rounded-lg bg-brand-50 px-3 py-2",
  assistant: "mr-auto max-w-[85%] rounded-lg bg-slate-100 px-3 py-2",
};

function Bubble({ message }: { message: ChatMessageView }) {
  const { t } = useTranslation("chat");
  const text =
    message.status === "pending" ? t("thinking") : message.status === "failed" ? t("errors.apology") : message.content;
  return (
    <li className={bubble[message.role]} data-chat-message data-role={message.role} data-status={message.status}>
      <span className="block text-xs font-medium text-slate-500">
        {message.role === "user" ? t("you") : t("assistant")}
      </span>
      <p className="text-sm whitespace-pre-wrap" data-chat-text>
        {text}
      </p>
      {message.contextTruncated ? (
        <p className="mt-1 text-xs text-amber-800" data-chat-truncated>
          {t("pdf.truncated")}
        </p>
      ) : null}
    </li>
  );
}

/** The message list; chat.js adds streamed messages from the two templates. */
export function MessageList({ messages }: { messages: ChatMessageView[] }) {
  const { t } = useTranslation("chat");
  return (
    <div
      className="h-80 max-h-[70vh] overflow-y-auto rounded-lg border border-slate-200 bg-white p-4"
      role="log"
      aria-label={t("messages")}
      tabIndex={0}
      data-chat-messages
    >
      {messages.length === 0 ? (
        <p className="text-center text-sm text-slate-500" data-chat-empty>
          {t("empty")}
        </p>
      ) : null}
      <ol className="space-y-3" data-chat-list>
        {messages.map((message) => (
          <Bubble key={message.id} message={message} />
        ))}
      </ol>
      <span id="latest" />
      {(["user", "assistant"] as const).map((role) => (
        <template key={role} data-chat-template={role}>
          <Bubble message={{ id: role, role, content: "", status: "pending", contextTruncated: false }} />
        </template>
      ))}
    </div>
  );
}

/** SPEC §2: the PDF drop or upload area while the conversation has no answer; the attached files' names. */
function PdfArea({
  context,
  open,
  limits,
}: {
  context: ChatContextView[];
  open: boolean;
  limits: { pdfs: number; pdfMb: number };
}) {
  const { t } = useTranslation("chat");
  return (
    <div className="space-y-2" data-chat-context>
      {context.length > 0 ? (
        <p className="text-sm text-slate-700" data-chat-attached>
          <span className="font-medium">{t("pdf.attached")}: </span>
          {context.map((c, i) => (
            <span key={c.id} data-readable={c.readable}>
              {i > 0 ? ", " : ""}
              {c.name}
              {c.readable ? null : <span className="text-amber-800"> ({t("pdf.unreadable")})</span>}
            </span>
          ))}
        </p>
      ) : null}
      {open ? (
        <div className="rounded-lg border-2 border-dashed border-slate-300 p-3" data-chat-pdf>
          <label className="block text-sm text-slate-700" data-chat-drop>
            <span className="font-medium">{t("pdf.title")}</span>
            <span className="block text-xs text-slate-500">{t("pdf.drop")}</span>
            <input type="file" name="pdf" accept="application/pdf,.pdf" multiple className="mt-2 block text-sm" />
          </label>
          <p className="mt-1 text-xs text-slate-500">{t("pdf.help", { max: limits.pdfs, size: limits.pdfMb })}</p>
          <button type="submit" name="intent" value={CHAT_INTENT.attach} className={`${quiet} mt-2`} data-chat-attach>
            {t("pdf.attach")}
          </button>
        </div>
      ) : null}
    </div>
  );
}

export function QuestionForm(props: {
  question: string;
  maxLength: number;
  context: ChatContextView[];
  pdfOpen: boolean;
  pending: boolean;
  limits: { pdfs: number; pdfMb: number };
}) {
  const { t } = useTranslation("chat");
  // Multipart only while it carries the PDF input: a plain form is kept across an expired session (pending-post).
  return (
    <Form
      method="post"
      encType={props.pdfOpen ? "multipart/form-data" : "application/x-www-form-urlencoded"}
      className="space-y-3"
      data-chat-form
      noValidate
    >
      <PdfArea context={props.context} open={props.pdfOpen} limits={props.limits} />
      <DictationField
        label={t("question")}
        name="question"
        rows={3}
        maxLength={props.maxLength}
        defaultValue={props.question}
        placeholder={t("placeholder")}
        className="mt-1 block w-full rounded border border-slate-300 px-2 py-1.5 text-sm disabled:bg-slate-100"
      >
        <button
          type="submit"
          name="intent"
          value={CHAT_INTENT.send}
          className={`${button} disabled:opacity-50`}
          disabled={props.pending}
          data-chat-send
        >
          {t("send")}
        </button>
      </DictationField>
    </Form>
  );
}

export function ClearForm() {
  const { t } = useTranslation("chat");
  return (
    <Form method="post" data-chat-clear-form>
      <button type="submit" name="intent" value={CHAT_INTENT.clear} className={quiet} data-chat-clear>
        {t("clear")}
      </button>
    </Form>
  );
}
