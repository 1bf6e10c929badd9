import { describe, expect, it } from "vitest";

import { pageText, sanitiseFileName } from "./text-format.server";
import { trapUnhandledRejections } from "../../../tests/support/pdf-text-helpers";

trapUnhandledRejections();

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
