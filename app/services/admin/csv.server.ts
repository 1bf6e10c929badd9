// CSV for spreadsheets (RFC 4180: comma, CRLF, quotes doubled), safe to open in Excel or LibreOffice: a text cell
// that a spreadsheet would read as a formula (starting with = + - @, or a tab or carriage return that hides
// one) is prefixed with an apostrophe, so a user's name like "=HYPERLINK(…)" stays text (OWASP "CSV injection").
// Numbers are written as numbers. A byte-order mark makes Excel read UTF-8 (umlauts in names).

export type CsvCell = string | number | boolean | null | undefined;

export function csvCell(value: CsvCell): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "";
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(rows: CsvCell[][]): string {
  return `\uFEFF${rows.map((row) => row.map(csvCell).join(",")).join("\r\n")}\r\n`;
}
