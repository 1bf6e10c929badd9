// The letter as DOCX (issue 25): the same content and layout as the DIN 5008 PDF (form B), editable in Word and
// LibreOffice. Written with the `docx` package (ADR 0034).
//
// Page 1 is laid out with frames (w:framePr) anchored to the page, so the letterhead, the address field and the
// information block sit where DIN 5008 form B puts them whatever the letterhead holds; the letter's body flows below
// from a spacer of fixed height and continues on the following pages, which carry a short header (patient, date)
// and, like page 1, "Seite X von Y" from the PAGE and NUMPAGES fields.

import {
  AlignmentType,
  BorderStyle,
  Document,
  Footer,
  FrameAnchorType,
  FrameWrap,
  Header,
  HeadingLevel,
  HeightRule,
  ImageRun,
  LineRuleType,
  Packer,
  PageNumber,
  Paragraph,
  TextRun,
  type IFrameOptions,
} from "docx";
import { formatLetterDate, type ExportLetter, type LetterheadLogo } from "./export-letter";
import { cleanExportText } from "./letter-text";

/** Millimetres in twentieths of a point (twips), the unit of page geometry in WordprocessingML. */
export function mm(value: number): number {
  return Math.round((value * 1440) / 25.4);
}

/** DIN 5008 form B on A4, in millimetres from the page's top-left corner. */
export const DIN_5008_B = {
  page: { width: 210, height: 297 },
  margin: { top: 20, right: 20, bottom: 25, left: 25 },
  letterhead: { x: 25, y: 10, width: 165, height: 33 },
  /** The address field: 5 lines for the return address (17.7 mm), then 9 for the recipient (27.3 mm). */
  address: { x: 20, y: 45, width: 85, height: 45, returnZone: 17.7 },
  info: { x: 125, y: 50, width: 75, height: 40 },
  /** Where the body (subject first) begins on page 1: two lines below the address field. */
  bodyTop: 98.5,
  /** Fold marks at 105 and 210 mm, the punch mark at 148.5 mm, from the left edge. */
  marks: [105, 148.5, 210],
  logo: { maxWidth: 50, maxHeight: 20 },
} as const;

const FONT = "Arial"; // LibreOffice shows its metric twin Liberation Sans where Arial is not installed.
const SIZE = 22; // 11 pt, in half points
const SMALL = 16; // 8 pt
const INFO = 18; // 9 pt

function frame(x: number, y: number, width: number, height: number, rule: "exact" | "atLeast"): IFrameOptions {
  return {
    type: "absolute",
    position: { x: mm(x), y: mm(y) },
    width: mm(width),
    height: mm(height),
    rule: rule === "exact" ? HeightRule.EXACT : HeightRule.ATLEAST,
    anchor: { horizontal: FrameAnchorType.PAGE, vertical: FrameAnchorType.PAGE },
    wrap: FrameWrap.AROUND,
    space: { horizontal: 0, vertical: 0 },
  };
}

/** One line for a frame or a field: line breaks inside it become spaces. */
function line(text: string): string {
  return cleanExportText(text)
    .replace(/\s*\n\s*/g, " ")
    .trim();
}

/** Paragraphs split at blank lines; the line breaks inside a paragraph stay as line breaks. */
function textParagraphs(text: string): Paragraph[] {
  const blocks = cleanExportText(text)
    .split(/\n[ \t]*\n+/)
    .map((block) => block.replace(/^\n+|\s+$/g, ""))
    .filter((block) => block.trim() !== "");
  return blocks.map(
    (block) =>
      new Paragraph({
        spacing: { after: 120 },
        children: block.split("\n").map((text, i) => new TextRun({ text, break: i > 0 ? 1 : undefined })),
      }),
  );
}

/** Width and height of a PNG from its IHDR chunk, or null when the bytes are not a PNG. */
export function pngSize(data: Uint8Array): { width: number; height: number } | null {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (data.length < 24 || signature.some((byte, i) => data[i] !== byte)) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  return width > 0 && height > 0 ? { width, height } : null;
}

/** The logo in its own frame at the letterhead's right edge, at most 50 × 20 mm. Only PNG: an SVG in DOCX needs a
 * raster fallback for LibreOffice and Word before 2016, and Skribent has no rasteriser, so an SVG logo is left out
 * here (the PDF carries it). */
function logoParagraph(
  logo: LetterheadLogo | null,
  practiceName: string,
): { paragraph: Paragraph; width: number } | null {
  if (!logo || logo.mime !== "image/png") return null;
  const size = pngSize(logo.data);
  if (!size) return null;
  const { maxWidth, maxHeight } = DIN_5008_B.logo;
  const scale = Math.min(maxWidth / size.width, maxHeight / size.height);
  const widthMm = size.width * scale;
  const heightMm = size.height * scale;
  const px = (value: number) => Math.max(1, Math.round((value / 25.4) * 96)); // docx sizes images in 96-dpi pixels
  const { letterhead } = DIN_5008_B;
  return {
    width: widthMm,
    paragraph: new Paragraph({
      frame: frame(letterhead.x + letterhead.width - widthMm, letterhead.y, widthMm, heightMm, "atLeast"),
      alignment: AlignmentType.RIGHT,
      children: [
        new ImageRun({
          type: "png",
          data: logo.data,
          transformation: { width: px(widthMm), height: px(heightMm) },
          altText: { name: "Logo", title: practiceName, description: practiceName },
        }),
      ],
    }),
  };
}

function letterheadParagraphs(letter: ExportLetter, logoWidth: number): Paragraph[] {
  const { letterhead: head, labels } = letter;
  const box = DIN_5008_B.letterhead;
  const at = frame(box.x, box.y, box.width - (logoWidth > 0 ? logoWidth + 5 : 0), box.height, "atLeast");
  const contact = [
    [line(head.street), line(`${head.postalCode} ${head.city}`)],
    [
      head.phone && `${line(labels.phone)} ${line(head.phone)}`,
      head.email && `${line(labels.email)} ${line(head.email)}`,
    ],
    [head.bsnr && `${line(labels.bsnr)} ${line(head.bsnr)}`, head.lanr && `${line(labels.lanr)} ${line(head.lanr)}`],
  ]
    .map((parts) => parts.filter(Boolean).join(" · "))
    .filter(Boolean);
  return [
    new Paragraph({ frame: at, children: [new TextRun({ text: line(head.practiceName), bold: true, size: 28 })] }),
    ...head.doctors.map(
      (doctor) => new Paragraph({ frame: at, children: [new TextRun({ text: line(doctor), size: INFO })] }),
    ),
    ...contact.map(
      (text, i) =>
        new Paragraph({
          frame: at,
          spacing: { before: i === 0 ? 80 : 0 },
          children: [new TextRun({ text, size: SMALL })],
        }),
    ),
  ];
}

/** The address field: the practice's return line at the foot of the 17.7 mm zone, then the recipient. */
function addressParagraphs(letter: ExportLetter): Paragraph[] {
  const { address } = DIN_5008_B;
  const at = frame(address.x, address.y, address.width, address.height, "exact");
  const head = letter.letterhead;
  const returnLine = [line(head.practiceName), line(head.street), line(`${head.postalCode} ${head.city}`)]
    .filter(Boolean)
    .join(" · ");
  const returnHeight = 160; // 8 pt
  const recipient = [letter.recipient.name, ...letter.recipient.addressLines].map(line).filter(Boolean);
  return [
    new Paragraph({
      frame: at,
      indent: { left: mm(5) },
      spacing: {
        before: mm(address.returnZone) - returnHeight - 60,
        after: 60,
        line: returnHeight,
        lineRule: LineRuleType.EXACT,
      },
      children: [new TextRun({ text: returnLine, size: 14, underline: {} })],
    }),
    ...recipient.map(
      (text) =>
        new Paragraph({
          frame: at,
          indent: { left: mm(5) },
          spacing: { line: 250, lineRule: LineRuleType.EXACT },
          children: [new TextRun({ text })],
        }),
    ),
  ];
}

function patientLine(letter: ExportLetter): string[] {
  const { patient, labels, language } = letter;
  const lines: string[] = [];
  if (line(patient.name)) lines.push(`${line(labels.patient)}: ${line(patient.name)}`);
  if (patient.birthDate) lines.push(`${line(labels.born)} ${formatLetterDate(patient.birthDate, language)}`);
  return lines;
}

function infoParagraphs(letter: ExportLetter): Paragraph[] {
  const { info } = DIN_5008_B;
  const at = frame(info.x, info.y, info.width, info.height, "atLeast");
  const lines = [
    ...patientLine(letter),
    `${line(letter.labels.date)}: ${formatLetterDate(letter.date, letter.language)}`,
  ];
  return lines.map(
    (text, i) =>
      new Paragraph({
        frame: at,
        spacing: { before: i === lines.length - 1 && i > 0 ? 120 : 0 },
        children: [new TextRun({ text, size: INFO })],
      }),
  );
}

/** Fold and punch marks: short rules in the left margin, each a tiny frame with a top border. */
function markParagraphs(): Paragraph[] {
  return DIN_5008_B.marks.map(
    (y) =>
      new Paragraph({
        frame: frame(5, y, y === 148.5 ? 7 : 5, 1, "exact"),
        border: { top: { style: BorderStyle.SINGLE, size: 4, color: "808080", space: 0 } },
        spacing: { line: mm(1), lineRule: LineRuleType.EXACT },
        children: [new TextRun({ text: "", size: 2 })],
      }),
  );
}

/** "Seite X von Y" in the labels' own wording: the label is asked for with two markers, which are then replaced by
 * the PAGE and NUMPAGES fields, so "Page X of Y" or "X / Y" work too. */
function pageNumberRun(letter: ExportLetter): TextRun {
  const PAGE = 1_000_001;
  const PAGES = 1_000_002;
  const wording = cleanExportText(letter.labels.page(PAGE, PAGES));
  const children: Array<string | (typeof PageNumber)[keyof typeof PageNumber]> = [];
  for (const part of wording.split(/(1000001|1000002)/)) {
    if (part === String(PAGE)) children.push(PageNumber.CURRENT);
    else if (part === String(PAGES)) children.push(PageNumber.TOTAL_PAGES);
    else if (part) children.push(part);
  }
  return new TextRun({ children, size: SMALL });
}

function footer(letter: ExportLetter): Footer {
  return new Footer({
    children: [new Paragraph({ alignment: AlignmentType.RIGHT, children: [pageNumberRun(letter)] })],
  });
}

function followingPagesHeader(letter: ExportLetter): Header {
  const text = [...patientLine(letter), formatLetterDate(letter.date, letter.language)].join(", ");
  return new Header({ children: [new Paragraph({ children: [new TextRun({ text, size: SMALL })] })] });
}

function bodyParagraphs(letter: ExportLetter): Paragraph[] {
  const { letterhead: head } = letter;
  const spacer = new Paragraph({
    spacing: {
      before: 0,
      after: 0,
      line: mm(DIN_5008_B.bodyTop - DIN_5008_B.margin.top),
      lineRule: LineRuleType.EXACT,
    },
    children: [],
  });
  const subject = new Paragraph({
    spacing: { after: 360 },
    children: [new TextRun({ text: line(letter.subject), bold: true })],
  });
  const sections = letter.sections.flatMap((section) => {
    const text = textParagraphs(section.text);
    if (text.length === 0) return [];
    const title = line(section.title);
    return title ? [new Paragraph({ heading: HeadingLevel.HEADING_2, text: title }), ...text] : text;
  });
  const closing = new Paragraph({ spacing: { before: 240, after: 720 }, keepNext: true, text: line(head.closing) });
  const signature = head.signature
    .map(line)
    .map((text, i, all) => new Paragraph({ keepNext: i < all.length - 1, text }));
  return [spacer, subject, ...sections, closing, ...signature];
}

/** The letter as a DOCX file. */
export async function writeLetterDocx(letter: ExportLetter): Promise<Uint8Array> {
  const logo = logoParagraph(letter.letterhead.logo, line(letter.letterhead.practiceName));
  const { page, margin } = DIN_5008_B;
  const doc = new Document({
    title: line(letter.subject),
    creator: line(letter.letterhead.practiceName),
    styles: {
      default: {
        document: {
          run: { font: FONT, size: SIZE, language: { value: letter.language } },
          paragraph: { spacing: { after: 0, line: 264, lineRule: LineRuleType.AUTO } },
        },
      },
      paragraphStyles: [
        {
          id: "Heading2",
          name: "Heading 2",
          basedOn: "Normal",
          next: "Normal",
          quickFormat: true,
          run: { font: FONT, size: SIZE, bold: true, color: "000000" },
          paragraph: { spacing: { before: 240, after: 60 }, keepNext: true, keepLines: true },
        },
      ],
    },
    sections: [
      {
        properties: {
          titlePage: true,
          page: {
            size: { width: mm(page.width), height: mm(page.height) },
            margin: {
              top: mm(margin.top),
              right: mm(margin.right),
              bottom: mm(margin.bottom),
              left: mm(margin.left),
              header: mm(10),
              footer: mm(10),
            },
          },
        },
        headers: {
          first: new Header({ children: [new Paragraph({ children: [] })] }),
          default: followingPagesHeader(letter),
        },
        footers: { first: footer(letter), default: footer(letter) },
        children: [
          ...letterheadParagraphs(letter, logo?.width ?? 0),
          ...(logo ? [logo.paragraph] : []),
          ...addressParagraphs(letter),
          ...infoParagraphs(letter),
          ...markParagraphs(),
          ...bodyParagraphs(letter),
        ],
      },
    ],
  });
  return new Uint8Array(await Packer.toBuffer(doc));
}
