// Text extraction from PDFs that clinicians attach as context for a letter (SPEC §2, §3, §7
// extract-pdf-from-s3). pdf.js runs in-process: in Node its legacy build has no real worker and runs
// the parser on the main thread ("fake worker"). Every input is untrusted, so the cheap checks (magic
// bytes, size) come before pdf.js is even loaded, and every pdf.js failure — including asynchronous
// ones — ends as a typed failure instead of an exception.
import { createRequire } from "node:module";
import path from "node:path";

import {
  PDF_LIMITS,
  clip,
  pageText,
  sanitiseFileName,
  type PdfContextResult,
  type PdfFailure,
  type PdfLimits,
  type PdfLoadingTaskLike,
  type PdfTextDeps,
  type PdfTextResult,
  type PdfjsLike,
} from "./text-format.server";
import { unpackedSize } from "./streams.server";

// Limits, types and the pure text handling live in pdf/text-format.server.ts; re-exported here so
// callers keep importing from this module.
export {
  PDF_LIMITS,
  pageText,
  sanitiseFileName,
  type PdfContextResult,
  type PdfDocumentLike,
  type PdfFailure,
  type PdfLimits,
  type PdfLoadingTaskLike,
  type PdfPageLike,
  type PdfTextDeps,
  type PdfTextItem,
  type PdfTextResult,
  type PdfjsLike,
} from "./text-format.server";

const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d]; // "%PDF-"
const HEADER_WINDOW = 1024;

/** True when "%PDF-" lies entirely within the first 1024 bytes (leading junk is allowed, as in pdf.js). */
export function isPdf(head: Uint8Array): boolean {
  const end = Math.min(head.length, HEADER_WINDOW) - PDF_MAGIC.length;
  outer: for (let i = 0; i <= end; i++) {
    for (let j = 0; j < PDF_MAGIC.length; j++) {
      if (head[i + j] !== PDF_MAGIC[j]) continue outer;
    }
    return true;
  }
  return false;
}

const defaultDeps: PdfTextDeps = { loadPdfjs };

export async function extractPdfText(
  data: Uint8Array,
  options: Partial<PdfLimits> = {},
  deps: PdfTextDeps = defaultDeps,
): Promise<PdfTextResult> {
  const limits: PdfLimits = { ...PDF_LIMITS, ...options };
  if (!isPdf(data.subarray(0, HEADER_WINDOW))) return fail("not_pdf", "The file is not a PDF.");
  if (data.byteLength > limits.maxBytes) {
    return fail("too_large", `The PDF is larger than the limit of ${formatMegabytes(limits.maxBytes)}.`);
  }
  if (unpackedSize(data, limits.maxUnpackedBytes) > limits.maxUnpackedBytes) {
    return fail("too_large", `The PDF unpacks to more than ${formatMegabytes(limits.maxUnpackedBytes)}.`);
  }

  const pdfjs = await deps.loadPdfjs();
  let task: PdfLoadingTaskLike;
  try {
    task = pdfjs.getDocument({
      // A copy: pdf.js transfers (detaches) the buffer it is given, and refuses Node Buffers.
      data: new Uint8Array(data),
      ...PDFJS_OPTIONS,
    });
  } catch (error) {
    return failureFromError(error);
  }

  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), limits.timeoutMs);
  });
  const work = readDocument(task, limits).catch(failureFromError);
  const outcome = await Promise.race([work, timedOut]);
  clearTimeout(timer);
  const destroyed = destroyQuietly(task);
  if (outcome === "timeout") {
    // Stops the abandoned parse; what it rejects with afterwards is already caught by `work`.
    // Not awaited: a parser stuck badly enough to time out must not hold the caller as well.
    return fail("timeout", `Reading the PDF took longer than ${formatSeconds(limits.timeoutMs)}.`);
  }
  await destroyed; // frees the parsed document before the next one is read
  return outcome;
}

function destroyQuietly(task: PdfLoadingTaskLike): Promise<void> {
  try {
    return task.destroy().catch(() => undefined);
  } catch {
    return Promise.resolve();
  }
}

/**
 * Several PDFs into one context block, as SPEC §3 answers it: { success, extracted_text, pdfs_processed }.
 * Each document's text is headed by its (sanitised) file name; failures are listed per file and do not
 * abort the others; success is true when at least one PDF gave text. Files are read one after the other
 * so that only one parsed document is in memory at a time; the whole block is capped at `maxChars`.
 */
export async function extractPdfContext(
  files: Array<{ name: string; data: Uint8Array }>,
  options: Partial<PdfLimits> = {},
  deps: PdfTextDeps = defaultDeps,
): Promise<PdfContextResult> {
  const maxChars = options.maxChars ?? PDF_LIMITS.maxChars;
  const sections: string[] = [];
  const failures: PdfContextResult["failures"] = [];
  let processed = 0;
  let withText = 0;
  let used = 0;
  for (const file of files) {
    const name = sanitiseFileName(file.name);
    const result = await extractPdfText(file.data, options, deps);
    if (!result.ok) {
      failures.push({ name, code: result.failure.code });
      continue;
    }
    processed++;
    // A scanned PDF without a text layer parses fine but has nothing to add.
    if (!result.text) continue;
    withText++;
    const section = `=== ${name} ===\n${result.text}`;
    const separator = sections.length > 0 ? "\n\n" : "";
    const room = maxChars - used - separator.length;
    if (room <= 0) continue;
    const piece = clip(section, room);
    sections.push(piece);
    used += separator.length + piece.length;
  }
  return { success: withText > 0, extracted_text: sections.join("\n\n"), pdfs_processed: processed, failures };
}

// Everything pdf.js could reach outside this process is switched off: no eval'd font code, no
// system fonts, no font-face injection, no fetches (data is passed in; fonts and CMaps come from
// the package's own directories on disk). Warnings would go to console.log; errors only.
const PDFJS_OPTIONS = {
  isEvalSupported: false,
  disableFontFace: true,
  useSystemFonts: false,
  useWorkerFetch: false,
  isOffscreenCanvasSupported: false,
  isImageDecoderSupported: false,
  enableXfa: false,
  stopAtErrors: false,
  verbosity: 0, // VerbosityLevel.ERRORS
  ...packageDataDirectories(),
};

function packageDataDirectories(): { standardFontDataUrl?: string; cMapUrl?: string; cMapPacked?: boolean } {
  try {
    const root = path.dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json"));
    return {
      standardFontDataUrl: path.join(root, "standard_fonts") + path.sep,
      cMapUrl: path.join(root, "cmaps") + path.sep,
      cMapPacked: true,
    };
  } catch {
    // Without them pdf.js still reads text; only glyph widths of non-embedded fonts and some
    // Asian encodings suffer.
    return {};
  }
}

let pdfjsModule: Promise<PdfjsLike> | undefined;

function loadPdfjs(): Promise<PdfjsLike> {
  pdfjsModule ??= (async () => {
    // Importing the worker module first registers `globalThis.pdfjsWorker`, so pdf.js uses it
    // directly instead of importing `GlobalWorkerOptions.workerSrc` (a path relative to its own
    // file, which a bundler would break).
    await import("pdfjs-dist/legacy/build/pdf.worker.mjs" as string);
    const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
    return pdfjs as unknown as PdfjsLike;
  })().catch((error: unknown) => {
    pdfjsModule = undefined; // let a later call try again
    throw error;
  });
  return pdfjsModule;
}

async function readDocument(task: PdfLoadingTaskLike, limits: PdfLimits): Promise<PdfTextResult> {
  const doc = await task.promise;
  const pages = doc.numPages;
  if (pages > limits.maxPages) {
    return fail("too_many_pages", `The PDF has ${pages} pages; at most ${limits.maxPages} can be read.`);
  }
  const texts: string[] = [];
  let used = 0;
  let truncated = false;
  for (let n = 1; n <= pages; n++) {
    const page = await doc.getPage(n);
    const content = await page.getTextContent();
    page.cleanup();
    const text = pageText(content.items);
    if (!text) continue;
    const separator = texts.length > 0 ? "\n\n" : "";
    const room = limits.maxChars - used - separator.length;
    if (text.length > room) {
      truncated = true;
      const piece = clip(text, Math.max(room, 0)).trimEnd();
      if (piece) texts.push(piece);
      break;
    }
    texts.push(text);
    used += separator.length + text.length;
    // pdf.js's in-process worker talks through promise callbacks; yielding to the event loop between
    // pages lets the timeout fire in a long document.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return { ok: true, text: texts.join("\n\n"), pages, truncated };
}

function failureFromError(error: unknown): PdfTextResult {
  const name = error instanceof Error ? error.name : "";
  if (name === "PasswordException") {
    return fail("encrypted", "The PDF is password-protected and cannot be read.");
  }
  // InvalidPDFException, FormatError, UnknownErrorException and whatever else a damaged file
  // provokes. pdf.js's own message is not shown: it is technical and may quote file content.
  return fail("broken", "The PDF is damaged or incomplete and cannot be read.");
}

function fail(code: PdfFailure["code"], message: string): PdfTextResult {
  return { ok: false, failure: { code, message } };
}

function formatMegabytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
}

function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} second${s === 1 ? "" : "s"}`;
}
