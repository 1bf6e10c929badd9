// The letter as a PDF after DIN 5008 form B (issue 25), the way a German practice sends it: on its letterhead, the
// recipient in the address field so the letter fits a DL window envelope, an information block beside it, the
// subject in bold, the sections in the template's order, closing and signature, "Seite 1 von 2" on every page,
// fold and punch marks in the left margin. pdfkit writes it (ADR 0033): pure JavaScript, no browser, text as real
// text in an embedded subset of Arimo (SIL OFL 1.1, metric-compatible with the DOCX export's Arial), so every German
// character survives and the text can be searched, copied and read aloud.
//
// The layout is computed here line by line rather than left to pdfkit's flowing text: the writer decides where a
// page ends, so a section's title never stands alone at a page's foot, and every position the tests and the print
// view rely on comes from DIN_5008_B below.

import fs from "node:fs";
import { createRequire } from "node:module";
import { inflateSync } from "node:zlib";
import PDFDocument from "pdfkit";

import { formatLetterDate, type ExportLetter } from "./export-letter";
import { cleanExportText } from "./letter-text";

/** DIN 5008 form B on A4, in millimetres from the page's top-left corner. */
export const DIN_5008_B = {
  page: { width: 210, height: 297 },
  /** Body text from 25 mm to 190 mm; following pages start at `top`; nothing of the body below `bottom`. */
  margin: { top: 25, right: 20, bottom: 25, left: 25 },
  /** Form B's letterhead is 45 mm high; its text keeps clear of the address field's return line. */
  letterhead: { x: 25, y: 10, width: 165, height: 33 },
  logo: { maxWidth: 50, maxHeight: 20 },
  /** The address field: the 5-line Zusatz- und Vermerkzone (17.7 mm, the return line at its foot), then the
   * 9-line Anschriftzone (27.3 mm) for the recipient. Text starts 5 mm inside the field. */
  address: { x: 20, y: 45, width: 85, height: 45, returnZone: 17.7, inset: 5 },
  recipientZone: { x: 20, y: 62.7, width: 85, height: 27.3 },
  /** The information block right of the address field. */
  info: { x: 125, y: 50, width: 65 },
  /** Where the subject begins on page 1: two lines below the address field. */
  bodyTop: 98.5,
  /** Tops of the small header of following pages (patient, date) and of the page number. */
  followHeader: 12,
  pageNumber: 282,
  /** Fold marks at 105 and 210 mm (form B), the punch mark at 148.5 mm; short rules from 5 mm. */
  foldMarks: [105, 210],
  punchMark: 148.5,
  markX: 5,
  markLength: { fold: 5, punch: 7 },
} as const;

const PT_PER_MM = 72 / 25.4;
function pt(mm: number): number {
  return mm * PT_PER_MM;
}

const BODY_SIZE = 11;
const BODY_LEADING = 14; // ≈ 4.9 mm: readable 11 pt, close to DIN 5008's 1-line spacing
const INFO_SIZE = 9;
const SMALL_SIZE = 8;
const GREY = "#555555";

type FontName = "regular" | "bold";

// ---- Fonts ------------------------------------------------------------------------------------------------------

// Read once from the font package and kept: fontkit parses a font lazily, so each document pays only for the glyphs
// it uses. The path is resolved from this module, which works in the vitest run, in the server bundle (build/ sits
// beside node_modules; packages stay external) and in the bundles the benches make.
let fontFiles: { regular: Buffer; bold: Buffer } | undefined;
function loadFonts(): { regular: Buffer; bold: Buffer } {
  if (!fontFiles) {
    const require = createRequire(import.meta.url);
    const file = (name: string) => fs.readFileSync(require.resolve(`@expo-google-fonts/arimo/${name}`));
    fontFiles = { regular: file("400Regular/Arimo_400Regular.ttf"), bold: file("700Bold/Arimo_700Bold.ttf") };
  }
  return fontFiles;
}

// ---- Text -------------------------------------------------------------------------------------------------------

// Typographic spaces the font may draw as boxes become plain ones; the no-break space stays (Arimo has it).
const ODD_SPACES = /[\u1680\u2000-\u200A\u205F\u3000]/g;

/** Clean text with its line breaks: composed umlauts, no invisible characters, tabs as spaces, no trailing spaces,
 * at most one blank line in a row and none at either end. */
function clean(text: string): string {
  return cleanExportText(text)
    .replace(ODD_SPACES, " ")
    .replace(/\t/g, "    ")
    .split("\n")
    .map((line) => line.replace(/\s+$/, ""))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .replace(/^\n+|\n+$/g, "");
}

/** One line: its line breaks become spaces. */
function line(text: string): string {
  return clean(text)
    .replace(/\s*\n\s*/g, " ")
    .trim();
}

type Measure = { doc: PDFKit.PDFDocument; font: FontName; size: number };

function widthOf(m: Measure, text: string): number {
  m.doc.font(m.font).fontSize(m.size);
  return m.doc.widthOfString(text);
}

/** The longest start of `word` that fits `width`, cut after a hyphen or slash where one fits (at least one
 * character, so a very long word without spaces is broken over lines instead of running off the page). */
function fittingStart(m: Measure, word: string, width: number): string {
  const chars = Array.from(word);
  let low = 1;
  let high = chars.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (widthOf(m, chars.slice(0, mid).join("")) <= width) low = mid;
    else high = mid - 1;
  }
  const start = chars.slice(0, low).join("");
  const soft = Math.max(start.lastIndexOf("-"), start.lastIndexOf("/"));
  return soft > 0 && soft < start.length - 1 ? start.slice(0, soft + 1) : start;
}

// A value and its unit stay on one line ("148/92 mmHg", "5 mg", "10 €"), as a no-break space would keep them.
const UNIT =
  /^(?:mg|µg|mcg|g|kg|ml|l|mmHg|mmol\/l|µmol\/l|mg\/dl|ng\/l|ng\/ml|U\/l|IE|I\.E\.|%|‰|€|°C|cm|mm|min|h|d|Wo\.?|Mon\.?|J\.?|\/min)[.,;:)]?$/;

function glueUnits(words: string[]): string[] {
  const out: string[] = [];
  for (const word of words) {
    const previous = out.at(-1);
    if (previous !== undefined && /\d$/.test(previous) && UNIT.test(word)) out[out.length - 1] = `${previous} ${word}`;
    else out.push(word);
  }
  return out;
}

/** Greedy left-aligned wrapping (DIN 5008 sets letters ragged right), one output line per line; a blank input line
 * stays an empty string. */
function wrap(m: Measure, text: string, width: number): string[] {
  const out: string[] = [];
  const space = widthOf(m, " ");
  for (const paragraph of text.split("\n")) {
    const indent = /^ */.exec(paragraph)![0];
    const words = glueUnits(paragraph.split(/ +/).filter(Boolean));
    if (words.length === 0) {
      out.push("");
      continue;
    }
    let current = indent;
    let currentWidth = indent ? widthOf(m, indent) : 0;
    for (let word of words) {
      let wordWidth = widthOf(m, word);
      const gap = current.trim() ? space : 0;
      if (currentWidth + gap + wordWidth <= width) {
        current += (gap ? " " : "") + word;
        currentWidth += gap + wordWidth;
        continue;
      }
      if (current.trim()) out.push(current);
      current = "";
      currentWidth = 0;
      while (wordWidth > width) {
        const start = fittingStart(m, word, width);
        out.push(start);
        word = word.slice(start.length);
        wordWidth = widthOf(m, word);
      }
      current = word;
      currentWidth = wordWidth;
    }
    out.push(current);
  }
  return out;
}

// ---- Drawing ----------------------------------------------------------------------------------------------------

type Run = {
  text: string;
  font: FontName;
  size: number;
  color?: string;
  /** Height in pt, for a spacer. */
  advance?: number;
};

/** Draws one line of text whose box starts `top` mm from the top edge. */
function draw(doc: PDFKit.PDFDocument, run: Run, x: number, top: number): void {
  if (!run.text) return;
  doc
    .font(run.font)
    .fontSize(run.size)
    .fillColor(run.color ?? "black")
    .text(run.text, pt(x), pt(top), { lineBreak: false });
}

function drawRight(doc: PDFKit.PDFDocument, run: Run, right: number, top: number): void {
  const width = widthOf({ doc, font: run.font, size: run.size }, run.text) / PT_PER_MM;
  draw(doc, run, right - width, top);
}

function rule(doc: PDFKit.PDFDocument, x: number, y: number, length: number, width = 0.5): void {
  doc
    .moveTo(pt(x), pt(y))
    .lineTo(pt(x + length), pt(y))
    .lineWidth(width)
    .strokeColor("#808080")
    .stroke();
}

function marks(doc: PDFKit.PDFDocument, firstPage: boolean): void {
  const { foldMarks, punchMark, markX, markLength } = DIN_5008_B;
  // Following pages are folded with page 1 along its marks; each page is punched for filing.
  if (firstPage) for (const y of foldMarks) rule(doc, markX, y, markLength.fold);
  rule(doc, markX, punchMark, markLength.punch);
}

// ---- Page 1's fixed parts ---------------------------------------------------------------------------------------

/** Logo at the letterhead's right edge; returns the width it takes (0 when there is none). An SVG logo is left out:
 * pdfkit draws only SVG path data, and the one SVG renderer for it (svg-to-pdfkit) has had no release since 2019 —
 * an unmaintained parser of uploaded markup. The settings can rasterise an SVG to PNG when it is uploaded, so the
 * PDF and the DOCX carry the same picture (ADR 0033). A PNG pdfkit cannot read is left out as well: the letter
 * matters more than its decoration. */
function drawLogo(doc: PDFKit.PDFDocument, letter: ExportLetter): number {
  const logo = letter.letterhead.logo;
  if (!logo || logo.mime !== "image/png") return 0;
  const size = pngSize(logo.data);
  if (!size) return 0;
  const { letterhead, logo: box } = DIN_5008_B;
  const scale = Math.min(pt(box.maxWidth) / size.width, pt(box.maxHeight) / size.height);
  const width = size.width * scale;
  const x = pt(letterhead.x + letterhead.width) - width;
  const data = Buffer.from(logo.data.buffer, logo.data.byteOffset, logo.data.byteLength);
  doc.image(data, x, pt(letterhead.y), { width, height: size.height * scale });
  return width / PT_PER_MM;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const PNG_MAX_PIXELS = 25_000_000;
// Adam7: each pass's first column and row and its steps.
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

/** The size of a PNG whose image data pdfkit can decode, or null. pdfkit decodes a PNG with transparency
 * asynchronously, where a broken one becomes an uncaught exception and a PDF that never ends: so the chunks, the
 * image data's compression (bounded, against a decompression bomb) and every row's filter byte are checked here. */
function pngSize(data: Uint8Array): { width: number; height: number } | null {
  if (data.byteLength < 33 || PNG_SIGNATURE.some((byte, i) => data[i] !== byte)) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let header: { width: number; height: number; depth: number; color: number; interlace: number } | null = null;
  let palette = false;
  const idat: Uint8Array[] = [];
  for (let at = 8; at + 8 <= data.byteLength;) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...data.subarray(at + 4, at + 8));
    const body = data.subarray(at + 8, at + 8 + length);
    if (body.byteLength !== length) return null;
    if (type === "IHDR" && length >= 13) {
      header = {
        width: view.getUint32(at + 8),
        height: view.getUint32(at + 12),
        depth: data[at + 16],
        color: data[at + 17],
        interlace: data[at + 20],
      };
    } else if (type === "PLTE") palette = true;
    else if (type === "IDAT") idat.push(body);
    else if (type === "IEND") break;
    at += 12 + length;
  }
  if (!header || idat.length === 0) return null;
  const { width, height, depth, color, interlace } = header;
  const channels = PNG_CHANNELS[color];
  if (!channels || width === 0 || height === 0 || width * height > PNG_MAX_PIXELS) return null;
  if (![1, 2, 4, 8, 16].includes(depth) || (color === 3 && !palette)) return null;
  const rowBytes = (columns: number) => Math.ceil((columns * channels * depth) / 8);
  const passes: [number, number][] =
    interlace === 1
      ? ADAM7.map(([x, y, dx, dy]) => [Math.ceil((width - x) / dx), Math.ceil((height - y) / dy)])
      : [[width, height]];
  const expected = passes.reduce((sum, [w, h]) => sum + (w > 0 && h > 0 ? h * (1 + rowBytes(w)) : 0), 0);
  let pixels: Uint8Array;
  try {
    pixels = inflateSync(Buffer.concat(idat), { maxOutputLength: expected + 1 });
  } catch {
    return null;
  }
  if (pixels.byteLength < expected) return null;
  let at = 0;
  for (const [w, h] of passes) {
    if (w <= 0 || h <= 0) continue;
    for (let row = 0; row < h; row++, at += 1 + rowBytes(w)) if (pixels[at] > 4) return null;
  }
  return { width, height };
}

type Placed = Run & { top: number };

/** Practice name, doctors, address and BSNR/LANR, made smaller (and the doctors joined) until it fits 33 mm. */
function letterheadLines(doc: PDFKit.PDFDocument, letter: ExportLetter, width: number): Placed[] {
  const { letterhead: head, labels } = letter;
  const ids = [
    head.bsnr && `${line(labels.bsnr)} ${line(head.bsnr)}`,
    head.lanr && `${line(labels.lanr)} ${line(head.lanr)}`,
  ]
    .filter(Boolean)
    .join(" · ");
  const address = [line(head.street), line(`${head.postalCode} ${head.city}`)].filter(Boolean).join(" · ");
  const doctors = head.doctors.map(line).filter(Boolean);
  const { height } = DIN_5008_B.letterhead;
  let placed: Placed[] = [];
  for (const scale of [1, 0.9, 0.8, 0.7, 0.6]) {
    const joined = scale <= 0.7; // many doctors: one flowing paragraph instead of a line each
    placed = [];
    let top = 0;
    const add = (text: string, font: FontName, size: number, color?: string) => {
      for (const part of wrap({ doc, font, size }, text, width)) {
        placed.push({ text: part, font, size, color, top });
        top += (size * 1.2) / PT_PER_MM;
      }
    };
    add(line(head.practiceName), "bold", 14 * scale);
    top += 0.5;
    for (const doctor of joined ? [doctors.join(" · ")] : doctors)
      if (doctor) add(doctor, "regular", INFO_SIZE * scale);
    top += 1.5;
    if (address) add(address, "regular", SMALL_SIZE * scale, GREY);
    if (ids) add(ids, "regular", SMALL_SIZE * scale, GREY);
    if (top <= height) return placed;
  }
  // Still too much: what does not fit is cut rather than drawn over the address field.
  return placed.filter((p) => p.top + (p.size * 1.2) / PT_PER_MM <= height);
}

/** The return line at the foot of the Zusatz- und Vermerkzone, shrunk to fit one line of the field. */
function drawReturnLine(doc: PDFKit.PDFDocument, letter: ExportLetter): void {
  const { address } = DIN_5008_B;
  const head = letter.letterhead;
  const text = [line(head.practiceName), line(head.street), line(`${head.postalCode} ${head.city}`)]
    .filter(Boolean)
    .join(" · ");
  if (!text) return;
  const width = address.width - 2 * address.inset;
  let size = 7;
  while (size > 5 && widthOf({ doc, font: "regular", size }, text) > pt(width)) size -= 0.5;
  const fitted = wrap({ doc, font: "regular", size }, text, pt(width))[0] ?? "";
  const baseline = address.y + address.returnZone - 1.2;
  const top = baseline - (size * 0.9) / PT_PER_MM;
  draw(doc, { text: fitted, font: "regular", size, color: GREY }, address.x + address.inset, top);
  const textWidth = widthOf({ doc, font: "regular", size }, fitted) / PT_PER_MM;
  rule(doc, address.x + address.inset, baseline + 0.5, textWidth, 0.3);
}

/** The recipient in the Anschriftzone: 10 pt when it fits (six lines), smaller down to its nine lines of 8 pt. */
function drawRecipient(doc: PDFKit.PDFDocument, letter: ExportLetter): void {
  const zone = DIN_5008_B.recipientZone;
  const width = pt(zone.width - 2 * DIN_5008_B.address.inset);
  const source = [letter.recipient.name, ...letter.recipient.addressLines].map(line).filter(Boolean);
  let lines: string[] = [];
  let size = 10;
  let leading = 0;
  for (size of [10, 9, 8]) {
    lines = source.flatMap((text) => wrap({ doc, font: "regular", size }, text, width));
    leading = Math.min(size * 1.2, pt(zone.height - 0.5) / Math.max(lines.length, 1));
    if (leading >= size * 1.05) break;
  }
  const max = Math.floor(pt(zone.height - 0.5) / leading);
  lines.slice(0, max).forEach((text, i) => {
    draw(
      doc,
      { text, font: "regular", size },
      zone.x + DIN_5008_B.address.inset,
      zone.y + 0.3 + (i * leading) / PT_PER_MM,
    );
  });
}

/** The information block: patient, birth date, phone, e-mail and, last, the date; returns its foot in mm. */
function drawInfo(doc: PDFKit.PDFDocument, letter: ExportLetter): number {
  const { info } = DIN_5008_B;
  const { labels, patient, language, letterhead: head } = letter;
  const rows: [string, string][] = [];
  if (line(patient.name)) rows.push([line(labels.patient), line(patient.name)]);
  if (patient.birthDate) rows.push([line(labels.born), formatLetterDate(patient.birthDate, language)]);
  if (line(head.phone)) rows.push([line(labels.phone), line(head.phone)]);
  if (line(head.email)) rows.push([line(labels.email), line(head.email)]);
  const dateRow: [string, string] = [line(labels.date), formatLetterDate(letter.date, language)];
  const m: Measure = { doc, font: "regular", size: INFO_SIZE };
  const labelWidth = Math.min(
    Math.max(...[...rows, dateRow].map(([label]) => widthOf(m, label))) / PT_PER_MM + 3,
    info.width / 2,
  );
  const leading = (INFO_SIZE * 1.3) / PT_PER_MM;
  let top = info.y;
  const row = ([label, value]: [string, string]) => {
    draw(
      doc,
      { text: wrap(m, label, pt(labelWidth - 2))[0] ?? "", font: "regular", size: INFO_SIZE, color: GREY },
      info.x,
      top,
    );
    for (const part of wrap(m, value, pt(info.width - labelWidth))) {
      draw(doc, { text: part, font: "regular", size: INFO_SIZE }, info.x + labelWidth, top);
      top += leading;
    }
  };
  rows.forEach(row);
  if (rows.length > 0) top += leading / 2;
  row(dateRow);
  return top;
}

// ---- The body ---------------------------------------------------------------------------------------------------

/** A piece of the body the paginator places whole: `keep` lines must share a page (a title with its first lines,
 * the closing with the signature). */
type Block = { gapBefore: number; lines: Run[]; keep: number };

function bodyBlocks(doc: PDFKit.PDFDocument, letter: ExportLetter): Block[] {
  const width = pt(DIN_5008_B.page.width - DIN_5008_B.margin.left - DIN_5008_B.margin.right);
  const regular: Measure = { doc, font: "regular", size: BODY_SIZE };
  const bold: Measure = { doc, font: "bold", size: BODY_SIZE };
  const runs = (m: Measure, text: string): Run[] =>
    wrap(m, text, width).map((t) => ({ text: t, font: m.font, size: BODY_SIZE }));
  const blocks: Block[] = [];
  const subject = line(letter.subject);
  if (subject) blocks.push({ gapBefore: 0, lines: runs(bold, subject), keep: 1 });
  for (const section of letter.sections) {
    const text = clean(section.text);
    const title = line(section.title);
    if (!text) continue; // a title alone tells the recipient nothing (as in the DOCX and text exports)
    const titleLines = title ? runs(bold, title) : [];
    const textLines = runs(regular, text);
    // The title stays with its first two lines of text (or the one there is).
    blocks.push({
      gapBefore: blocks.length > 0 ? BODY_LEADING : 0,
      lines: [...titleLines, ...textLines],
      keep: titleLines.length + Math.min(2, textLines.length),
    });
  }
  const closing = line(letter.letterhead.closing);
  const signature = letter.letterhead.signature.map(line).filter(Boolean);
  if (closing || signature.length > 0) {
    const lines: Run[] = [];
    if (closing) lines.push({ text: closing, font: "regular", size: BODY_SIZE });
    // Room for the handwritten signature.
    if (closing && signature.length > 0)
      lines.push({ text: "", font: "regular", size: BODY_SIZE, advance: 3 * BODY_LEADING });
    lines.push(...signature.map((text) => ({ text, font: "regular" as const, size: BODY_SIZE })));
    blocks.push({ gapBefore: blocks.length > 0 ? BODY_LEADING : 0, lines, keep: lines.length });
  }
  return blocks;
}

function drawFollowHeader(doc: PDFKit.PDFDocument, letter: ExportLetter): void {
  const { labels, patient, language } = letter;
  const parts = [
    line(patient.name) &&
      `${line(labels.patient)}: ${line(patient.name)}${patient.birthDate ? `, ${line(labels.born)} ${formatLetterDate(patient.birthDate, language)}` : ""}`,
    `${line(labels.date)}: ${formatLetterDate(letter.date, language)}`,
  ].filter(Boolean);
  const { margin, page, followHeader } = DIN_5008_B;
  const text = wrap(
    { doc, font: "regular", size: SMALL_SIZE },
    parts.join(" · "),
    pt(page.width - margin.left - margin.right),
  )[0];
  draw(doc, { text: text ?? "", font: "regular", size: SMALL_SIZE, color: GREY }, margin.left, followHeader);
}

/** Places the blocks from `top` (mm) on page 1 onwards, adding pages as they fill. */
function drawBody(doc: PDFKit.PDFDocument, letter: ExportLetter, blocks: Block[], top: number): void {
  const { margin, page } = DIN_5008_B;
  const bottom = pt(page.height - margin.bottom);
  const newPage = () => {
    doc.addPage({ size: "A4", margin: 0 });
    marks(doc, false);
    drawFollowHeader(doc, letter);
    return pt(margin.top);
  };
  let y = pt(top);
  let atPageTop = true;
  for (const block of blocks) {
    if (!atPageTop) y += block.gapBefore;
    const keepHeight = block.lines.slice(0, block.keep).reduce((sum, run) => sum + (run.advance ?? BODY_LEADING), 0);
    if (y + keepHeight > bottom && !atPageTop) {
      y = newPage();
      atPageTop = true;
    }
    block.lines.forEach((run, i) => {
      if (y + BODY_LEADING > bottom) {
        y = newPage();
        atPageTop = true;
      }
      const blankAtTop = run.text === "" && atPageTop;
      // A blank line inside a text is a paragraph's end; one that a page break leaves at the top is dropped.
      if (blankAtTop && i > 0) return;
      draw(doc, run, margin.left, y / PT_PER_MM);
      y += run.advance ?? (run.text === "" ? BODY_LEADING * 0.6 : BODY_LEADING);
      atPageTop = false;
    });
  }
}

// ---- The document -----------------------------------------------------------------------------------------------

/** The letter as a DIN 5008 form B PDF on A4. */
export async function writeLetterPdf(letter: ExportLetter): Promise<Uint8Array> {
  const fonts = loadFonts();
  const doc = new PDFDocument({
    autoFirstPage: false,
    bufferPages: true, // "Seite n von N" needs N: page numbers are written once every page exists
    // No default font: pdfkit would otherwise load Helvetica, a font not embedded.
    font: null as unknown as string,
    lang: letter.language,
    displayTitle: true,
    info: {
      Title: line(letter.subject),
      Author: line(letter.letterhead.practiceName),
      Creator: "Skribent",
    },
  });
  const chunks: Uint8Array[] = [];
  doc.on("data", (chunk: Uint8Array) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    doc.on("end", resolve);
    doc.on("error", reject);
  });
  doc.registerFont("regular", fonts.regular);
  doc.registerFont("bold", fonts.bold);

  doc.addPage({ size: "A4", margin: 0 });
  marks(doc, true);
  const { letterhead } = DIN_5008_B;
  let logoWidth = 0;
  try {
    logoWidth = drawLogo(doc, letter);
  } catch {
    logoWidth = 0;
  }
  const headWidth = pt(letterhead.width - (logoWidth > 0 ? logoWidth + 5 : 0));
  for (const placed of letterheadLines(doc, letter, headWidth))
    draw(doc, placed, letterhead.x, letterhead.y + placed.top);
  drawReturnLine(doc, letter);
  drawRecipient(doc, letter);
  const infoFoot = drawInfo(doc, letter);

  drawBody(doc, letter, bodyBlocks(doc, letter), Math.max(DIN_5008_B.bodyTop, infoFoot + 4));

  const { start, count } = doc.bufferedPageRange();
  for (let i = start; i < start + count; i++) {
    doc.switchToPage(i);
    const text = line(letter.labels.page(i - start + 1, count));
    drawRight(
      doc,
      { text, font: "regular", size: SMALL_SIZE, color: GREY },
      DIN_5008_B.page.width - DIN_5008_B.margin.right,
      DIN_5008_B.pageNumber,
    );
  }
  doc.end();
  await ended;
  const total = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}
