import { describe, expect, it } from "vitest";
import { contentTokens, tokenize, wordKey } from "./normalise";

const keys = (text: string) => contentTokens(tokenize(text)).map((t) => t.key);

describe("tokenize", () => {
  it("folds case, umlauts and ß, and strips endings, so spellings of one word meet", () => {
    expect(wordKey("Rücken")).toBe(wordKey("Ruecken"));
    expect(wordKey("Schmerzen")).toBe(wordKey("Schmerz"));
    expect(wordKey("Drücken")).toBe(wordKey("Druck"));
    expect(wordKey("knees")).toBe(wordKey("knee"));
    expect(wordKey("Fuß")).toBe(wordKey("Fuss"));
  });

  it("reads number words in German and English as digits, with the unit canonical", () => {
    expect(keys("Ramipril fünf Milligramm")).toEqual(["ramipril", "5", "u:mg"]);
    expect(keys("zweiundzwanzig Mikrogramm")).toEqual(["22", "u:µg"]);
    expect(keys("twenty five milligrams")).toEqual(["25", "u:mg"]);
    expect(keys("zwei Komma fünf mg")).toEqual(["2.5", "u:mg"]);
    expect(keys("Tamsulosin 0,4 mg")).toEqual(keys("Tamsulosin 0.4 Milligramm"));
    expect(keys("158 Millimeter Quecksilbersäule")).toEqual(keys("158 mmHg"));
  });

  it("knows which unit follows a number", () => {
    const [dose] = tokenize("10 mg").filter((t) => t.kind === "number");
    expect(dose?.unitAfter).toBe("mg");
    const [interval] = tokenize("in zwei Wochen").filter((t) => t.kind === "number");
    expect(interval?.timeAfter).toBe("week");
  });

  it("turns dosing schemes, written or dictated, into the times of day they mean", () => {
    const [written] = tokenize("1-0-1");
    expect(written?.kind).toBe("scheme");
    expect(written?.alts).toEqual(expect.arrayContaining(["f:2", wordKey("morgens"), wordKey("abends")]));
    const [dictated] = tokenize("eins null eins");
    expect(dictated?.key).toBe(written?.key);
    expect(tokenize("zweimal täglich")[0]?.key).toBe("f:2");
    expect(tokenize("twice daily")[0]?.key).toBe("f:2");
  });

  it("expands the abbreviations letters use", () => {
    const [suspicion] = tokenize("V.a. KHK");
    expect(suspicion?.parts).toEqual([wordKey("Verdacht")]);
    const khk = tokenize("V.a. KHK")[1];
    expect(khk?.parts).toEqual([wordKey("koronare"), wordKey("Herzkrankheit")]);
    const [rr] = tokenize("RR 158/94");
    expect(rr?.alts).toContain(wordKey("Blutdruck"));
    // "des" and "er" are German words unless written as abbreviations
    expect(tokenize("des Vaters")[0]?.parts).toEqual([]);
  });

  it("marks negations, but not a negated compound", () => {
    expect(tokenize("kein Fieber")[0]?.negation).toBe(true);
    expect(tokenize("she doesn't smoke")[1]?.negation).toBe(true);
    expect(tokenize("Nicht-ST-Hebungsinfarkt")[0]?.negation).toBe(false);
  });

  it("reads dates written and spoken", () => {
    expect(tokenize("am 04.11.")[1]?.key).toBe("d:4.11");
    expect(tokenize("am 4. November")[1]?.key).toBe("d:4.11");
    expect(tokenize("on November 4th")[1]?.key).toBe("d:4.11");
  });

  it("gives the sides", () => {
    expect(tokenize("linken Arm")[0]?.side).toBe("left");
    expect(tokenize("bds.")[0]?.side).toBe("both");
    expect(tokenize("right knee")[0]?.side).toBe("right");
  });

  it("puts words of one meaning under one concept", () => {
    const [letter] = tokenize("Dyspnoe");
    const [spoken] = tokenize("Luftnot");
    expect(letter?.alts.some((a) => spoken?.alts.includes(a))).toBe(true);
    const compound = tokenize("Belastungsdyspnoe")[0];
    expect(compound?.alts.some((a) => spoken?.alts.includes(a))).toBe(true);
  });
});
