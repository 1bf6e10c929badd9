import { z } from "zod";

// The chat screen's forms (issue 23), shared by the page's buttons and both doors that read them (the form post
// and the event stream): the intent and the question; the PDF parts are read apart (chat-form.server.ts). Read as
// FormData.get reads a field: its first value, "" when missing. An intent the chat does not know is null.

export const CHAT_INTENT = { send: "send", attach: "attach", clear: "clear" } as const;

export type ChatIntent = (typeof CHAT_INTENT)[keyof typeof CHAT_INTENT];

function firstValue(value: unknown) {
  return Array.isArray(value) ? (value as unknown[])[0] : value;
}

const intents = Object.values(CHAT_INTENT) as [ChatIntent, ...ChatIntent[]];

export const chatFormSchema = z.object({
  intent: z.preprocess(firstValue, z.enum(intents).nullable().default(null)).catch(null),
  question: z.preprocess(firstValue, z.string().default("")).catch(""),
});
