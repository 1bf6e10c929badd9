import { describe, expect, it } from "vitest";
import { csvCell, toCsv } from "./csv.server";

describe("CSV", () => {
  it("quotes what needs quoting and doubles quotes (RFC 4180)", () => {
    expect(csvCell("Dr. Anna Berger")).toBe("Dr. Anna Berger");
    expect(csvCell("Berger, Anna")).toBe('"Berger, Anna"');
    expect(csvCell('Anna "Anni" Berger')).toBe('"Anna ""Anni"" Berger"');
    expect(csvCell("Zeile 1\nZeile 2")).toBe('"Zeile 1\nZeile 2"');
    expect(csvCell(null)).toBe("");
    expect(csvCell(undefined)).toBe("");
    expect(csvCell(3)).toBe("3");
    expect(csvCell(Number.NaN)).toBe("");
  });

  it("keeps text that a spreadsheet would run as a formula as text", () => {
    expect(csvCell("=1+1")).toBe("'=1+1");
    expect(csvCell("+49 30 1234")).toBe("'+49 30 1234");
    expect(csvCell("-2+3")).toBe("'-2+3");
    expect(csvCell("@SUM(A1:A2)")).toBe("'@SUM(A1:A2)");
    expect(csvCell("\t=1")).toBe("'\t=1");
    expect(csvCell('=HYPERLINK("http://evil.example","klick")')).toBe(
      `"'=HYPERLINK(""http://evil.example"",""klick"")"`,
    );
    // Only at the start: a hyphenated name is untouched.
    expect(csvCell("Müller-Lüdenscheidt")).toBe("Müller-Lüdenscheidt");
  });

  it("writes rows with CRLF after a byte-order mark", () => {
    expect(
      toCsv([
        ["a", 1],
        ["b,c", 2],
      ]),
    ).toBe('\uFEFFa,1\r\n"b,c",2\r\n');
  });
});
