// Test PDFs made at test time, so no binary fixture has to be committed or trusted.
// pdf-lib writes the ordinary documents; the encrypted one is written by hand because pdf-lib
// cannot encrypt: it is a real PDF 1.4 document protected by the standard security handler
// (revision 2, 40-bit RC4, ISO 32000-1 §7.6.3), not just a trailer with a decorative /Encrypt entry.
import { createHash } from "node:crypto";

import { PDFDocument, StandardFonts } from "pdf-lib";

/** One page of a German clinical finding: umlauts, ß and capital umlauts on separate lines. */
export const GERMAN_LINES = [
  "Befund vom 12.03.2024 – Patientin Jürgens-Müller",
  "Größe 1,68 m, Gewicht unauffällig, Blutdruck 130/85.",
  "Äußerlich keine Schwellung; Übelkeit und Schwäche im Fuß.",
  "Weiße Blutkörperchen leicht erhöht, Straße gesperrt: süß!",
] as const;

/** A PDF whose pages hold the given lines (Helvetica, WinAnsi: covers German letters). */
export async function makeTextPdf(pages: ReadonlyArray<ReadonlyArray<string>>): Promise<Uint8Array> {
  // updateMetadata: false keeps the bytes free of the current date.
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = doc.addPage([595.28, 841.89]);
    let y = 780;
    for (const line of lines) {
      page.drawText(line, { x: 56, y, size: 12, font });
      y -= 18;
    }
  }
  return doc.save();
}

/** One page with {@link GERMAN_LINES}. */
export function germanTextPdf(): Promise<Uint8Array> {
  return makeTextPdf([GERMAN_LINES]);
}

/** `Seite n von N` on page n, plus a line of its own so the order can be checked. */
export function multiPageText(pageCount: number): string[][] {
  return Array.from({ length: pageCount }, (_, i) => [`Seite ${i + 1} von ${pageCount}`, `Inhalt der Seite ${i + 1}`]);
}

export function multiPagePdf(pageCount = 3): Promise<Uint8Array> {
  return makeTextPdf(multiPageText(pageCount));
}

/**
 * A valid PDF cut off in the middle: no cross-reference table, no trailer, the content stream
 * incomplete. pdf.js cannot recover it (it tries by indexing all objects, and fails).
 */
export async function truncatedPdf(): Promise<Uint8Array> {
  const whole = await germanTextPdf();
  return whole.slice(0, Math.floor(whole.length / 2));
}

/** An HTML page saved under a .pdf name, as a browser "Save page as…" or a wrong download gives. */
export function htmlNamedPdf(): { name: string; data: Uint8Array } {
  const html =
    '<!DOCTYPE html>\n<html lang="de"><head><title>Befund</title></head>\n' +
    "<body><p>Dies ist kein PDF, sondern eine Webseite mit Umlauten: Größe, Übelkeit.</p></body></html>\n";
  return { name: "befund.pdf", data: new TextEncoder().encode(html) };
}

/** A zero-byte upload. */
export function emptyFile(): Uint8Array {
  return new Uint8Array(0);
}

export const ENCRYPTED_TEXT = "Vertraulicher Befund: Patientin Müller";

/**
 * A one-page PDF encrypted with the standard security handler (V 1, R 2, 40-bit RC4).
 * With a non-empty `userPassword` a reader needs that password to open it. With the empty user
 * password the document opens without one (only the owner password, i.e. the permissions, is
 * protected) — the form many lab systems produce.
 */
export function encryptedPdf(
  options: { userPassword?: string; ownerPassword?: string; text?: string } = {},
): Uint8Array {
  const { userPassword = "geheim", ownerPassword = "besitzer", text = ENCRYPTED_TEXT } = options;
  const fileId = md5(latin1("skribent-encrypted-fixture"));
  const permissions = -44; // print and copy allowed, modify and annotate not (bits 3 and 5 set)

  // Algorithm 3: the /O entry.
  const ownerKey = md5(pad(ownerPassword || userPassword)).subarray(0, 5);
  const oEntry = rc4(ownerKey, pad(userPassword));
  // Algorithm 2: the file key (40 bits for revision 2).
  const p = new Uint8Array(4);
  new DataView(p.buffer).setInt32(0, permissions, true);
  const fileKey = md5(concat(pad(userPassword), oEntry, p, fileId)).subarray(0, 5);
  // Algorithm 4: the /U entry.
  const uEntry = rc4(fileKey, PASSWORD_PADDING);

  // Algorithm 1: each object's strings and streams are encrypted with a key derived from its number.
  const objectKey = (num: number, gen: number) =>
    md5(
      concat(fileKey, new Uint8Array([num & 0xff, (num >> 8) & 0xff, (num >> 16) & 0xff, gen & 0xff, gen >> 8])),
    ).subarray(0, Math.min(fileKey.length + 5, 16));
  const content = latin1(`BT /F1 14 Tf 56 780 Td (${escapePdfString(text)}) Tj ET\n`);
  const encryptedContent = rc4(objectKey(4, 0), content);

  const objects: Uint8Array[] = [
    latin1("1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"),
    latin1("2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n"),
    latin1(
      "3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] " +
        "/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>\nendobj\n",
    ),
    concat(
      latin1(`4 0 obj\n<< /Length ${encryptedContent.length} >>\nstream\n`),
      encryptedContent,
      latin1("\nendstream\nendobj\n"),
    ),
    latin1("5 0 obj\n<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>\nendobj\n"),
    latin1(
      `6 0 obj\n<< /Filter /Standard /V 1 /R 2 /Length 40 /P ${permissions} ` +
        `/O <${hex(oEntry)}> /U <${hex(uEntry)}> >>\nendobj\n`,
    ),
  ];
  // The binary comment line marks the file as binary for transfer tools, as the spec recommends.
  const header = concat(latin1("%PDF-1.4\n%"), new Uint8Array([0xe2, 0xe3, 0xcf, 0xd3]), latin1("\n"));
  const offsets: number[] = [];
  let offset = header.length;
  for (const object of objects) {
    offsets.push(offset);
    offset += object.length;
  }
  const xref =
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n` +
    offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("") +
    `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Encrypt 6 0 R ` +
    `/ID [<${hex(fileId)}> <${hex(fileId)}>] >>\nstartxref\n${offset}\n%%EOF\n`;
  return concat(header, ...objects, latin1(xref));
}

const PASSWORD_PADDING = new Uint8Array([
  0x28, 0xbf, 0x4e, 0x5e, 0x4e, 0x75, 0x8a, 0x41, 0x64, 0x00, 0x4e, 0x56, 0xff, 0xfa, 0x01, 0x08, 0x2e, 0x2e, 0x00,
  0xb6, 0xd0, 0x68, 0x3e, 0x80, 0x2f, 0x0c, 0xa9, 0xfe, 0x64, 0x53, 0x69, 0x7a,
]);

function pad(password: string): Uint8Array {
  const bytes = latin1(password).subarray(0, 32);
  return concat(bytes, PASSWORD_PADDING.subarray(0, 32 - bytes.length));
}

// RC4 is written out because OpenSSL 3 only offers it through the legacy provider.
function rc4(key: Uint8Array, data: Uint8Array): Uint8Array {
  const s = Uint8Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i] + key[i % key.length]) & 0xff;
    [s[i], s[j]] = [s[j], s[i]];
  }
  const out = new Uint8Array(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 0xff;
    j = (j + s[i]) & 0xff;
    [s[i], s[j]] = [s[j], s[i]];
    out[n] = data[n] ^ s[(s[i] + s[j]) & 0xff];
  }
  return out;
}

function md5(data: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("md5").update(data).digest());
}

function latin1(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0) & 0xff);
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex").toUpperCase();
}

function escapePdfString(text: string): string {
  return text.replace(/[\\()]/g, (c) => `\\${c}`);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
