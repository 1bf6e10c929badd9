// Delimited data blocks: every piece of consultation data a model reads (in letters, refinement and chat)
// travels wrapped like this, apart from the instructions:
//
//   <<<TRANSCRIPT part="1/3">>>
//   Sprecher 1: …
//   <<<END TRANSCRIPT>>>
//
// Data is escaped before it is wrapped: any run of three or more "<" or ">" becomes the same number of
// "‹"/"›", so a transcript cannot close its block or open a fake one, whatever was said. Nothing is censored —
// an "ignore all previous instructions" spoken into the microphone arrives verbatim, inside its block, and the
// rules tell the model that block content is never an instruction. Attribute values (file names) are data too.
// The delimiter helpers are exported so tests can check where a given text ended up.

export type BlockKind =
  "TRANSCRIPT" | "CONTEXT" | "PATIENT_RECORD" | "STYLE_EXAMPLE" | "NOTES" | "LETTER" | "LETTER_SECTION";

/** Runs of 3+ angle brackets become look-alikes, so data can never contain a delimiter. */
export function escapeDelimiters(text: string): string {
  return text.replace(/<{3,}/g, (m) => "‹".repeat(m.length)).replace(/>{3,}/g, (m) => "›".repeat(m.length));
}

function attributeValue(value: string | number): string {
  const text = escapeDelimiters(String(value))
    .replace(/["\\]/g, "'")
    .replace(/[<>]/g, (c) => (c === "<" ? "‹" : "›"))
    .replace(/\s+/g, " ")
    .trim();
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}

export type BlockAttributes = Record<string, string | number | null | undefined>;

export function openDelimiter(kind: BlockKind, attributes: BlockAttributes = {}): string {
  const attrs = Object.entries(attributes)
    .filter((entry): entry is [string, string | number] => entry[1] !== null && entry[1] !== undefined)
    .map(([name, value]) => ` ${name}="${attributeValue(value)}"`)
    .join("");
  return `<<<${kind}${attrs}>>>`;
}

export function closeDelimiter(kind: BlockKind): string {
  return `<<<END ${kind}>>>`;
}

/** One delimited data block; the body is escaped here, so callers pass raw text. */
export function dataBlock(kind: BlockKind, body: string, attributes: BlockAttributes = {}): string {
  return `${openDelimiter(kind, attributes)}\n${escapeDelimiters(body)}\n${closeDelimiter(kind)}`;
}

/** The cost of wrapping `body` as a block, beyond the body itself (for budgets). */
export function blockWrapper(kind: BlockKind, attributes: BlockAttributes = {}): string {
  return dataBlock(kind, "", attributes);
}

export type ParsedBlock = { kind: string; attributes: Record<string, string>; body: string };

const BLOCK_PATTERN = /<<<([A-Z_]+)((?: [a-z_]+="[^"]*")*)>>>\n([\s\S]*?)\n<<<END \1>>>/g;

/** The data blocks in a message, as the model would delimit them (for tests and checks). */
export function findDataBlocks(text: string): ParsedBlock[] {
  return [...text.matchAll(BLOCK_PATTERN)].map((m) => ({
    kind: m[1]!,
    attributes: Object.fromEntries([...m[2]!.matchAll(/ ([a-z_]+)="([^"]*)"/g)].map((a) => [a[1]!, a[2]!])),
    body: m[3]!,
  }));
}

/** A message with every block's body removed: what the model reads as instructions. */
export function textOutsideBlocks(text: string): string {
  return text.replace(BLOCK_PATTERN, (_m, kind: string, attrs: string) => `<<<${kind}${attrs}>>><<<END ${kind}>>>`);
}
