import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";

import {
  ENCRYPTED_TEXT,
  GERMAN_LINES,
  emptyFile,
  encryptedPdf,
  germanTextPdf,
  htmlNamedPdf,
  makeTextPdf,
  multiPagePdf,
  truncatedPdf,
} from "../../tests/support/pdf-fixtures";

import {
  PDF_LIMITS,
  extractPdfContext,
  extractPdfText,
  isPdf,
  pageText,
  sanitiseFileName,
  type PdfLoadingTaskLike,
  type PdfTextDeps,
  type PdfjsLike,
} from "./pdf-text.server";

const encoder = new TextEncoder();

// Unhandled rejections are what would take a worker process down; collect them per test.
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => {
  process.on("unhandledRejection", onUnhandled);
  return () => process.off("unhandledRejection", onUnhandled);
});
afterEach(async () => {
  // One macrotask turn lets Node report rejections left without a handler.
  await new Promise((resolve) => setImmediate(resolve));
  const seen = unhandled.splice(0);
  expect(seen).toEqual([]);
});

/** The real loader, wrapped so a test can see whether pdf.js was reached at all. */
async function realPdfjs(): Promise<PdfjsLike> {
  const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
  return pdfjs as unknown as PdfjsLike;
}
function countingDeps() {
  const loadPdfjs = vi.fn(realPdfjs);
  return { deps: { loadPdfjs } satisfies PdfTextDeps, loadPdfjs };
}

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
    const deps: PdfTextDeps = {
      loadPdfjs: async () => {
        const real = await realPdfjs();
        return {
          getDocument(params) {
            const task = real.getDocument(params);
            const promise = task.promise.then((doc) => ({
              numPages: doc.numPages,
              getPage: (n: number) => {
                getPage(n);
                return doc.getPage(n);
              },
            }));
            return { promise, destroy: () => task.destroy() };
          },
        };
      },
    };
    const result = await extractPdfText(data, { maxPages: 2 }, deps);
    expect(result).toEqual({
      ok: false,
      failure: { code: "too_many_pages", message: "The PDF has 3 pages; at most 2 can be read." },
    });
    expect(getPage).not.toHaveBeenCalled();
    expect(await extractPdfText(data, { maxPages: 3 }, deps)).toMatchObject({ ok: true, pages: 3 });
  });

  it("rejects HTML named .pdf as not_pdf without loading pdf.js", async () => {
    const { deps, loadPdfjs } = countingDeps();
    const result = await extractPdfText(htmlNamedPdf().data, {}, deps);
    expect(result).toEqual({ ok: false, failure: { code: "not_pdf", message: "The file is not a PDF." } });
    expect(loadPdfjs).not.toHaveBeenCalled();
  });

  it("rejects an empty file as not_pdf without loading pdf.js", async () => {
    const { deps, loadPdfjs } = countingDeps();
    expect(await extractPdfText(emptyFile(), {}, deps)).toMatchObject({ ok: false, failure: { code: "not_pdf" } });
    expect(loadPdfjs).not.toHaveBeenCalled();
  });

  it("rejects a PDF over maxBytes as too_large without loading pdf.js", async () => {
    const { deps, loadPdfjs } = countingDeps();
    const data = await germanTextPdf();
    const result = await extractPdfText(data, { maxBytes: data.byteLength - 1 }, deps);
    expect(result).toEqual({
      ok: false,
      failure: { code: "too_large", message: expect.stringMatching(/^The PDF is larger than the limit of .+ MB\.$/) },
    });
    expect(loadPdfjs).not.toHaveBeenCalled();
    expect(await extractPdfText(data, { maxBytes: data.byteLength }, deps)).toMatchObject({ ok: true });
    expect(loadPdfjs).toHaveBeenCalledTimes(1);
  });

  it("states the default 20 MB limit in its message", async () => {
    const big = new Uint8Array(PDF_LIMITS.maxBytes + 1);
    big.set(encoder.encode("%PDF-1.7\n"));
    expect(await extractPdfText(big)).toEqual({
      ok: false,
      failure: { code: "too_large", message: "The PDF is larger than the limit of 20 MB." },
    });
  });

  it("reports a password-protected PDF as encrypted", async () => {
    const result = await extractPdfText(encryptedPdf({ userPassword: "geheim" }));
    expect(result).toEqual({
      ok: false,
      failure: { code: "encrypted", message: "The PDF is password-protected and cannot be read." },
    });
  });

  it("reads a PDF that is encrypted only against editing (empty user password)", async () => {
    // The same security handler as above; it proves the fixture's encryption is real.
    const result = await extractPdfText(encryptedPdf({ userPassword: "", ownerPassword: "besitzer" }));
    expect(result).toEqual({ ok: true, text: ENCRYPTED_TEXT, pages: 1, truncated: false });
  });

  it("reports a truncated PDF as broken, quietly", async () => {
    const log = vi.spyOn(console, "log");
    const warn = vi.spyOn(console, "warn");
    try {
      const result = await extractPdfText(await truncatedPdf());
      expect(result).toEqual({
        ok: false,
        failure: { code: "broken", message: "The PDF is damaged or incomplete and cannot be read." },
      });
      // console.error is trapped by the test setup; pdf.js's warnings would go to console.log.
      expect(log).not.toHaveBeenCalled();
      expect(warn).not.toHaveBeenCalled();
    } finally {
      log.mockRestore();
      warn.mockRestore();
    }
  });

  it("reports a PDF header followed by garbage as broken", async () => {
    const result = await extractPdfText(encoder.encode("%PDF-1.7\n1 0 obj << /Type /Catalog >>\n"));
    expect(result).toMatchObject({ ok: false, failure: { code: "broken" } });
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

  describe("time limit", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    function hangingDeps(hangAt: "load" | "page") {
      let rejectLoad: ((reason: unknown) => void) | undefined;
      const destroy = vi.fn(async () => {
        // Like pdf.js: destroying rejects the pending load, after the race is decided.
        rejectLoad?.(new Error("Worker was destroyed"));
      });
      const task: PdfLoadingTaskLike = {
        promise:
          hangAt === "load"
            ? new Promise((_, reject) => (rejectLoad = reject))
            : Promise.resolve({
                numPages: 1,
                getPage: async () => ({
                  getTextContent: () => new Promise((_, reject) => (rejectLoad = reject)),
                  cleanup: () => true,
                }),
              }),
        destroy,
      };
      const deps: PdfTextDeps = { loadPdfjs: async () => ({ getDocument: () => task }) };
      return { deps, destroy };
    }

    it.each(["load", "page"] as const)("gives timeout and destroys the task when pdf.js hangs (%s)", async (hangAt) => {
      vi.useFakeTimers();
      const { deps, destroy } = hangingDeps(hangAt);
      // The fake pdf.js never looks at the bytes.
      const pending = extractPdfText(encoder.encode("%PDF-1.7\n"), { timeoutMs: 5_000 }, deps);
      await vi.advanceTimersByTimeAsync(4_999);
      expect(destroy).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      expect(await pending).toEqual({
        ok: false,
        failure: { code: "timeout", message: "Reading the PDF took longer than 5 seconds." },
      });
      expect(destroy).toHaveBeenCalledTimes(1);
    });

    it("stops a real pdf.js parse cleanly, and the next document still reads", async () => {
      const data = await multiPagePdf(3);
      let started!: () => void;
      const getDocumentCalled = new Promise<void>((resolve) => (started = resolve));
      const deps: PdfTextDeps = {
        loadPdfjs: async () => {
          const real = await realPdfjs();
          return {
            getDocument(params) {
              const task = real.getDocument(params);
              started();
              return task;
            },
          };
        },
      };
      // Only setTimeout is faked: pdf.js keeps working, the limit fires when the test says so.
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      const log = vi.spyOn(console, "log");
      try {
        const pending = extractPdfText(data, { timeoutMs: 60_000 }, deps);
        // The limit's timer is set in the same synchronous step as getDocument; reading three
        // pages needs several event-loop turns, so the parse is still running here.
        await getDocumentCalled;
        vi.advanceTimersByTime(60_000);
        expect(await pending).toMatchObject({ ok: false, failure: { code: "timeout" } });
        vi.useRealTimers();
        expect(await extractPdfText(data)).toMatchObject({ ok: true, pages: 3 });
        expect(log).not.toHaveBeenCalled();
      } finally {
        log.mockRestore();
      }
    });
  });
});

describe("pageText", () => {
  it("respects hasEOL, breaks on a new baseline and drops marked-content entries", () => {
    const at = (str: string, y: number, hasEOL = false) => ({ str, hasEOL, transform: [1, 0, 0, 1, 0, y], height: 10 });
    expect(
      pageText([
        at("Anamnese:", 700),
        at(" ", 700),
        at("Schwindel", 700, true),
        { type: "beginMarkedContent" },
        at("seit", 680),
        at("zwei Wochen", 660),
        at("u\u0308ber", 640, true),
        // pdf.js also marks an end of line on the same baseline (text that jumps back left).
        at("Blutdruck", 620, true),
        at("normal", 620),
      ]),
    ).toBe("Anamnese: Schwindel\nseit\nzwei Wochen\nüber\nBlutdruck\nnormal");
  });
});

describe("sanitiseFileName", () => {
  it("keeps umlauts, drops paths, control characters and heading markers", () => {
    expect(sanitiseFileName("C:\\Befunde\\Größe ü.pdf")).toBe("Größe ü.pdf");
    expect(sanitiseFileName("../../etc/lab.pdf")).toBe("lab.pdf");
    expect(sanitiseFileName("a\nb\r\n=== c ===.pdf")).toBe("a b c .pdf");
    expect(sanitiseFileName("\u0000\n")).toBe("document.pdf");
    expect(sanitiseFileName(`${"x".repeat(300)}.pdf`)).toHaveLength(120);
  });
});

describe("extractPdfContext", () => {
  it("joins the good PDFs under their names and lists the broken one", async () => {
    const result = await extractPdfContext([
      { name: "Befund Müller.pdf", data: await germanTextPdf() },
      { name: "kaputt.pdf", data: await truncatedPdf() },
      { name: "labor/Werte.pdf", data: await multiPagePdf(2) },
    ]);
    expect(result).toEqual({
      success: true,
      pdfs_processed: 2,
      failures: [{ name: "kaputt.pdf", code: "broken" }],
      extracted_text:
        `=== Befund Müller.pdf ===\n${GERMAN_LINES.join("\n")}\n\n` +
        "=== Werte.pdf ===\nSeite 1 von 2\nInhalt der Seite 1\n\nSeite 2 von 2\nInhalt der Seite 2",
    });
  });

  it("is not a success when no PDF gave text", async () => {
    const result = await extractPdfContext([
      { name: "seite.pdf", data: htmlNamedPdf().data },
      { name: "geschützt.pdf", data: encryptedPdf() },
      { name: "leer.pdf", data: emptyFile() },
      { name: "scan.pdf", data: await makeTextPdf([[]]) },
    ]);
    expect(result).toEqual({
      success: false,
      extracted_text: "",
      pdfs_processed: 1,
      failures: [
        { name: "seite.pdf", code: "not_pdf" },
        { name: "geschützt.pdf", code: "encrypted" },
        { name: "leer.pdf", code: "not_pdf" },
      ],
    });
  });

  it("caps the whole block at maxChars", async () => {
    const data = await germanTextPdf();
    const result = await extractPdfContext(
      [
        { name: "a.pdf", data },
        { name: "b.pdf", data },
      ],
      { maxChars: 300 },
    );
    expect(result.extracted_text).toHaveLength(300);
    expect(result.extracted_text).toContain("=== b.pdf ===");
    expect(result.pdfs_processed).toBe(2);
  });

  it("answers an empty request with nothing processed", async () => {
    expect(await extractPdfContext([])).toEqual({
      success: false,
      extracted_text: "",
      pdfs_processed: 0,
      failures: [],
    });
  });
});
