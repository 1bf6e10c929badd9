import { describe, expect, it } from "vitest";

import {
  GERMAN_LINES,
  emptyFile,
  encryptedPdf,
  germanTextPdf,
  htmlNamedPdf,
  makeTextPdf,
  multiPagePdf,
  truncatedPdf,
} from "../../../tests/support/pdf-fixtures";

import { extractPdfContext } from "./text.server";
import { trapUnhandledRejections } from "../../../tests/support/pdf-text-helpers";

trapUnhandledRejections();

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
