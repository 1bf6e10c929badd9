import { parseWithZod } from "@conform-to/zod";
import {
  MaxPartSizeExceededError,
  unstable_createMemoryUploadHandler,
  unstable_parseMultipartFormData,
  type UploadHandler,
} from "@remix-run/node";
import type { Language } from "~/i18n";
import { DomainError } from "../web/domain-error.server";
import { getFixedTFor } from "../web/i18n.server";
import { isMalformedMultipart } from "../web/multipart-form.server";
import { PDF_LIMITS } from "../pdf/text.server";
import { MAX_CHAT_PDFS, pdfTooLarge, type UploadedPdf } from "./chat-pdf.server";
import { chatFormSchema, type ChatIntent } from "./chat-form.schema";

// The chat screen's form as both of its doors read it (the form post, and the event stream the page's script
// posts to): `intent`, `question` and the chosen PDF files. The question form is multipart (it carries the
// PDF input); "clear chat" is a plain form. PDFs are read into memory, each within the PDF size limit and at most
// MAX_CHAT_PDFS of them, so one request cannot hold more than that in memory.

export type ChatForm = { intent: ChatIntent | null; question: string; pdfs: UploadedPdf[] };

/** The intent and the question, parsed by the chat's schema (which takes anything: an unknown intent is null). */
function fieldsOf(form: FormData) {
  const submission = parseWithZod(form, { schema: chatFormSchema });
  return submission.status === "success" ? submission.value : { intent: null, question: "" };
}

export async function readChatForm(request: Request): Promise<ChatForm> {
  const type = request.headers.get("Content-Type") ?? "";
  if (!type.startsWith("multipart/form-data")) {
    const form = await request.formData();
    return { ...fieldsOf(form), pdfs: [] };
  }
  const memory = unstable_createMemoryUploadHandler({ maxPartSize: PDF_LIMITS.maxBytes });
  let files = 0;
  const handler: UploadHandler = async (part) => {
    if (part.filename !== undefined) {
      // An empty file input still sends a part, with no file name.
      if (part.name !== "pdf" || !part.filename) return undefined;
      if (++files > MAX_CHAT_PDFS)
        throw new DomainError("invalid", "chat:errors.tooManyPdfs", [], { max: String(MAX_CHAT_PDFS) });
    }
    return memory(part);
  };
  let form: FormData;
  try {
    form = await unstable_parseMultipartFormData(request, handler);
  } catch (error) {
    if (error instanceof MaxPartSizeExceededError) throw pdfTooLarge();
    if (isMalformedMultipart(error)) throw new DomainError("invalid", "chat:errors.fileNameUnreadable");
    throw error;
  }
  const pdfs: UploadedPdf[] = [];
  for (const value of form.getAll("pdf")) {
    if (typeof value === "string" || value.size === 0) continue;
    pdfs.push({ name: value.name, data: new Uint8Array(await value.arrayBuffer()) });
  }
  return { ...fieldsOf(form), pdfs };
}

/** A refused chat request in the clinician's language (the JSON API speaks English through apiRoute instead). */
export async function chatErrorText(language: Language, error: DomainError) {
  const t = await getFixedTFor(language, ["common", "chat"]);
  return t(error.message, error.values);
}
