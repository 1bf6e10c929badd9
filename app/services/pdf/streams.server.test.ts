import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { unpackedSize } from "./streams.server";

// The budget check on a PDF's streams, on hand-written objects: what is measured, what is skipped, and that it
// stops at the budget instead of unpacking everything.

function obj(dictionary: string, data: Buffer) {
  return Buffer.concat([
    Buffer.from(`4 0 obj\n<< ${dictionary} >>\nstream\n`, "latin1"),
    data,
    Buffer.from("\nendstream\nendobj\n"),
  ]);
}
const pdf = (...objects: Buffer[]) => new Uint8Array(Buffer.concat([Buffer.from("%PDF-1.7\n"), ...objects]));
const MiB = 1024 * 1024;

describe("unpackedSize", () => {
  it("measures deflated streams, also chained, and runs of RunLengthDecode", () => {
    const once = zlib.deflateSync(Buffer.alloc(MiB, 0x20));
    const twice = zlib.deflateSync(once);
    const runs = Buffer.from([0x81, 0x41, 0x81, 0x42, 0x80]); // 128 × "A", 128 × "B", end of data
    const file = pdf(
      obj(`/Length ${once.length} /Filter /FlateDecode`, once),
      obj(`/Length ${twice.length} /Filter [/FlateDecode /FlateDecode]`, twice),
      obj(`/Length ${runs.length} /Filter /RunLengthDecode`, runs),
    );
    expect(unpackedSize(file, 64 * MiB)).toBe(2 * MiB + 256);
  });

  it("stops at the budget, with a direct or an indirect length", () => {
    const bomb = zlib.deflateSync(Buffer.alloc(32 * MiB));
    expect(unpackedSize(pdf(obj(`/Length ${bomb.length} /Filter /Fl`, bomb)), MiB)).toBe(MiB + 1);
    expect(unpackedSize(pdf(obj("/Length 12 0 R /Filter /Fl", bomb)), MiB)).toBe(MiB + 1);
  });

  it("skips images and counts what it cannot unpack at its stored size", () => {
    const image = zlib.deflateSync(Buffer.alloc(8 * MiB));
    const lzw = Buffer.alloc(100, 1);
    const file = pdf(
      obj(`/Type /XObject /Subtype /Image /Length ${image.length} /Filter /FlateDecode`, image),
      obj(`/Length ${lzw.length} /Filter /LZWDecode`, lzw),
      obj("/Length 5 0 R /Filter /FlateDecode", Buffer.from("not deflate data")),
    );
    expect(unpackedSize(file, MiB)).toBe(100 + "not deflate data".length);
  });
});
