// The limits, result types and pdf.js shapes of the PDF text extraction (pdf/text.server.ts), and
// the pure text handling it applies: joining a page's text items, normalising whitespace, clipping
// to a length and sanitising file names. Everything exported here is re-exported by pdf-text.server.ts.

export const PDF_LIMITS = {
  maxBytes: 20 * 1024 * 1024,
  maxPages: 50,
  timeoutMs: 20_000,
  maxChars: 200_000,
  /** What the streams may unpack to before pdf.js reads them (pdf/streams.server.ts): 0.5 MB can hold 512 MiB. */
  maxUnpackedBytes: 64 * 1024 * 1024,
} as const;

export type PdfLimits = { [K in keyof typeof PDF_LIMITS]: number };

export type PdfFailure = {
  code: "not_pdf" | "too_large" | "encrypted" | "broken" | "timeout" | "too_many_pages";
  message: string;
};

export type PdfTextResult =
  { ok: true; text: string; pages: number; truncated: boolean } | { ok: false; failure: PdfFailure };

export type PdfContextResult = {
  success: boolean;
  extracted_text: string;
  pdfs_processed: number;
  failures: Array<{ name: string; code: PdfFailure["code"] }>;
};

// The slice of pdf.js this module uses. Structural, so tests can hand in a loader that counts calls
// or never answers.
export type PdfTextItem = { str?: string; hasEOL?: boolean; transform?: number[]; height?: number; type?: string };
export interface PdfPageLike {
  getTextContent(): Promise<{ items: PdfTextItem[] }>;
  cleanup(): unknown;
}
export interface PdfDocumentLike {
  numPages: number;
  getPage(pageNumber: number): Promise<PdfPageLike>;
}
export interface PdfLoadingTaskLike {
  promise: Promise<PdfDocumentLike>;
  destroy(): Promise<void>;
}
export interface PdfjsLike {
  getDocument(params: Record<string, unknown>): PdfLoadingTaskLike;
}
export type PdfTextDeps = { loadPdfjs: () => Promise<PdfjsLike> };

/** A file name safe to show in a heading and a prompt: no path, no control or bidi characters, one line. */
export function sanitiseFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  const clean = base
    .normalize("NFC")
    // eslint-disable-next-line no-control-regex -- stripping control characters is the point
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, " ")
    // Bidi overrides and isolates would show "Befund\u202Efdp.exe" as "Befundexe.pdf".
    .replace(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, "")
    .replace(/[=[\]<>]/g, "")
    .replace(/\s+/g, " ")
    .trim();
  return clip(clean, 120).trim() || "document.pdf";
}

/** Joins a page's text items: pdf.js's own spacing within a line, a newline where it marks one. */
export function pageText(items: PdfTextItem[]): string {
  let out = "";
  let lastY: number | undefined;
  let lastHeight = 0;
  for (const item of items) {
    if (typeof item.str !== "string") continue; // marked-content markers carry no text
    const y = item.transform?.[5];
    // pdf.js sets hasEOL for most line breaks; a jump to another baseline without one (columns,
    // table cells) must still not glue two words together.
    if (item.str && y !== undefined && lastY !== undefined && out && !/\s$/.test(out)) {
      const tolerance = Math.max(item.height ?? 0, lastHeight, 1) / 2;
      if (Math.abs(y - lastY) > tolerance) out += "\n";
    }
    out += item.str;
    if (item.hasEOL) out += "\n";
    if (item.str && y !== undefined) {
      lastY = y;
      lastHeight = item.height ?? 0;
    }
  }
  return normaliseText(out);
}

function normaliseText(text: string): string {
  return (
    text
      // Combining diaeresis etc. become precomposed letters: "u\u0308" -> "ü".
      .normalize("NFC")
      .replace(/\r\n?/g, "\n")
      // eslint-disable-next-line no-control-regex -- unmapped glyphs come out as control characters
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, "")
      .replace(/[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000]+/g, " ")
      .replace(/ *\n */g, "\n")
      .replace(/\n{3,}/g, "\n\n")
      .trim()
  );
}

/** The first `max` UTF-16 units, never ending in half a surrogate pair. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end);
}
