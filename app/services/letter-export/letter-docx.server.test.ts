import { inflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { GERMAN_LETTER_HEAD } from "../../../tests/support/export-letter";
import type { ExportLetter } from "./export-letter";
import { DIN_5008_B, mm, writeLetterDocx } from "./letter-docx.server";

// The DOCX is read back with a reader of its own (the ZIP central directory and node:zlib), not with the library that
// wrote it, so a fault in the writer's ZIP cannot hide behind the same fault in the reader.
function unzip(bytes: Uint8Array): Map<string, string> {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = data.length - 22;
  while (end >= 0 && data.readUInt32LE(end) !== 0x06054b50) end--;
  if (end < 0) throw new Error("not a ZIP file");
  const count = data.readUInt16LE(end + 10);
  let at = data.readUInt32LE(end + 16);
  const files = new Map<string, string>();
  for (let i = 0; i < count; i++) {
    if (data.readUInt32LE(at) !== 0x02014b50) throw new Error("broken central directory");
    const method = data.readUInt16LE(at + 10);
    const size = data.readUInt32LE(at + 20);
    const nameLength = data.readUInt16LE(at + 28);
    const extraLength = data.readUInt16LE(at + 30);
    const commentLength = data.readUInt16LE(at + 32);
    const local = data.readUInt32LE(at + 42);
    const name = data.toString("utf8", at + 46, at + 46 + nameLength);
    const start = local + 30 + data.readUInt16LE(local + 26) + data.readUInt16LE(local + 28);
    const raw = data.subarray(start, start + size);
    files.set(name, (method === 8 ? inflateRawSync(raw) : raw).toString("utf8"));
    at += 46 + nameLength + extraLength + commentLength;
  }
  return files;
}

function decode(xml: string): string {
  return xml
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&#x([0-9a-f]+);/gi, (_, n: string) => String.fromCodePoint(parseInt(n, 16)))
    .replace(/&amp;/g, "&");
}

type Para = { xml: string; text: string; style: string | null; frame: string | null };

/** The body's paragraphs in order, each with its text (line breaks as "\n"), style and frame. */
function paragraphs(xml: string): Para[] {
  return [...xml.matchAll(/<w:p[ >][\s\S]*?<\/w:p>/g)].map(([p]) => ({
    xml: p,
    text: decode(
      [...p.matchAll(/<w:br\/>|<w:t(?: [^>]*)?>([^<]*)<\/w:t>/g)]
        .map((m) => (m[0] === "<w:br/>" ? "\n" : m[1]))
        .join(""),
    ),
    style: /<w:pStyle w:val="([^"]+)"/.exec(p)?.[1] ?? null,
    frame: /<w:framePr [^>]*\/>/.exec(p)?.[0] ?? null,
  }));
}

/** A footer's words and fields in order: fields as {PAGE}, {NUMPAGES}. */
function footerTokens(xml: string): string[] {
  return [...xml.matchAll(/<w:t(?: [^>]*)?>([^<]*)<\/w:t>|<w:instrText[^>]*>([^<]*)<\/w:instrText>/g)].map((m) =>
    m[2] === undefined ? decode(m[1]) : `{${m[2].trim()}}`,
  );
}

function attr(element: string, name: string): string | undefined {
  return new RegExp(`${name}="([^"]*)"`).exec(element)?.[1];
}

// A 2 × 1 pixel PNG.
const PNG = Uint8Array.from(
  Buffer.from(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAYAAAD0In+KAAAADklEQVR4nGP4z8AAQv8BD/kD/YURmXYAAAAASUVORK5CYII=",
    "base64",
  ),
);

function letter(overrides: Partial<ExportLetter> = {}): ExportLetter {
  return {
    ...GERMAN_LETTER_HEAD,
    letterhead: {
      practiceName: "Hausarztpraxis Größe & Söhne",
      doctors: [
        "Dr. med. Anna Weber, Fachärztin für Allgemeinmedizin",
        "Dr. med. Jörg Maaß, Facharzt für Innere Medizin",
      ],
      street: "Marktstraße 1",
      postalCode: "12345",
      city: "Musterstadt",
      phone: "0123 45678",
      email: "praxis@example.org",
      bsnr: "123456789",
      lanr: "987654321",
      logo: null,
      closing: "Mit freundlichen Grüßen",
      signature: ["Dr. med. Anna Weber", "Fachärztin für Allgemeinmedizin"],
    },
    sections: [
      { title: "Anamnese", text: "Seit drei Tagen Schmerzen in der Brust.\nKein Fieber, keine Übelkeit." },
      { title: "Befund", text: 'RR < 160/95 mmHg & Puls 80/min, "unauffällig".\n\nEKG: Sinusrhythmus.' },
      { title: "Hinweis", text: "<script>alert(1)</script>" },
      { title: "Procedere", text: "Wiedervorstellung in zwei Wochen; Maßnahmen besprochen." },
    ],
    ...overrides,
  };
}

describe("writeLetterDocx", () => {
  it("writes an A4 DOCX with DIN 5008 margins whose sections and texts read back in order", async () => {
    const files = unzip(await writeLetterDocx(letter()));
    expect([...files.keys()]).toEqual(
      expect.arrayContaining(["[Content_Types].xml", "word/document.xml", "word/styles.xml"]),
    );
    const xml = files.get("word/document.xml")!;

    const pgSz = /<w:pgSz [^>]*\/>/.exec(xml)![0];
    expect(attr(pgSz, "w:w")).toBe(String(mm(210)));
    expect(attr(pgSz, "w:h")).toBe(String(mm(297)));
    const pgMar = /<w:pgMar [^>]*\/>/.exec(xml)![0];
    expect(attr(pgMar, "w:left")).toBe("1417"); // 25 mm
    expect(attr(pgMar, "w:right")).toBe("1134"); // 20 mm

    const body = paragraphs(xml).filter((p) => !p.frame && p.text !== "");
    expect(body.map((p) => [p.style, p.text])).toEqual([
      [null, "Befundbericht vom 27.11.2026"],
      ["Heading2", "Anamnese"],
      [null, "Seit drei Tagen Schmerzen in der Brust.\nKein Fieber, keine Übelkeit."],
      ["Heading2", "Befund"],
      [null, 'RR < 160/95 mmHg & Puls 80/min, "unauffällig".'],
      [null, "EKG: Sinusrhythmus."],
      ["Heading2", "Hinweis"],
      [null, "<script>alert(1)</script>"],
      ["Heading2", "Procedere"],
      [null, "Wiedervorstellung in zwei Wochen; Maßnahmen besprochen."],
      [null, "Mit freundlichen Grüßen"],
      [null, "Dr. med. Anna Weber"],
      [null, "Fachärztin für Allgemeinmedizin"],
    ]);
    expect(body[0].xml).toContain("<w:b/>"); // the subject is bold
  });

  it("escapes XML special characters, so the file stays well-formed and the text round-trips", async () => {
    const xml = unzip(await writeLetterDocx(letter())).get("word/document.xml")!;
    expect(xml).toContain("RR &lt; 160/95 mmHg &amp; Puls");
    expect(xml).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(xml).not.toContain("<script>");
    expect(xml).not.toMatch(/&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);)/i);
    expect(xml).toContain("Hausarztpraxis Größe &amp; Söhne");
  });

  it("keeps umlauts and ß intact and removes characters XML forbids", async () => {
    const xml = unzip(
      await writeLetterDocx(letter({ sections: [{ title: "Diagnose", text: "Mu\u0308ller\u0000 Fuß\u200B" }] })),
    ).get("word/document.xml")!;
    const texts = paragraphs(xml).map((p) => p.text);
    expect(texts).toContain("Müller Fuß");
    expect(texts).toContain("Patient/in: Jürgen Weiß");
    // eslint-disable-next-line no-control-regex -- the test looks for control characters
    expect(xml).not.toMatch(/[\u0000-\u0008\u200B]/);
  });

  it("puts the address field in a frame 20 mm from the left, 45 mm from the top, 85 × 45 mm", async () => {
    const xml = unzip(await writeLetterDocx(letter())).get("word/document.xml")!;
    const framed = paragraphs(xml).filter((p) => p.frame);
    const address = framed.filter((p) => attr(p.frame!, "w:y") === "2551");
    expect(address.map((p) => p.text)).toEqual([
      "Hausarztpraxis Größe & Söhne · Marktstraße 1 · 12345 Musterstadt",
      "Herrn Dr. med. Peter Braun",
      "Lindenweg 2",
      "12345 Musterstadt",
    ]);
    for (const p of address) {
      expect(attr(p.frame!, "w:x")).toBe("1134"); // 20 mm
      expect(attr(p.frame!, "w:w")).toBe("4819"); // 85 mm
      expect(attr(p.frame!, "w:h")).toBe("2551"); // 45 mm
      expect(attr(p.frame!, "w:hRule")).toBe("exact");
      expect(attr(p.frame!, "w:hAnchor")).toBe("page");
      expect(attr(p.frame!, "w:vAnchor")).toBe("page");
    }
    // The recipient starts below the 17.7 mm zone of the return address.
    const returnLine = /<w:spacing [^>]*\/>/.exec(address[0].xml)![0];
    expect(
      Number(attr(returnLine, "w:before")) + Number(attr(returnLine, "w:line")) + Number(attr(returnLine, "w:after")),
    ).toBe(mm(DIN_5008_B.address.returnZone));

    const info = framed.filter((p) => attr(p.frame!, "w:x") === String(mm(125)));
    expect(info.map((p) => p.text)).toEqual(["Patient/in: Jürgen Weiß", "geb. 01.02.1950", "Datum: 27.11.2026"]);
    expect(attr(info[0].frame!, "w:y")).toBe(String(mm(50)));

    const letterhead = framed.filter((p) => attr(p.frame!, "w:y") === String(mm(10)));
    expect(letterhead.map((p) => p.text)).toEqual([
      "Hausarztpraxis Größe & Söhne",
      "Dr. med. Anna Weber, Fachärztin für Allgemeinmedizin",
      "Dr. med. Jörg Maaß, Facharzt für Innere Medizin",
      "Marktstraße 1 · 12345 Musterstadt",
      "Tel. 0123 45678 · E-Mail praxis@example.org",
      "BSNR 123456789 · LANR 987654321",
    ]);
    // Fold marks at 105 and 210 mm, punch mark at 148.5 mm.
    const marks = framed.filter((p) => attr(p.frame!, "w:x") === String(mm(5))).map((p) => attr(p.frame!, "w:y"));
    expect(marks).toEqual([mm(105), mm(148.5), mm(210)].map(String));
  });

  it("numbers pages in the footer with PAGE and NUMPAGES fields in the labels' wording", async () => {
    const files = unzip(await writeLetterDocx(letter()));
    const footers = [...files.entries()].filter(([name]) => /^word\/footer\d+\.xml$/.test(name));
    expect(footers.length).toBeGreaterThanOrEqual(1);
    for (const [, xml] of footers) {
      expect(footerTokens(xml)).toEqual(["Seite ", "{PAGE}", " von ", "{NUMPAGES}"]);
      expect(xml).toMatch(/<w:fldChar w:fldCharType="begin"\/>/);
    }
    // The first page has a footer of its own (titlePage), and it counts too.
    const sectPr = /<w:sectPr[\s\S]*<\/w:sectPr>/.exec(files.get("word/document.xml")!)![0];
    expect(sectPr).toContain("<w:titlePg/>");
    expect(sectPr).toMatch(/<w:footerReference w:type="first"/);
    expect(sectPr).toMatch(/<w:footerReference w:type="default"/);
  });

  it("sets the document language and fonts that Word and LibreOffice have", async () => {
    const styles = unzip(await writeLetterDocx(letter())).get("word/styles.xml")!;
    const defaults = /<w:docDefaults>[\s\S]*?<\/w:docDefaults>/.exec(styles)![0];
    expect(defaults).toMatch(/<w:lang w:val="de-DE"\/>/);
    expect(defaults).toMatch(/<w:rFonts w:ascii="Arial"/);
    expect(styles).toMatch(/<w:style w:type="paragraph" w:styleId="Heading2">[\s\S]*?<w:b\/>/);
  });

  it("writes an English letter in English, once: language, date, labels and page wording", async () => {
    const english = letter({
      language: "en-GB",
      subject: "Clinic letter",
      sections: [{ title: "History", text: "Chest pain for three days." }],
      letterhead: { ...letter().letterhead, closing: "Kind regards", bsnr: null, lanr: null },
      labels: {
        page: (page, pages) => `Page ${page} of ${pages}`,
        patient: "Patient",
        born: "born",
        date: "Date",
        phone: "Phone",
        email: "Email",
        bsnr: "BSNR",
        lanr: "LANR",
      },
    });
    const files = unzip(await writeLetterDocx(english));
    expect(files.get("word/styles.xml")).toMatch(/<w:lang w:val="en-GB"\/>/);
    const texts = paragraphs(files.get("word/document.xml")!).map((p) => p.text);
    expect(texts).toEqual(
      expect.arrayContaining(["Patient: Jürgen Weiß", "born 01/02/1950", "Date: 27/11/2026", "Kind regards"]),
    );
    expect(texts.join("\n")).not.toMatch(/Datum|geb\.|Seite|BSNR/);
    const footer = [...files.entries()].find(([name]) => name.startsWith("word/footer"))![1];
    expect(footerTokens(footer)).toEqual(["Page ", "{PAGE}", " of ", "{NUMPAGES}"]);
  });

  it("embeds a PNG logo at the letterhead's right edge and leaves an SVG logo out", async () => {
    const withPng = unzip(
      await writeLetterDocx(letter({ letterhead: { ...letter().letterhead, logo: { mime: "image/png", data: PNG } } })),
    );
    const media = [...withPng.keys()].filter((name) => name.startsWith("word/media/") && !name.endsWith("/"));
    expect(media).toHaveLength(1);
    expect(withPng.get("word/document.xml")).toMatch(/<wp:docPr [^>]*name="Logo"/);
    const logoFrame = paragraphs(withPng.get("word/document.xml")!).find((p) => p.xml.includes("<w:drawing>"))!.frame!;
    // 2 × 1 px scaled to the 50 mm width: its right edge at 190 mm, the page's right margin.
    expect(Number(attr(logoFrame, "w:x")) + Number(attr(logoFrame, "w:w"))).toBeCloseTo(mm(190), -1);

    const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>');
    const withSvg = unzip(
      await writeLetterDocx(
        letter({ letterhead: { ...letter().letterhead, logo: { mime: "image/svg+xml", data: svg } } }),
      ),
    );
    expect([...withSvg.keys()].filter((name) => name.startsWith("word/media/") && !name.endsWith("/"))).toHaveLength(0);
  });

  it("leaves out a section without text", async () => {
    const xml = unzip(
      await writeLetterDocx(
        letter({
          sections: [
            { title: "Leer", text: " \n " },
            { title: "Befund", text: "Gut." },
          ],
        }),
      ),
    ).get("word/document.xml")!;
    const texts = paragraphs(xml).map((p) => p.text);
    expect(texts).not.toContain("Leer");
    expect(texts).toContain("Befund");
  });
});
