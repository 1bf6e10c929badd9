// The shape of a letter's content (SPEC §3 "Medical letter"), shared by the generator, the API and the editor.
// Content is either plain text or `{ structured_output: [{ "<section title>": "<text>" }, …] }` in template order.
// Everything a client sends back (PUT /api/arztbrief) goes through `parseLetterContent`, because the same
// content is later rendered, copied, diffed and fed to the language model: a malformed entry must be refused
// at the door rather than discovered there. No server-only imports: the editor island uses these helpers too.

export type LetterLanguage = "de-DE" | "en-GB";
export type LetterSection = { title: string; text: string };
export type StructuredContent = { structured_output: Array<Record<string, string>> };
export type LetterContent = string | StructuredContent;

/** SPEC §5: a section the transcript says nothing about carries exactly this wording. */
export const NO_INFORMATION = { de: "Keine Informationen gefunden", en: "No information found" } as const;

/**
 * Limits for content a client may store. Templates have at most 10 elements (SPEC §5); 20 leaves room for
 * older templates and plain-text letters converted by hand, while keeping a letter small enough to diff,
 * render and refine. 20,000 characters is several pages for one section; 100,000 bounds the whole letter
 * (and plain-text letters). Titles are template element names (≤ 100 characters in practice).
 */
export const LETTER_CONTENT_LIMITS = {
  maxSections: 20,
  maxTitleChars: 200,
  maxSectionChars: 20_000,
  maxTotalChars: 100_000,
} as const;

export function noInformationText(language: string): string {
  return language.toLowerCase().startsWith("en") ? NO_INFORMATION.en : NO_INFORMATION.de;
}

const NO_INFORMATION_FORMS = new Set([NO_INFORMATION.de, NO_INFORMATION.en].map((t) => t.toLowerCase()));

/** Either wording, ignoring case, surrounding and repeated whitespace and a trailing period. */
export function isNoInformation(text: string): boolean {
  const normalised = text.trim().replace(/\s+/g, " ").replace(/\.+$/, "").trim().toLowerCase();
  return NO_INFORMATION_FORMS.has(normalised);
}

export function toStructuredContent(sections: LetterSection[]): StructuredContent {
  return { structured_output: sections.map((s) => ({ [s.title]: s.text })) };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * The sections of structured content, or null for plain text and for anything that is not exactly a list of
 * single-key objects with a string value.
 */
export function sectionsOf(content: unknown): LetterSection[] | null {
  if (!isPlainObject(content)) return null;
  const keys = Object.keys(content);
  if (keys.length !== 1 || keys[0] !== "structured_output") return null;
  const list = content.structured_output;
  if (!Array.isArray(list)) return null;
  const sections: LetterSection[] = [];
  for (const entry of list) {
    if (!isPlainObject(entry)) return null;
    const entryKeys = Object.keys(entry);
    if (entryKeys.length !== 1) return null;
    const title = entryKeys[0]!;
    const text = entry[title];
    if (typeof text !== "string") return null;
    sections.push({ title, text });
  }
  return sections;
}

/** Plain text as one untitled section, so versions of either kind can be shown and diffed alike. */
export function asSections(content: LetterContent): LetterSection[] {
  return typeof content === "string" ? [{ title: "", text: content }] : (sectionsOf(content) ?? []);
}

export type LetterContentProblem =
  | "not_content"
  | "malformed_section"
  | "no_sections"
  | "too_many_sections"
  | "empty_title"
  | "title_too_long"
  | "duplicate_title"
  | "section_too_long"
  | "too_long"
  | "invalid_characters"
  | "empty";

export type ParsedLetterContent =
  | { ok: true; value: LetterContent }
  /** `reason` is an English sentence for logs and API details; `problem` is the code to translate. */
  | { ok: false; problem: LetterContentProblem; reason: string };

// PostgreSQL's jsonb refuses U+0000 and unpaired surrogates; refuse them here with a reason instead.
// eslint-disable-next-line no-control-regex
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Validates content a client wants to store: plain text, or `{ structured_output }` with 1–20 sections of
 * one non-empty, unique (case-insensitive) title each. Section text may be empty; plain text may not.
 * Nothing is repaired or trimmed: what is stored is exactly what the doctor wrote, or it is refused.
 */
export function parseLetterContent(input: unknown): ParsedLetterContent {
  const fail = (problem: LetterContentProblem, reason: string): ParsedLetterContent => ({ ok: false, problem, reason });
  const { maxSections, maxTitleChars, maxSectionChars, maxTotalChars } = LETTER_CONTENT_LIMITS;

  if (typeof input === "string") {
    if (!input.trim()) return fail("empty", "The letter is empty.");
    if (input.length > maxTotalChars) return fail("too_long", `The letter exceeds ${maxTotalChars} characters.`);
    if (UNSTORABLE.test(input))
      return fail("invalid_characters", "The letter contains characters that cannot be stored.");
    return { ok: true, value: input };
  }
  if (!isPlainObject(input) || !Array.isArray(input.structured_output))
    return fail("not_content", "Content must be text or an object with a structured_output list.");
  if (Object.keys(input).length !== 1)
    return fail("not_content", "Content must have no fields besides structured_output.");
  const sections = sectionsOf(input);
  if (!sections) return fail("malformed_section", "Every section must be an object with exactly one title and a text.");
  if (sections.length === 0) return fail("no_sections", "The letter has no sections.");
  if (sections.length > maxSections) return fail("too_many_sections", `A letter has at most ${maxSections} sections.`);

  const seen = new Set<string>();
  let total = 0;
  for (const [index, { title, text }] of sections.entries()) {
    const where = `Section ${index + 1}`;
    if (!title.trim()) return fail("empty_title", `${where} has no title.`);
    if (title.length > maxTitleChars)
      return fail("title_too_long", `${where}: title exceeds ${maxTitleChars} characters.`);
    const key = title.trim().toLowerCase();
    if (seen.has(key)) return fail("duplicate_title", `${where}: the title occurs twice.`);
    seen.add(key);
    if (text.length > maxSectionChars)
      return fail("section_too_long", `${where}: text exceeds ${maxSectionChars} characters.`);
    if (UNSTORABLE.test(title) || UNSTORABLE.test(text))
      return fail("invalid_characters", `${where} contains characters that cannot be stored.`);
    total += title.length + text.length;
  }
  if (total > maxTotalChars) return fail("too_long", `The letter exceeds ${maxTotalChars} characters.`);
  return { ok: true, value: toStructuredContent(sections) };
}

/**
 * The letter as text: per section its title on one line, then its text, a blank line between sections.
 * `omitNoInformation` drops sections whose text is the no-information wording (SPEC §5 copy in text view).
 */
export function letterPlainText(content: LetterContent, options: { omitNoInformation?: boolean } = {}): string {
  if (typeof content === "string") return content;
  const sections = sectionsOf(content) ?? [];
  return sections
    .filter((s) => !(options.omitNoInformation && isNoInformation(s.text)))
    .map((s) => (s.title ? `${s.title}\n${s.text.trim()}` : s.text.trim()))
    .join("\n\n");
}

export type SectionChange =
  | { status: "unchanged"; title: string; before: string; after: string }
  | { status: "changed"; title: string; before: string; after: string }
  | { status: "added"; title: string; before: null; after: string }
  | { status: "removed"; title: string; before: string; after: null };

/**
 * Per-section changes between two versions, matched by title. The list follows `after`'s order; a removed
 * section appears where it stood in `before` (after the sections that preceded it there).
 */
export function diffSections(before: LetterSection[], after: LetterSection[]): SectionChange[] {
  const beforeIndex = new Map(before.map((s, i) => [s.title, i] as const));
  const afterTitles = new Set(after.map((s) => s.title));
  const changes: SectionChange[] = [];
  let next = 0; // first section of `before` not yet passed
  const flushRemovedUpTo = (end: number) => {
    for (; next < end; next++) {
      const old = before[next]!;
      if (!afterTitles.has(old.title))
        changes.push({ status: "removed", title: old.title, before: old.text, after: null });
    }
  };
  for (const section of after) {
    const index = beforeIndex.get(section.title);
    if (index === undefined) {
      changes.push({ status: "added", title: section.title, before: null, after: section.text });
      continue;
    }
    flushRemovedUpTo(index);
    next = Math.max(next, index + 1);
    const old = before[index]!.text;
    changes.push({
      status: old === section.text ? "unchanged" : "changed",
      title: section.title,
      before: old,
      after: section.text,
    });
  }
  flushRemovedUpTo(before.length);
  return changes;
}

export type WordDiffOp = { op: "same" | "add" | "del"; text: string };

/** Beyond this many cells of the comparison table the changed middle is shown as one replacement. */
export const DIFF_WORDS_MAX_CELLS = 1_000_000;

function tokens(text: string): string[] {
  return text.match(/\s+|[^\s]+/g) ?? [];
}

function pushOp(ops: WordDiffOp[], op: WordDiffOp["op"], text: string) {
  if (!text) return;
  const last = ops[ops.length - 1];
  if (last && last.op === op) last.text += text;
  else ops.push({ op, text });
}

/**
 * A word-level diff: joining the "same" and "del" parts gives `a`, the "same" and "add" parts give `b`.
 * Longest common subsequence over words and whitespace, after removing the common start and end; when the
 * remaining middle is too large to compare (DIFF_WORDS_MAX_CELLS), it becomes one deletion and one addition.
 * Whitespace alone between two changes counts as changed, so a rewritten phrase reads as one replacement.
 */
export function diffWords(a: string, b: string): WordDiffOp[] {
  const x = tokens(a);
  const y = tokens(b);
  let start = 0;
  while (start < x.length && start < y.length && x[start] === y[start]) start++;
  let endX = x.length;
  let endY = y.length;
  while (endX > start && endY > start && x[endX - 1] === y[endY - 1]) {
    endX--;
    endY--;
  }
  const raw: WordDiffOp[] = [];
  pushOp(raw, "same", x.slice(0, start).join(""));
  const n = endX - start;
  const m = endY - start;
  if (n > 0 && m > 0 && (n + 1) * (m + 1) <= DIFF_WORDS_MAX_CELLS) {
    // lcs[i][j] = length of the LCS of x[start+i..endX) and y[start+j..endY).
    const width = m + 1;
    const lcs = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * width + j] =
          x[start + i] === y[start + j]
            ? lcs[(i + 1) * width + j + 1]! + 1
            : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (x[start + i] === y[start + j]) {
        raw.push({ op: "same", text: x[start + i]! });
        i++;
        j++;
      } else if (lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!) {
        raw.push({ op: "del", text: x[start + i]! });
        i++;
      } else {
        raw.push({ op: "add", text: y[start + j]! });
        j++;
      }
    }
    for (; i < n; i++) raw.push({ op: "del", text: x[start + i]! });
    for (; j < m; j++) raw.push({ op: "add", text: y[start + j]! });
  } else {
    raw.push({ op: "del", text: x.slice(start, endX).join("") });
    raw.push({ op: "add", text: y.slice(start, endY).join("") });
  }
  pushOp(raw, "same", x.slice(endX).join(""));

  // Group: a run of changes (with whitespace-only "same" parts inside it) becomes one deletion and one addition.
  const ops: WordDiffOp[] = [];
  let del = "";
  let add = "";
  const flush = () => {
    pushOp(ops, "del", del);
    pushOp(ops, "add", add);
    del = add = "";
  };
  for (let k = 0; k < raw.length; k++) {
    const part = raw[k]!;
    if (part.op === "del") del += part.text;
    else if (part.op === "add") add += part.text;
    else if ((del || add) && /^\s+$/.test(part.text) && raw[k + 1] && raw[k + 1]!.op !== "same") {
      del += part.text;
      add += part.text;
    } else {
      flush();
      pushOp(ops, "same", part.text);
    }
  }
  flush();
  return ops.filter((o) => o.text !== "");
}
