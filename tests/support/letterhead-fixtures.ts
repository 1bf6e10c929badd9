import { deflateSync } from "node:zlib";

// Logos for the letterhead tests (issue 25): a real PNG built here (signature, IHDR, one IDAT of deflated rows, IEND,
// each chunk with its CRC), a harmless SVG, and SVGs that each carry one of the things an SVG logo must not have.

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer) {
  let crc = 0xffffffff;
  for (const byte of data) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** An RGB PNG of the given size, a teal square; `declared` overrides the size written into IHDR. */
export function pngLogo(width: number, height: number, declared?: { width: number; height: number }) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(declared?.width ?? width, 0);
  ihdr.writeUInt32BE(declared?.height ?? height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.alloc(1 + width * 3);
  for (let x = 0; x < width; x++) row.set([0x0f, 0x6e, 0x6b], 1 + x * 3);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return new Uint8Array(
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk("IHDR", ihdr),
      chunk("IDAT", deflateSync(raw)),
      chunk("IEND", Buffer.alloc(0)),
    ]),
  );
}

/** A PNG whose bytes are as large as asked: a valid image followed by a text chunk of padding. */
export function pngOfSize(bytes: number) {
  const image = Buffer.from(pngLogo(4, 4));
  const end = image.length - 12;
  const padding = Buffer.alloc(Math.max(0, bytes - image.length - 12), 0x61);
  return new Uint8Array(Buffer.concat([image.subarray(0, end), chunk("tEXt", padding), image.subarray(end)]));
}

export const SAFE_SVG = `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="120" height="40" viewBox="0 0 120 40">
  <defs><linearGradient id="g"><stop offset="0" stop-color="#0f6e6b"/><stop offset="1" stop-color="#073634"/></linearGradient></defs>
  <style>.t { font: bold 14px sans-serif; fill: #fff; }</style>
  <rect id="r" width="120" height="40" rx="6" fill="url(#g)"/>
  <use xlink:href="#r" opacity="0.1"/>
  <text x="10" y="26" class="t">Praxis Grün</text>
</svg>`;

const svg = (body: string, attributes = "") =>
  `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10"${attributes}>${body}</svg>`;

/** Hostile SVGs and the refusal each must get (account:letterhead.errors.logo.<reason>). */
export const HOSTILE_SVGS: Array<{ name: string; svg: string; reason: string }> = [
  { name: "a script element", svg: svg('<script>alert("x")</script>'), reason: "svgScript" },
  {
    name: "a script in another prefix",
    svg: svg('<s:script xmlns:s="http://www.w3.org/2000/svg">alert(1)</s:script>'),
    reason: "svgScript",
  },
  {
    name: "a foreignObject with HTML",
    svg: svg('<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>'),
    reason: "svgForeignObject",
  },
  { name: "an onload handler", svg: svg("", ' onload="alert(1)"'), reason: "svgEventHandler" },
  {
    name: "an onclick on a shape",
    svg: svg('<rect width="1" height="1" onClick="alert(1)"/>'),
    reason: "svgEventHandler",
  },
  {
    name: "an animation that sets an href",
    svg: svg('<a><set attributeName="href" to="#x"/><text>x</text></a>'),
    reason: "svgEventHandler",
  },
  { name: "a javascript: link", svg: svg('<a href="javascript:alert(1)"><text>x</text></a>'), reason: "svgUnsafeUrl" },
  {
    name: "a javascript: link hidden by entities and whitespace",
    svg: svg('<a xlink:href="jav&#x09;ascript&#58;alert(1)"><text>x</text></a>'),
    reason: "svgUnsafeUrl",
  },
  {
    name: "a data: image",
    svg: svg('<image href="data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=" width="1" height="1"/>'),
    reason: "svgUnsafeUrl",
  },
  {
    name: "an external image",
    svg: svg('<image xlink:href="https://tracker.example/pixel.png" width="1" height="1"/>'),
    reason: "svgExternal",
  },
  { name: "a use of another file", svg: svg('<use href="other.svg#logo"/>'), reason: "svgExternal" },
  {
    name: "an external url() in a fill",
    svg: svg('<rect width="1" height="1" fill="url(https://x.example/f.svg#p)"/>'),
    reason: "svgExternal",
  },
  {
    name: "a style sheet instruction",
    svg: `<?xml version="1.0"?><?xml-stylesheet href="https://x.example/a.css"?>${svg("")}`,
    reason: "svgExternal",
  },
  {
    name: "a DOCTYPE with entities",
    svg: `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>${svg("<text>&b;</text>")}`,
    reason: "svgDoctype",
  },
  {
    name: "an external entity",
    svg: `<!DOCTYPE svg [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${svg("<text>&xxe;</text>")}`,
    reason: "svgDoctype",
  },
  { name: "a style with @import", svg: svg('<style>@import "https://x.example/a.css";</style>'), reason: "svgStyle" },
  {
    name: "a style with url()",
    svg: svg("<style><![CDATA[rect { fill: url(https://x.example/p.svg#p) }]]></style>"),
    reason: "svgStyle",
  },
  { name: "broken XML", svg: '<svg xmlns="http://www.w3.org/2000/svg"><rect></svg>', reason: "svgNotXml" },
  { name: "an undeclared entity", svg: svg("<text>&nbsp;</text>"), reason: "svgNotXml" },
  { name: "an HTML page", svg: "<html><body><script>alert(1)</script></body></html>", reason: "svgNotSvg" },
  { name: "an svg outside the SVG namespace", svg: "<svg><rect/></svg>", reason: "svgNotSvg" },
  { name: "an iframe", svg: svg('<iframe src="https://x.example"/>'), reason: "svgScript" },
];
