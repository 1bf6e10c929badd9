// What the injection tests (tests/integration/injection-*.test.ts) put into the product and how they look for it
// coming back out. The payloads are short enough for every field's limit (a tag holds 50 characters) and each
// one is a different way out of a different context: element text, a quoted attribute, a <textarea>, a link
// target, a client-side template, and the inline <script> Remix writes the loader data into.

export const XSS = {
  script: "<script>alert(1)</script>",
  img: '"><img src=x onerror=alert(1)>',
  svg: "</textarea><svg onload=alert(1)>",
  link: "javascript:alert(1)",
  template: "{{constructor.constructor('alert(1)')()}}",
  breakout: "</script><script>alert(1)</script>",
} as const;

/** Everything at once, for the long fields (letter text, transcript, chat, template prompt). */
export const ALL_XSS = Object.values(XSS).join(" ");

export const SQL = {
  drop: "'; DROP TABLE recordings; --",
  tautology: "1' OR '1'='1",
  // No bidi controls: names drop them on purpose (SPEC §5 names, bad-files-names.test.ts).
  comment: 'Müller"); -- 😷 ß',
  like: "%_\\%",
} as const;

/** How React writes a string as element text or a double-quoted attribute value. */
export function escapeHtml(text: string) {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#x27;");
}

// The forms a payload takes once it is live markup. Escaped text (&lt;img …) never matches: each starts with "<".
const ACTIVE = [/<script\b[^>]*>\s*alert/i, /<img\b[^>]*\bonerror\s*=/i, /<svg\b[^>]*\bonload\s*=/i];

const START_TAG = /<([a-zA-Z][^\s/>]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*\/?>/g;
const ATTRIBUTE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;

function decodeEntities(value: string) {
  return value
    .replace(/&#x([0-9a-f]+);?/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#(\d+);?/g, (_, dec: string) => String.fromCodePoint(Number(dec)))
    .replace(/&(quot|apos|lt|gt|colon|tab|newline|amp);/gi, (_, name: string) => ENTITIES[name.toLowerCase()]);
}
const ENTITIES: Record<string, string> = {
  quot: '"',
  apos: "'",
  lt: "<",
  gt: ">",
  colon: ":",
  tab: "\t",
  newline: "\n",
  amp: "&",
};

/** Attributes a browser follows or loads (a meta refresh's content included). */
const URL_ATTRIBUTES = new Set(["href", "src", "action", "formaction", "xlink:href", "data", "poster", "content"]);

/** Every start tag of a document with its attributes, values decoded as a browser decodes them. */
export function startTags(html: string) {
  return [...html.matchAll(START_TAG)].map(([whole, name, rest]) => ({
    whole,
    name: name.toLowerCase(),
    attributes: [...rest.matchAll(ATTRIBUTE)].map(([, key, dq, sq, bare]) => ({
      name: key.toLowerCase(),
      value: decodeEntities(dq ?? sq ?? bare ?? ""),
    })),
  }));
}

/**
 * What is wrong with a server-rendered document, as a list a failing test prints: a payload as live markup, a
 * <script> without the response's nonce (also one that broke out of an inline script), an event-handler
 * attribute, or a link, form or refresh whose target is a javascript: URL.
 */
export function injectionProblems(html: string, nonce: string | null): string[] {
  const problems: string[] = [];
  for (const pattern of ACTIVE) {
    const found = pattern.exec(html);
    if (found) problems.push(`live markup: ${html.slice(Math.max(0, found.index - 40), found.index + 60)}`);
  }
  // Counted on the raw text, so a <script> inside another script's text (a break-out) is seen too.
  const scriptOpenings = html.match(/<script\b/gi)?.length ?? 0;
  const tags = startTags(html);
  const scripts = tags.filter((tag) => tag.name === "script");
  if (scripts.length !== scriptOpenings) problems.push(`${scriptOpenings - scripts.length} malformed <script> tag(s)`);
  for (const script of scripts) {
    const carried = script.attributes.find((a) => a.name === "nonce")?.value;
    if (!nonce || carried !== nonce) problems.push(`script without the response's nonce: ${script.whole}`);
  }
  for (const tag of tags)
    for (const { name, value } of tag.attributes) {
      if (/^on/.test(name)) problems.push(`event handler attribute: ${tag.whole}`);
      if (!URL_ATTRIBUTES.has(name)) continue;
      // Browsers drop tabs, newlines and leading blanks before the scheme.
      // eslint-disable-next-line no-control-regex
      const target = value.replace(/[\u0000-\u0020]/g, "").toLowerCase();
      const refresh = name === "content" && /url=/.test(target) ? target.slice(target.indexOf("url=") + 4) : target;
      if (/^(javascript|vbscript|data:text\/html)/.test(refresh)) problems.push(`script URL in ${name}: ${tag.whole}`);
    }
  return problems;
}

/** The script-src nonce of a Content-Security-Policy header, or null. */
export function nonceOf(csp: string | null) {
  return /script-src[^;]*'nonce-([^']+)'/.exec(csp ?? "")?.[1] ?? null;
}
