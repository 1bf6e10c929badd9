import { DomainError } from "../web/domain-error.server";
import { extractPdfText, isPdf, PDF_LIMITS, sanitiseFileName } from "../pdf/text.server";
import type { ChatContextFile } from "./chat-prompt";

// PDF context for the chat (SPEC §5: only application/pdf). What a file is comes from its bytes ("%PDF-"), never
// from the name or the type the browser declared. A real PDF whose text cannot be read (damaged, encrypted, too
// many pages, a scan without text) is logged by failure code, never with content (SPEC §8 "Chat"), and kept by
// name with no text: the question still goes out, without it, and the screen says which file gave nothing.

/** PDFs one conversation can hold as context. */
export const MAX_CHAT_PDFS = 5;

export type UploadedPdf = { name: string; data: Uint8Array };

/** Refuses the whole upload when one file is not a PDF or too large: nothing is kept of a refused one. */
export function checkChatPdfs(files: UploadedPdf[], alreadyAttached: number) {
  if (alreadyAttached + files.length > MAX_CHAT_PDFS)
    throw new DomainError("invalid", "chat:errors.tooManyPdfs", [], { max: String(MAX_CHAT_PDFS) });
  for (const file of files) {
    if (file.data.byteLength > PDF_LIMITS.maxBytes) throw pdfTooLarge();
    if (!isPdf(file.data.subarray(0, 1024)))
      throw new DomainError("invalid", "chat:errors.notPdf", [], { name: sanitiseFileName(file.name) });
  }
}

export function maxMegabytes() {
  return Math.floor(PDF_LIMITS.maxBytes / (1024 * 1024));
}

export function pdfTooLarge() {
  return new DomainError("invalid", "chat:errors.pdfTooLarge", [], { max: String(maxMegabytes()) });
}

/** Each PDF's text: "" for one that gave none (logged by code only), which the prompt then leaves out. */
export async function extractChatPdfs(files: UploadedPdf[]): Promise<ChatContextFile[]> {
  const out: ChatContextFile[] = [];
  for (const file of files) {
    const result = await extractPdfText(file.data);
    if (!result.ok) {
      console.warn(`[chat] a PDF could not be read (${result.failure.code}); the question goes out without it`);
    } else if (!result.text) {
      console.warn("[chat] a PDF has no text layer; the question goes out without it");
    }
    out.push({ name: sanitiseFileName(file.name), text: result.ok ? result.text : "" });
  }
  return out;
}
