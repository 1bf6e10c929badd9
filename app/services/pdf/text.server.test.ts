import { describe, expect, it, vi } from "vitest";

import {
  GERMAN_LINES,
  germanTextPdf,
  htmlNamedPdf,
  makeTextPdf,
  multiPagePdf,
} from "../../../tests/support/pdf-fixtures";

import { extractPdfText, isPdf } from "./text.server";
import { encoder, trapUnhandledRejections, wrappedRealPdfjs } from "../../../tests/support/pdf-text-helpers";

// Reading text out of good PDFs. Refusals and failures: pdf-text-failures; the time limit:
// pdf-text-timeout; page text and file names: pdf-text-format; several files: pdf-text-context.

trapUnhandledRejections();

describe("isPdf", () => {
  it("finds %PDF- at the start or after leading junk within the first 1024 bytes", () => {
    expect(isPdf(encoder.encode("%PDF-1.7\n"))).toBe(true);
    expect(isPdf(encoder.encode(`${"x".repeat(1019)}%PDF-`))).toBe(true);
  });

  it("rejects a marker that ends beyond byte 1024, a partial marker, HTML and nothing", () => {
    expect(isPdf(encoder.encode(`${"x".repeat(1020)}%PDF-`))).toBe(false);
    expect(isPdf(encoder.encode("%PDF"))).toBe(false);
    expect(isPdf(encoder.encode("%pdf-1.7"))).toBe(false);
    expect(isPdf(htmlNamedPdf().data)).toBe(false);
    expect(isPdf(new Uint8Array(0))).toBe(false);
  });
});

describe("extractPdfText", () => {
  it("round-trips German text with umlauts and ß, one line per line", async () => {
    const result = await extractPdfText(await germanTextPdf());
    expect(result).toEqual({ ok: true, text: GERMAN_LINES.join("\n"), pages: 1, truncated: false });
  });

  it("keeps the pages in order, separated by a blank line", async () => {
    const result = await extractPdfText(await multiPagePdf(4));
    if (!result.ok) throw new Error(result.failure.message);
    expect(result.pages).toBe(4);
    expect(result.text).toBe([1, 2, 3, 4].map((n) => `Seite ${n} von 4\nInhalt der Seite ${n}`).join("\n\n"));
  });

  it("collapses runs of spaces and trims lines", async () => {
    const result = await extractPdfText(await makeTextPdf([["  Diagnose:    Hypertonie  ", "ICD   I10"]]));
    expect(result).toMatchObject({ ok: true, text: "Diagnose: Hypertonie\nICD I10" });
  });

  it("does not change the caller's bytes (pdf.js transfers the buffer it is given)", async () => {
    const data = await germanTextPdf();
    const before = data.slice();
    await extractPdfText(data);
    expect(data.byteLength).toBe(before.byteLength);
    expect(data).toEqual(before);
  });

  it("accepts a Node Buffer, which pdf.js itself refuses", async () => {
    const result = await extractPdfText(Buffer.from(await germanTextPdf()));
    expect(result.ok).toBe(true);
  });

  it("refuses a document over maxPages before reading any page", async () => {
    const data = await multiPagePdf(3);
    const getPage = vi.fn();
    const deps = wrappedRealPdfjs((task) => {
      const promise = task.promise.then((doc) => ({
        numPages: doc.numPages,
        getPage: (n: number) => {
          getPage(n);
          return doc.getPage(n);
        },
      }));
      return { promise, destroy: () => task.destroy() };
    });
    const result = await extractPdfText(data, { maxPages: 2 }, deps);
    expect(result).toEqual({
      ok: false,
      failure: { code: "too_many_pages", message: "The PDF has 3 pages; at most 2 can be read." },
    });
    expect(getPage).not.toHaveBeenCalled();
    expect(await extractPdfText(data, { maxPages: 3 }, deps)).toMatchObject({ ok: true, pages: 3 });
  });

  it("fetches nothing from the network", async () => {
    const fetchSpy = vi.fn(() => Promise.reject(new Error("no network in tests")));
    vi.stubGlobal("fetch", fetchSpy);
    try {
      expect(await extractPdfText(await germanTextPdf())).toMatchObject({ ok: true });
      expect(fetchSpy).not.toHaveBeenCalled();
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it("caps the text at maxChars and says so", async () => {
    const data = await multiPagePdf(3);
    const full = await extractPdfText(data);
    if (!full.ok) throw new Error(full.failure.message);
    const result = await extractPdfText(data, { maxChars: 40 });
    expect(result).toEqual({ ok: true, text: full.text.slice(0, 40).trimEnd(), pages: 3, truncated: true });
    expect(await extractPdfText(data, { maxChars: full.text.length })).toEqual({ ...full, truncated: false });
  });
});
