import zlib from "node:zlib";

// How large a PDF's streams become once unpacked, measured before pdf.js sees the file (pdf/text.server.ts).
// pdf.js inflates every content stream, font and object stream it reads, whole, in memory, on the main thread:
// a 0.5 MB PDF whose one page is 512 MiB of deflated spaces took 13 s and 1.4 GB of memory to read, and the
// 20 MB size limit allows ~20 GB. zlib here stops at a budget instead of allocating the whole result.
//
// Measured: FlateDecode (also chained) and RunLengthDecode. Images are skipped — text extraction never decodes
// them. Not measured (counted at their stored size): LZW, ASCII-armoured and encrypted streams, and a filter
// given by reference; pdf.js's own time-out is what bounds those.

const STREAM_KEYWORD = />>\s*stream(?:\r\n|\n|\r)/g;
const IMAGE = /\/Subtype\s*\/Image\b/;
const FILTER = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/;
const DIRECT_LENGTH = /\/Length\s+(\d+)\b(?!\s+\d+\s+R)/;

class OverBudget extends Error {}

function inflate(data: Buffer, budget: number): Buffer {
  const options = { maxOutputLength: budget + 1, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  try {
    return zlib.inflateSync(data, options);
  } catch (error) {
    if (error instanceof RangeError) throw new OverBudget();
    // pdf.js also reads streams without the zlib header.
    try {
      return zlib.inflateRawSync(data, options);
    } catch (raw) {
      if (raw instanceof RangeError) throw new OverBudget();
      return data; // undecodable: pdf.js gets no more out of it than these bytes
    }
  }
}

/** RunLengthDecode (ISO 32000-1 §7.4.5), stopping past `budget`: up to 64 times its input. */
function runLength(data: Buffer, budget: number): Buffer {
  const out: Buffer[] = [];
  let size = 0;
  for (let i = 0; i < data.length && data[i] !== 128;) {
    const n = data[i]!;
    const piece = n < 128 ? data.subarray(i + 1, i + 2 + n) : Buffer.alloc(257 - n, data[i + 1] ?? 0);
    i += n < 128 ? n + 2 : 2;
    size += piece.length;
    if (size > budget) throw new OverBudget();
    out.push(piece);
  }
  return Buffer.concat(out);
}

function decoded(data: Buffer, filters: string[], budget: number): number {
  let bytes = data;
  for (const filter of filters) {
    if (filter === "FlateDecode" || filter === "Fl") bytes = inflate(bytes, budget);
    else if (filter === "RunLengthDecode" || filter === "RL") bytes = runLength(bytes, budget);
    else break;
  }
  return bytes.length;
}

/** Without a direct /Length: up to "endstream", less the end-of-line in front of it. */
function dataEnd(text: string, start: number) {
  const end = text.indexOf("endstream", start);
  if (end < 0) return end;
  return text.startsWith("\r\n", end - 2) ? end - 2 : /[\r\n]/.test(text[end - 1] ?? "") ? end - 1 : end;
}

/**
 * The bytes the document's non-image streams unpack to — or `budget + 1` as soon as they pass `budget`, without
 * unpacking further. Never throws: what it cannot read counts at its stored size.
 */
export function unpackedSize(pdf: Uint8Array, budget: number): number {
  const bytes = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  const text = bytes.toString("latin1");
  let total = 0;
  for (const match of text.matchAll(STREAM_KEYWORD)) {
    const start = match.index + match[0].length;
    const dictionary = text.slice(Math.max(text.lastIndexOf(" obj", match.index), 0), match.index);
    const length = Number(DIRECT_LENGTH.exec(dictionary)?.[1] ?? Number.NaN);
    const end = Number.isSafeInteger(length) && start + length <= text.length ? start + length : dataEnd(text, start);
    if (end < 0 || IMAGE.test(dictionary)) continue;
    const filters = Array.from((FILTER.exec(dictionary)?.[1] ?? "").matchAll(/\/([A-Za-z0-9]+)/g), (m) => m[1]!);
    try {
      total += decoded(bytes.subarray(start, end), filters, budget - total);
    } catch (error) {
      if (error instanceof OverBudget) return budget + 1;
      throw error;
    }
    if (total > budget) return budget + 1;
  }
  return total;
}
