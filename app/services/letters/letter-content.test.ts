import { describe, expect, it } from "vitest";
import {
  DIFF_WORDS_MAX_CELLS,
  LETTER_CONTENT_LIMITS,
  NO_INFORMATION,
  asSections,
  diffSections,
  diffWords,
  isNoInformation,
  letterPlainText,
  noInformationText,
  parseLetterContent,
  sectionsOf,
  toStructuredContent,
  type WordDiffOp,
} from "./letter-content";

const letter = toStructuredContent([
  { title: "Anamnese", text: "Herzstolpern seit drei Wochen." },
  { title: "Allergien", text: "Keine Informationen gefunden" },
  { title: "Medikation", text: "Ramipril 5 mg morgens." },
  { title: "Procedere", text: "no information found." },
]);

describe("structured content", () => {
  it("round-trips sections through structured_output in order", () => {
    expect(letter.structured_output[0]).toEqual({ Anamnese: "Herzstolpern seit drei Wochen." });
    expect(sectionsOf(letter)?.map((s) => s.title)).toEqual(["Anamnese", "Allergien", "Medikation", "Procedere"]);
  });

  it("sectionsOf refuses anything but single-key objects with string values", () => {
    expect(sectionsOf("plain text")).toBeNull();
    expect(sectionsOf({ structured_output: [{ a: "x", b: "y" }] })).toBeNull();
    expect(sectionsOf({ structured_output: [{ a: 1 }] })).toBeNull();
    expect(sectionsOf({ structured_output: [{}] })).toBeNull();
    expect(sectionsOf({ structured_output: [["a", "x"]] })).toBeNull();
    expect(sectionsOf({ structured_output: "a" })).toBeNull();
    expect(sectionsOf({ structured_output: [], extra: 1 })).toBeNull();
    expect(sectionsOf({ structured_output: [] })).toEqual([]);
  });

  it("asSections shows plain text as one untitled section", () => {
    expect(asSections("Brief")).toEqual([{ title: "", text: "Brief" }]);
    expect(asSections(letter)).toHaveLength(4);
  });
});

describe("parseLetterContent", () => {
  it("accepts plain text and valid structured content unchanged", () => {
    expect(parseLetterContent("Sehr geehrte Kollegin, …")).toEqual({ ok: true, value: "Sehr geehrte Kollegin, …" });
    expect(parseLetterContent(letter)).toEqual({ ok: true, value: letter });
    const emptySection = toStructuredContent([{ title: "Befund", text: "" }]);
    expect(parseLetterContent(emptySection).ok).toBe(true);
  });

  const refused: Array<[string, unknown, string]> = [
    ["a number", 42, "not_content"],
    ["null", null, "not_content"],
    ["an array", [{ a: "b" }], "not_content"],
    ["extra fields", { structured_output: [{ a: "b" }], html: "<b>" }, "not_content"],
    ["a section with two keys", { structured_output: [{ a: "b", c: "d" }] }, "malformed_section"],
    ["a section with a number", { structured_output: [{ a: 1 }] }, "malformed_section"],
    ["no sections", { structured_output: [] }, "no_sections"],
    ["an empty title", { structured_output: [{ " ": "x" }] }, "empty_title"],
    ["a duplicate title", { structured_output: [{ Befund: "x" }, { befund: "y" }] }, "duplicate_title"],
    ["a NUL character", { structured_output: [{ Befund: "a\u0000b" }] }, "invalid_characters"],
    ["a lone surrogate", "text \ud800 more", "invalid_characters"],
    ["blank plain text", "   ", "empty"],
  ];
  it.each(refused)("refuses %s with a reason", (_name, input, problem) => {
    const parsed = parseLetterContent(input);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.problem).toBe(problem);
      expect(parsed.reason).toMatch(/\w/);
    }
  });

  it("enforces the documented size limits", () => {
    const { maxSections, maxSectionChars, maxTotalChars, maxTitleChars } = LETTER_CONTENT_LIMITS;
    const many = Array.from({ length: maxSections + 1 }, (_, i) => ({ title: `T${i}`, text: "x" }));
    expect(parseLetterContent(toStructuredContent(many))).toMatchObject({ ok: false, problem: "too_many_sections" });
    expect(parseLetterContent(toStructuredContent(many.slice(0, maxSections))).ok).toBe(true);
    const long = [{ title: "A", text: "x".repeat(maxSectionChars + 1) }];
    expect(parseLetterContent(toStructuredContent(long))).toMatchObject({ ok: false, problem: "section_too_long" });
    const atLimit = [{ title: "A", text: "x".repeat(maxSectionChars) }];
    expect(parseLetterContent(toStructuredContent(atLimit)).ok).toBe(true);
    const total = Array.from({ length: 6 }, (_, i) => ({ title: `T${i}`, text: "x".repeat(maxSectionChars) }));
    expect(parseLetterContent(toStructuredContent(total))).toMatchObject({ ok: false, problem: "too_long" });
    expect(parseLetterContent("x".repeat(maxTotalChars + 1))).toMatchObject({ ok: false, problem: "too_long" });
    const title = [{ title: "T".repeat(maxTitleChars + 1), text: "x" }];
    expect(parseLetterContent(toStructuredContent(title))).toMatchObject({ ok: false, problem: "title_too_long" });
  });
});

describe("no information", () => {
  it("recognises both wordings, tolerant of case, spaces and a trailing period", () => {
    for (const text of [
      "Keine Informationen gefunden",
      "keine informationen gefunden.",
      "  Keine   Informationen\ngefunden  ",
      "No information found",
      "NO INFORMATION FOUND.",
    ])
      expect(isNoInformation(text), text).toBe(true);
    for (const text of ["Keine Informationen", "No information found about allergies", "Keine Allergien bekannt."])
      expect(isNoInformation(text), text).toBe(false);
  });

  it("gives the wording of the letter's language", () => {
    expect(noInformationText("de-DE")).toBe(NO_INFORMATION.de);
    expect(noInformationText("en-GB")).toBe(NO_INFORMATION.en);
  });
});

describe("letterPlainText", () => {
  it("writes title and text per section with a blank line between", () => {
    expect(letterPlainText(toStructuredContent([{ title: "A", text: " eins \n" }]))).toBe("A\neins");
    const text = letterPlainText(letter);
    expect(text.split("\n\n")).toHaveLength(4);
    expect(text.startsWith("Anamnese\nHerzstolpern seit drei Wochen.\n\nAllergien\n")).toBe(true);
  });

  it("omits no-information sections in both wordings when copying the text view", () => {
    expect(letterPlainText(letter, { omitNoInformation: true })).toBe(
      "Anamnese\nHerzstolpern seit drei Wochen.\n\nMedikation\nRamipril 5 mg morgens.",
    );
  });

  it("returns plain-text letters as they are", () => {
    expect(letterPlainText("Brief\n\nText", { omitNoInformation: true })).toBe("Brief\n\nText");
  });
});

describe("diffSections", () => {
  const before = [
    { title: "Anamnese", text: "a" },
    { title: "Befund", text: "b" },
    { title: "Diagnose", text: "c" },
    { title: "Procedere", text: "d" },
  ];

  it("lists added, removed, changed and unchanged sections in reading order", () => {
    const after = [
      { title: "Anamnese", text: "a" },
      { title: "Diagnose", text: "C" },
      { title: "Medikation", text: "m" },
      { title: "Procedere", text: "d" },
    ];
    expect(diffSections(before, after)).toEqual([
      { status: "unchanged", title: "Anamnese", before: "a", after: "a" },
      { status: "removed", title: "Befund", before: "b", after: null },
      { status: "changed", title: "Diagnose", before: "c", after: "C" },
      { status: "added", title: "Medikation", before: null, after: "m" },
      { status: "unchanged", title: "Procedere", before: "d", after: "d" },
    ]);
  });

  it("keeps a removed last section at the end and handles reordering", () => {
    const after = [
      { title: "Diagnose", text: "c" },
      { title: "Anamnese", text: "a" },
    ];
    expect(diffSections(before, after).map((c) => `${c.status}:${c.title}`)).toEqual([
      "removed:Befund",
      "unchanged:Diagnose",
      "unchanged:Anamnese",
      "removed:Procedere",
    ]);
  });
});

function side(ops: WordDiffOp[], which: "before" | "after") {
  return ops
    .filter((o) => o.op === "same" || o.op === (which === "before" ? "del" : "add"))
    .map((o) => o.text)
    .join("");
}

describe("diffWords", () => {
  it("marks changed words and reproduces both texts", () => {
    const a = "Patient nimmt Ramipril 5 mg morgens.";
    const b = "Patient nimmt Ramipril 10 mg morgens und abends.";
    const ops = diffWords(a, b);
    expect(side(ops, "before")).toBe(a);
    expect(side(ops, "after")).toBe(b);
    expect(ops).toEqual([
      { op: "same", text: "Patient nimmt Ramipril " },
      { op: "del", text: "5" },
      { op: "add", text: "10" },
      { op: "same", text: " mg " },
      { op: "del", text: "morgens." },
      { op: "add", text: "morgens und abends." },
    ]);
  });

  it("groups a rewritten phrase into one deletion and one addition", () => {
    const ops = diffWords("seit drei Wochen Husten", "seit zwei Tagen Husten");
    expect(ops).toEqual([
      { op: "same", text: "seit " },
      { op: "del", text: "drei Wochen" },
      { op: "add", text: "zwei Tagen" },
      { op: "same", text: " Husten" },
    ]);
  });

  it("handles empty and identical texts", () => {
    expect(diffWords("", "")).toEqual([]);
    expect(diffWords("gleich", "gleich")).toEqual([{ op: "same", text: "gleich" }]);
    expect(diffWords("", "neu")).toEqual([{ op: "add", text: "neu" }]);
    expect(diffWords("alt", "")).toEqual([{ op: "del", text: "alt" }]);
  });

  it("stays bounded for long texts: the changed middle becomes one replacement", () => {
    const words = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(" ");
    const a = `Anfang ${words("a", 1200)} Ende`;
    const b = `Anfang ${words("b", 1200)} Ende`;
    expect((2 * 1200) ** 2).toBeGreaterThan(DIFF_WORDS_MAX_CELLS);
    const started = performance.now();
    const ops = diffWords(a, b);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(ops.map((o) => o.op)).toEqual(["same", "del", "add", "same"]);
    expect(side(ops, "before")).toBe(a);
    expect(side(ops, "after")).toBe(b);
  });
});
