import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  getVocabulary,
  readVocabularyFile,
  VOCABULARY_FILE,
  VOCABULARY_LIMITS,
  WHISPER_PROMPT_MAX_CHARS,
  whisperPrompt,
} from "./vocabulary.server";

describe("the shipped vocabulary file", () => {
  const file = readVocabularyFile();

  it("validates, with at least 200 terms: at least 130 cardiology and 90 urology", () => {
    expect(file.version).toBe(1);
    expect(file.language).toBe("de");
    const count = (domain: string) => file.entries.filter((entry) => entry.domain === domain).length;
    expect(file.entries.length).toBeGreaterThanOrEqual(200);
    expect(count("cardiology")).toBeGreaterThanOrEqual(130);
    expect(count("urology")).toBeGreaterThanOrEqual(90);
  });

  it("has no duplicates, ignoring case", () => {
    const keys = file.entries.map((entry) => entry.content.toLocaleLowerCase("de"));
    expect(keys.filter((key, i) => keys.indexOf(key) !== i)).toEqual([]);
  });

  it("gives every term distinct lowercase sounds_like hints that differ from the term itself", () => {
    const defects: string[] = [];
    for (const { content, sounds_like } of file.entries) {
      if (content.length > VOCABULARY_LIMITS.contentMax) defects.push(`${content}: too long`);
      if (sounds_like.length === 0) defects.push(`${content}: no sounds_like`);
      if (new Set(sounds_like).size !== sounds_like.length) defects.push(`${content}: repeated sounds_like`);
      for (const hint of sounds_like) {
        if (hint.trim() === "") defects.push(`${content}: empty sounds_like`);
        if (hint.length > VOCABULARY_LIMITS.soundsLikeMax) defects.push(`${content}: "${hint}" too long`);
        if (hint !== hint.toLocaleLowerCase("de")) defects.push(`${content}: "${hint}" not lowercase`);
        if (hint === content.toLocaleLowerCase("de")) defects.push(`${content}: "${hint}" is the term itself`);
      }
    }
    expect(defects).toEqual([]);
  });
});

describe("validation of vocabulary files", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  function fileWith(entries: unknown[], extra: Record<string, unknown> = {}): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-vocabulary-"));
    dirs.push(dir);
    const file = path.join(dir, "de-medical.json");
    fs.writeFileSync(file, JSON.stringify({ version: 1, language: "de", entries, ...extra }));
    return file;
  }
  const ok = { content: "Vorhofflimmern", sounds_like: ["vor hof flimmern"], domain: "cardiology" };

  it("accepts a well-formed file", () => {
    expect(readVocabularyFile(fileWith([ok])).entries).toEqual([ok]);
  });

  it("rejects duplicates that differ only in case", () => {
    const file = fileWith([ok, { ...ok, content: "VORHOFFLIMMERN" }]);
    expect(() => readVocabularyFile(file)).toThrow(/entries\.1\.content: duplicate of entries\[0\]/);
  });

  it.each([
    ["an empty term", { ...ok, content: "" }],
    ["a term over 60 characters", { ...ok, content: "x".repeat(61) }],
    ["a term with surrounding white space", { ...ok, content: " EKG" }],
    ["no sounds_like", { ...ok, sounds_like: [] }],
    ["an empty sounds_like", { ...ok, sounds_like: [""] }],
    ["more than three sounds_like", { ...ok, sounds_like: ["a", "b", "c", "d"] }],
    ["an unknown domain", { ...ok, domain: "neurology" }],
    ["an unknown field", { ...ok, note: "x" }],
  ])("rejects %s", (_label, entry) => {
    expect(() => readVocabularyFile(fileWith([entry]))).toThrow(/^Vocabulary de-medical\.json: entries\.0/);
  });

  it("rejects another version or language, and names an unreadable file", () => {
    expect(() => readVocabularyFile(fileWith([ok], { version: 2 }))).toThrow(/version/);
    expect(() => readVocabularyFile(fileWith([ok], { language: "en" }))).toThrow(/language/);
    expect(() => readVocabularyFile(path.join(os.tmpdir(), "no-such-vocabulary.json"))).toThrow(
      /^Vocabulary no-such-vocabulary\.json: cannot read/,
    );
  });
});

describe("getVocabulary", () => {
  const file = readVocabularyFile(VOCABULARY_FILE);

  it("gives every German term with its sounds_like and without the domain", () => {
    const vocabulary = getVocabulary("de");
    expect(vocabulary).toHaveLength(file.entries.length);
    for (const entry of vocabulary) expect(Object.keys(entry).sort()).toEqual(["content", "sounds_like"]);
    const byContent = new Map(vocabulary.map((entry) => [entry.content, entry.sounds_like]));
    for (const entry of file.entries) expect(byContent.get(entry.content)).toEqual(entry.sounds_like);
  });

  it("takes the specialties in turn, each in file order, so a short prompt covers both", () => {
    const cardiology = file.entries.filter((entry) => entry.domain === "cardiology").map((entry) => entry.content);
    const urology = file.entries.filter((entry) => entry.domain === "urology").map((entry) => entry.content);
    const contents = getVocabulary("de").map((entry) => entry.content);
    expect(contents.slice(0, 4)).toEqual([cardiology[0], urology[0], cardiology[1], urology[1]]);
    expect(contents.filter((content) => cardiology.includes(content))).toEqual(cardiology);
    expect(contents.filter((content) => urology.includes(content))).toEqual(urology);
  });

  it("hands out copies, so one caller's edits do not reach the next", () => {
    const first = getVocabulary("de");
    first[0].content = "changed";
    first[1].sounds_like?.push("changed");
    const second = getVocabulary("de");
    expect(second[0].content).not.toBe("changed");
    expect(second[1].sounds_like).not.toContain("changed");
  });

  it("is empty for English: German spellings and pronunciations would mislead an English recogniser", () => {
    expect(getVocabulary("en")).toEqual([]);
  });
});

describe("whisperPrompt", () => {
  const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
  const entries = [
    { content: "Vorhofflimmern" },
    { content: "koronare Herzkrankheit" },
    { content: "EKG" },
    { content: "benigne Prostatahyperplasie" },
    { content: "Tamsulosin" },
  ];

  it("joins the terms with commas, in order, starting with the first", () => {
    expect(whisperPrompt(entries)).toBe(
      "Vorhofflimmern, koronare Herzkrankheit, EKG, benigne Prostatahyperplasie, Tamsulosin",
    );
  });

  it("stops before the term that would exceed the word budget, never cutting a term", () => {
    expect(whisperPrompt(entries, 4)).toBe("Vorhofflimmern, koronare Herzkrankheit, EKG");
    expect(whisperPrompt(entries, 2)).toBe("Vorhofflimmern");
    expect(whisperPrompt(entries, 0)).toBe("");
    expect(whisperPrompt([], 180)).toBe("");
  });

  it("also stops at the character budget", () => {
    expect(whisperPrompt(entries, 180, 40)).toBe("Vorhofflimmern, koronare Herzkrankheit");
    expect(whisperPrompt(entries, 180, 38)).toBe("Vorhofflimmern, koronare Herzkrankheit");
    expect(whisperPrompt(entries, 180, 37)).toBe("Vorhofflimmern");
  });

  it("fits the built-in vocabulary into both budgets, starting with its first terms", () => {
    const vocabulary = getVocabulary("de");
    const prompt = whisperPrompt(vocabulary);
    expect(prompt.startsWith(`${vocabulary[0].content}, ${vocabulary[1].content}, `)).toBe(true);
    expect(words(prompt)).toBeLessThanOrEqual(180);
    expect(prompt.length).toBeLessThanOrEqual(WHISPER_PROMPT_MAX_CHARS);
    expect(prompt.split(", ").length).toBeGreaterThan(20);

    const wide = whisperPrompt(vocabulary, 50, 100_000);
    expect(words(wide)).toBeLessThanOrEqual(50);
    expect(words(wide)).toBeGreaterThan(45);
    expect(wide.split(", ")).toEqual(vocabulary.slice(0, wide.split(", ").length).map((entry) => entry.content));
  });
});
