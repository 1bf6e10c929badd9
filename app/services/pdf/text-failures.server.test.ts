import { describe, expect, it, vi } from "vitest";

import {
  ENCRYPTED_TEXT,
  emptyFile,
  encryptedPdf,
  germanTextPdf,
  htmlNamedPdf,
  truncatedPdf,
} from "../../../tests/support/pdf-fixtures";

import { PDF_LIMITS, extractPdfText } from "./text.server";
import { countingDeps, encoder, trapUnhandledRejections } from "../../../tests/support/pdf-text-helpers";

trapUnhandledRejections();

describe("extractPdfText", () => {
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
});
