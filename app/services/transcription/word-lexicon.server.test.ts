import { describe, expect, it } from "vitest";
import { wordKnower } from "./word-lexicon.server";

// The lexicon behind the review's "words no lexicon knows" (issue 24): real word lists of German and English, the
// built-in medical vocabulary, German compounds split into known words.

describe("wordKnower", () => {
  it("knows German words in their forms, compounds of known words and the built-in terms", async () => {
    const knows = await wordKnower("de");
    for (const word of ["Schmerzen", "gegangen", "Brustschmerzen", "Belastungsdyspnoe", "Blutdruck", "Übelkeit."])
      expect(knows(word), word).toBe(true);
    // Short words, numbers and abbreviations in capitals are never asked about.
    for (const word of ["re", "EKG", "COPD", "5mg", "2026"]) expect(knows(word), word).toBe(true);
  });

  it("does not know what no language has: the misheard forms of rare terms", async () => {
    const knows = await wordKnower("de");
    for (const word of ["Metoprolool", "Ramipill", "Xyzqutrin", "Brustschmärzel"])
      expect(knows(word), word).toBe(false);
    // A hyphenated word is known when each of its parts is.
    expect(knows("prall-elastisch")).toBe(knows("prall") && knows("elastisch"));
    expect(knows("Metoprolool-Gabe")).toBe(false);
  });

  it("knows English words with their clitics, and not an English nonsense word", async () => {
    const knows = await wordKnower("en");
    for (const word of ["it's", "don't", "you're", "headache", "pressure's", "Martha"])
      expect(knows(word), word).toBe(true);
    expect(knows("lisinoprill")).toBe(false);
    expect(knows("Schmerzen")).toBe(false);
  });
});
