// SPEC §5 "Names and tags" as the server enforces it (issue 4): Reading A's
// service rules together with Reading C's widget rules; Reading B's ASCII-only
// rule is not applied (ADR 0009). Messages are i18n keys in "recordings".

export const DISPLAY_NAME_MAX = 100;
export const TAG_MAX = 50;
export const MAX_TAGS = 5;
export const ADDITIONAL_CONTEXT_MAX = 10_000;
export const ADDITIONAL_CONTEXT_WARN_ABOVE = 9_000;

export type RuleResult<T> = { ok: true; value: T } | { ok: false; message: string };

/** Reading A: non-empty after trimming, at most 100 characters. */
export function checkDisplayName(value: unknown): RuleResult<string> {
  const text = typeof value === "string" ? value.trim() : "";
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
    const tag = entry.trim();
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
  const tag = typeof value === "string" ? value.trim() : "";
  if (!tag) return { ok: false, message: "recordings:errors.tagRequired" };
  if (tag.length > TAG_MAX) return { ok: false, message: "recordings:errors.tagTooLong" };
  if (current.some((t) => t.toLocaleLowerCase("de") === tag.toLocaleLowerCase("de")))
    return { ok: false, message: "recordings:errors.tagDuplicate" };
  if (current.length >= MAX_TAGS) return { ok: false, message: "recordings:errors.tooManyTags" };
  return { ok: true, value: tag };
}

/** The client's file name is only a display name: no path, no control characters, bounded. */
export function sanitiseFileName(name: unknown) {
  const base = typeof name === "string" ? (name.split(/[\\/]/).pop() ?? "") : "";
  const clean = base
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f]/g, "")
    .trim()
    .slice(0, DISPLAY_NAME_MAX);
  return clean || "audio";
}

export function checkAdditionalContext(value: unknown): RuleResult<string> {
  const text = typeof value === "string" ? value.trim() : "";
  if (text.length > ADDITIONAL_CONTEXT_MAX) return { ok: false, message: "recordings:errors.contextTooLong" };
  return { ok: true, value: text };
}
