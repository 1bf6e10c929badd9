import sax from "sax";
import type { LetterheadLogoType } from "~/models/schema";
import { LETTERHEAD_LIMITS } from "~/components/letterhead/schema";
import { DomainError } from "../web/domain-error.server";

// A letterhead's logo (issue 25) is shown to the doctor as an <img>, and written into PDFs and DOCX files that leave
// the practice. It is told by its content, never by its name or the type the browser claims: a PNG by its signature,
// its IHDR (size within limits) and a chunk walk to IEND; anything else must be an SVG that is well-formed XML
// (sax, strict) with nothing active or external in it. A dubious SVG is refused, not cleaned: a cleaner that
// misses one trick serves that trick from our origin, while a refusal costs the doctor one re-export of the logo.
// Every refusal has its own message (account:letterhead.errors.logo.*).

const ERR = "account:letterhead.errors.logo";

export type LogoRefusal =
  | "empty"
  | "tooLarge"
  | "type"
  | "pngBroken"
  | "pngTooBig"
  | "svgNotXml"
  | "svgNotSvg"
  | "svgDoctype"
  | "svgScript"
  | "svgForeignObject"
  | "svgEventHandler"
  | "svgUnsafeUrl"
  | "svgExternal"
  | "svgStyle"
  | "svgTooComplex";

export type CheckedLogo = { mime: LetterheadLogoType; data: Uint8Array };

function refuse(reason: LogoRefusal): never {
  const values: Record<string, string> =
    reason === "tooLarge"
      ? { max: String(LETTERHEAD_LIMITS.logoBytes / 1024) }
      : reason === "pngTooBig"
        ? { max: String(LETTERHEAD_LIMITS.logoPixels) }
        : {};
  throw new DomainError("invalid", `${ERR}.${reason}`, [{ path: ["logo"], message: `${ERR}.${reason}` }], values);
}

/** The logo as it may be stored, or a DomainError naming why not. */
export function checkLogo(data: Uint8Array): CheckedLogo {
  if (data.byteLength === 0) refuse("empty");
  if (data.byteLength > LETTERHEAD_LIMITS.logoBytes) refuse("tooLarge");
  if (startsWith(data, PNG_SIGNATURE)) {
    checkPng(data);
    return { mime: "image/png", data };
  }
  if (looksLikeXml(data)) {
    checkSvg(data);
    return { mime: "image/svg+xml", data };
  }
  refuse("type");
}

// --- PNG -------------------------------------------------------------------------------------------------------

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** Bit depths allowed per colour type (PNG specification, IHDR). */
const BIT_DEPTHS: Record<number, number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};

function startsWith(data: Uint8Array, prefix: number[]) {
  return data.byteLength >= prefix.length && prefix.every((byte, i) => data[i] === byte);
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(data: Uint8Array) {
  let crc = 0xffffffff;
  for (const byte of data) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** Signature, IHDR first and plausible, every chunk inside the file with its CRC, image data, IEND last. */
function checkPng(data: Uint8Array) {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let offset = PNG_SIGNATURE.length;
  let first = true;
  let sawData = false;
  for (;;) {
    if (offset + 12 > data.byteLength) refuse("pngBroken");
    const length = view.getUint32(offset);
    const type = String.fromCharCode(...data.subarray(offset + 4, offset + 8));
    const end = offset + 12 + length;
    if (!/^[A-Za-z]{4}$/.test(type) || end > data.byteLength) refuse("pngBroken");
    const stored = view.getUint32(offset + 8 + length);
    if (crc32(data.subarray(offset + 4, offset + 8 + length)) !== stored) refuse("pngBroken");
    if (first) {
      if (type !== "IHDR" || length !== 13) refuse("pngBroken");
      checkIhdr(view, offset + 8);
      first = false;
    } else if (type === "IHDR") refuse("pngBroken");
    if (type === "IDAT") sawData = true;
    offset = end;
    if (type === "IEND") break;
  }
  if (!sawData) refuse("pngBroken");
}

function checkIhdr(view: DataView, at: number) {
  const width = view.getUint32(at);
  const height = view.getUint32(at + 4);
  const [depth, colour, compression, filter, interlace] = [8, 9, 10, 11, 12].map((i) => view.getUint8(at + i));
  const depthOk = BIT_DEPTHS[colour]?.includes(depth) ?? false;
  if (width === 0 || height === 0 || !depthOk || compression !== 0 || filter !== 0 || interlace > 1)
    refuse("pngBroken");
  if (width > LETTERHEAD_LIMITS.logoPixels || height > LETTERHEAD_LIMITS.logoPixels) refuse("pngTooBig");
}

// --- SVG -------------------------------------------------------------------------------------------------------

const SVG_NS = "http://www.w3.org/2000/svg";
/** Elements that run, embed or fetch something, by local name (any prefix, any case). */
const ACTIVE_ELEMENTS = new Set(["script", "handler", "listener", "iframe", "embed", "object", "applet", "frame"]);
const MAX_ELEMENTS = 10_000;
const MAX_DEPTH = 64;

/** After an optional BOM and whitespace, "<": an XML document (or nothing we take). */
function looksLikeXml(data: Uint8Array) {
  let i = data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf ? 3 : 0;
  while (i < data.byteLength && [0x20, 0x09, 0x0a, 0x0d].includes(data[i])) i++;
  return data[i] === 0x3c;
}

/** An attribute value as a browser resolves a URL in it: entities decoded already, whitespace and controls gone. */
function compact(value: string) {
  // eslint-disable-next-line no-control-regex -- the point is to drop control characters
  return value.replace(/[\s\u0000-\u001f\u007f]+/g, "").toLowerCase();
}

/** javascript:, vbscript: and data: anywhere in a value, also inside url(…). */
function unsafeUrl(value: string) {
  const flat = compact(value);
  return /(^|[^a-z])(javascript|vbscript|data):/.test(flat);
}

/** A url(…) in a value that leaves the document (url(#id) stays in it). */
function externalCssUrl(value: string) {
  return [...compact(value).matchAll(/url\(['"]?([^'")]*)/g)].some(([, target]) => !target.startsWith("#"));
}

function checkSvg(data: Uint8Array) {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(data);
  } catch {
    refuse("svgNotXml");
  }
  // A document type is where entities live (billion laughs, external entities): none, in any case or spelling.
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) refuse("svgDoctype");
  let refusal: LogoRefusal | null = null;
  const stop = (reason: LogoRefusal) => {
    refusal ??= reason;
  };
  // strictEntities: only the five XML entities and character references; HTML names like &nbsp; are errors.
  const options = { xmlns: true, position: false, strictEntities: true } as sax.SAXOptions;
  const parser = sax.parser(true, options);
  let depth = 0;
  let elements = 0;
  let root = true;
  let inStyle = 0;
  let styleText = "";
  // After an error sax throws at the next write or close: caught below, the refusal already noted.
  parser.onerror = () => stop("svgNotXml");
  parser.ondoctype = () => stop("svgDoctype");
  parser.onprocessinginstruction = (pi) => {
    // The XML declaration is the one instruction an SVG needs; a style sheet instruction fetches one.
    if (pi.name.toLowerCase() !== "xml") stop("svgExternal");
  };
  parser.onopentag = (tag) => {
    const node = tag as sax.QualifiedTag;
    const local = node.local.toLowerCase();
    elements++;
    depth++;
    if (elements > MAX_ELEMENTS || depth > MAX_DEPTH) stop("svgTooComplex");
    if (root) {
      root = false;
      if (node.local !== "svg" || node.uri !== SVG_NS) stop("svgNotSvg");
    }
    if (local === "script") stop("svgScript");
    else if (local === "foreignobject") stop("svgForeignObject");
    else if (ACTIVE_ELEMENTS.has(local)) stop("svgScript");
    if (local === "style") inStyle++;
    for (const attribute of Object.values(node.attributes)) checkAttribute(attribute, stop);
  };
  parser.onclosetag = (name) => {
    depth--;
    if (name.split(":").pop()!.toLowerCase() === "style" && inStyle > 0) {
      inStyle--;
      if (/@import|url\s*\(/i.test(styleText)) stop("svgStyle");
      styleText = "";
    }
  };
  const collect = (chunk: string) => {
    if (inStyle > 0) styleText += chunk;
  };
  parser.ontext = collect;
  parser.oncdata = collect;
  try {
    parser.write(text.replace(/^\uFEFF/, "")).close();
  } catch {
    stop("svgNotXml");
  }
  if (root) stop("svgNotXml");
  if (refusal) refuse(refusal);
}

function checkAttribute(attribute: sax.QualifiedAttribute, stop: (reason: LogoRefusal) => void) {
  const local = attribute.local.toLowerCase();
  const value = attribute.value;
  if (local.startsWith("on")) return stop("svgEventHandler");
  if (unsafeUrl(value)) return stop("svgUnsafeUrl");
  // href and xlink:href (and src, which an SVG does not have but a browser may still read) point inside only.
  if ((local === "href" || local === "src") && !compact(value).startsWith("#")) return stop("svgExternal");
  // An animation that sets an href or a handler makes one at run time.
  if (local === "attributename" && (/href$/i.test(value.trim()) || /^on/i.test(value.trim())))
    return stop("svgEventHandler");
  if (local === "style" && /@import/i.test(value)) return stop("svgStyle");
  if (externalCssUrl(value)) return stop("svgExternal");
}
