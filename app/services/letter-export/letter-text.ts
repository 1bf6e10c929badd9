// The letter as text for the practice software (PVS, issue 25): pasted into a patient's file or imported as a .txt,
// it must arrive as the doctor reads it here. Plain text only: a section's title on its own line, its text below,
// one blank line between sections; nothing is added that a PVS would show as markup (no Markdown bullets, no
// underlines, no HTML). What the doctor wrote stays as written.
//
// Line endings are LF here (ADR 0034): the copy button hands text to the browser's clipboard, which gives each
// platform its own line endings, and a PVS on Windows receives CRLF from there. Where text leaves as a file
// (a .txt download for a PVS import), the caller asks for `lineEnding: "crlf"`, the one place that converts.

import { formatLetterDate, type ExportLetter } from "./export-letter";

export type LetterTextOptions = {
  /** Patient line, date and subject above the sections; off by default, since the text is usually pasted into the
   * patient's own file, where the PVS already says whose it is. */
  header?: boolean;
  /** "lf" (default) for the clipboard, "crlf" for a file a Windows PVS imports. */
  lineEnding?: "lf" | "crlf";
};

// Characters no one sees and XML 1.0 forbids or a PVS shows as boxes: C0/C1 controls (except tab and line feed),
// the soft hyphen, zero-width spaces and joiners, word joiner, byte-order mark, non-characters.
const INVISIBLE =
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u180E\u200B-\u200F\u2060-\u2064\uFEFF\uFFFE\uFFFF]/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const LINE_BREAK = /\r\n|[\r\u0085\u2028\u2029]/g;
// Non-breaking and typographic spaces: kept in DOCX and FHIR, where they mean something, but a single plain space in
// text for a PVS, whose code page or search may not know them.
const SPACES = /[\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000]/g;

/** The text every writer starts from: composed umlauts (NFC, so "ü" is one character as legacy code pages need),
 * LF line breaks, no invisible characters and no unpaired surrogates. Non-breaking spaces stay. */
export function cleanExportText(text: string): string {
  return text.normalize("NFC").replace(LINE_BREAK, "\n").replace(LONE_SURROGATE, "\uFFFD").replace(INVISIBLE, "");
}

/** One line or block of plain text: plain spaces, no tabs, no trailing whitespace, at most one blank line in a row,
 * no blank lines at either end. */
function plain(text: string): string {
  return cleanExportText(text)
    .replace(SPACES, " ")
    .replace(/\t/g, " ")
    .split("\n")
    .map((line) => line.replace(/ +$/, ""))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .replace(/^\n+|\n+$/g, "");
}

/** A single line: line breaks inside it become spaces. */
function plainLine(text: string): string {
  return plain(text).replace(/\n+/g, " ").trim();
}

function headerLines(letter: ExportLetter): string[] {
  const { labels, patient, language } = letter;
  const lines: string[] = [];
  const name = plainLine(patient.name);
  if (name) {
    const born = patient.birthDate
      ? `, ${plainLine(labels.born)} ${formatLetterDate(patient.birthDate, language)}`
      : "";
    lines.push(`${plainLine(labels.patient)}: ${name}${born}`);
  }
  if (letter.date) lines.push(`${plainLine(labels.date)}: ${formatLetterDate(letter.date, language)}`);
  const subject = plainLine(letter.subject);
  if (subject) lines.push(subject);
  return lines;
}

/** The letter as plain text for the practice software. A section without text is left out: a title alone tells the
 * recipient nothing. */
export function writeLetterText(letter: ExportLetter, options: LetterTextOptions = {}): string {
  const blocks: string[] = [];
  if (options.header) {
    const header = headerLines(letter);
    if (header.length > 0) blocks.push(header.join("\n"));
  }
  for (const section of letter.sections) {
    const text = plain(section.text);
    if (!text) continue;
    const title = plainLine(section.title);
    blocks.push(title ? `${title}\n${text}` : text);
  }
  const out = blocks.length > 0 ? `${blocks.join("\n\n")}\n` : "";
  return options.lineEnding === "crlf" ? out.replace(/\n/g, "\r\n") : out;
}
