// SPEC §5 "Names and tags" as the server enforces it (issue 4): Reading A's
// service rules together with Reading C's widget rules; Reading B's ASCII-only
// rule is not applied (ADR 0009). Messages are i18n keys in "recordings".

export const DISPLAY_NAME_MAX = 100;
export const TAG_MAX = 50;
export const MAX_TAGS = 5;
export const ADDITIONAL_CONTEXT_MAX = 10_000;
export const ADDITIONAL_CONTEXT_WARN_ABOVE = 9_000;

export type RuleResult<T> = { ok: true; value: T } | { ok: false; message: string };

// Bidi controls (embeddings, overrides, isolates, marks) turn "Befund\u202Efdp.exe" into "Befundexe.pdf" on
// screen; names and tags are shown as plain text, so they never need them.
// eslint-disable-next-line no-control-regex -- stripping control characters is the point
const CONTROLS = /[\u0000-\u001f\u007f]+/g;
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** One line of plain text: control characters become a space (the database cannot hold NUL), bidi controls go. */
function plainText(value: string) {
  return value.replace(CONTROLS, " ").replace(BIDI_CONTROLS, "");
}

/** Reading A: non-empty after trimming, at most 100 characters (control and bidi characters are not text). */
export function checkDisplayName(value: unknown): RuleResult<string> {
  const text = typeof value === "string" ? plainText(value).trim() : "";
  if (!text) return { ok: false, message: "recordings:errors.textEmpty" };
  if (text.length > DISPLAY_NAME_MAX) return { ok: false, message: "recordings:errors.textTooLong" };
  return { ok: true, value: text };
}

/**
 * Tags as the API receives them (SPEC §3: a JSON string or an array of strings).
 * Invalid entries are dropped silently (Reading A); duplicates collapse
 * case-insensitively; more than five remaining is an error (Reading C).
 */
export function normaliseTags(input: unknown): RuleResult<string[]> {
  let list = input;
  if (typeof input === "string") {
    try {
      list = JSON.parse(input);
    } catch {
      return { ok: false, message: "recordings:errors.tagsNotArray" };
    }
  }
  if (!Array.isArray(list)) return { ok: false, message: "recordings:errors.tagsNotArray" };
  const seen = new Set<string>();
  const tags: string[] = [];
  for (const entry of list) {
    if (typeof entry !== "string") continue;
    const tag = plainText(entry).trim();
    if (!tag || tag.length > TAG_MAX) continue;
    const key = tag.toLocaleLowerCase("de");
    if (seen.has(key)) continue;
    seen.add(key);
    tags.push(tag);
  }
  if (tags.length > MAX_TAGS) return { ok: false, message: "recordings:errors.tooManyTags" };
  return { ok: true, value: tags };
}

/** Reading C: one tag added in the widget, against the file's current tags. */
export function checkNewTag(value: unknown, current: string[]): RuleResult<string> {
  const tag = typeof value === "string" ? plainText(value).trim() : "";
  if (!tag) return { ok: false, message: "recordings:errors.tagRequired" };
  if (tag.length > TAG_MAX) return { ok: false, message: "recordings:errors.tagTooLong" };
  if (current.some((t) => t.toLocaleLowerCase("de") === tag.toLocaleLowerCase("de")))
    return { ok: false, message: "recordings:errors.tagDuplicate" };
  if (current.length >= MAX_TAGS) return { ok: false, message: "recordings:errors.tooManyTags" };
  return { ok: true, value: tag };
}

/** The client's file name is only a display name: no path, no control or bidi characters, bounded. */
export function sanitiseFileName(name: unknown) {
  const base = typeof name === "string" ? (name.split(/[\\/]/).pop() ?? "") : "";
  const clean = base.replace(CONTROLS, "").replace(BIDI_CONTROLS, "").trim().slice(0, DISPLAY_NAME_MAX);
  return clean || "audio";
}

export function checkAdditionalContext(value: unknown): RuleResult<string> {
  const text = typeof value === "string" ? value.trim() : "";
  if (text.length > ADDITIONAL_CONTEXT_MAX) return { ok: false, message: "recordings:errors.contextTooLong" };
  return { ok: true, value: text };
}
