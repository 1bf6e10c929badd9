import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildTranscript } from "~/services/speech/transcript-format";
import { createLocalLanguageModel } from "~/services/llm/local-llm.server";
import { generateLetter } from "./generate.server";
import { refineSections } from "./refine.server";

// The embedded engine's whole letter path on a real model (issue 6 "done when"): node-llama-cpp with
// ../shared/models/stories260K.gguf, a 260K-parameter model of children's stories. Its words are nonsense;
// what is asserted is what the engine guarantees: a schema-valid letter with the template's sections, in order.
const STORIES = path.resolve(process.cwd(), "../shared/models/stories260K.gguf");

const model = createLocalLanguageModel({ model: STORIES, threads: 1, contextTokens: 4096, extendContext: true });

const transcript = buildTranscript({
  engine: "local",
  language: "de",
  audioSeconds: 12,
  words: "Guten Tag . Ich habe seit gestern Kopfschmerzen . Wir messen den Blutdruck .".split(" ").map((text, i) => ({
    text,
    start: i * 0.4,
    end: i * 0.4 + 0.3,
    confidence: 0.9,
    speaker: i < 6 ? "S1" : "S2",
    punctuation: text === ".",
  })),
});

const template = {
  name: "Kurzbrief",
  prompt: "Knapp und sachlich.",
  elements: [
    { name: "Anamnese", description: "Beschwerden und Verlauf" },
    { name: "Befund", description: "Untersuchungsergebnisse" },
    { name: "Procedere", description: "Weiteres Vorgehen" },
  ],
};

describe("the local engine writes letters (stories260K)", () => {
  it("returns a schema-valid letter with the template's sections in order", async () => {
    const letter = await generateLetter({ model, language: "de-DE", template, transcript, context: [] });
    expect(letter.sections.map((s) => s.title)).toEqual(["Anamnese", "Befund", "Procedere"]);
    for (const section of letter.sections) expect(typeof section.text).toBe("string");
    expect(["patient_conversation", "doctor_dictation", "other"]).toContain(letter.documentType);
    expect(letter.usage.promptTokens).toBeGreaterThan(0);
  }, 60_000);

  it("refines every section and keeps titles and order", async () => {
    const result = await refineSections({
      model,
      language: "de-DE",
      sections: [
        { title: "Anamnese", text: "Kopfschmerzen seit gestern." },
        { title: "Procedere", text: "Blutdruckkontrolle." },
      ],
      query: "Bitte kürzer.",
    });
    expect(result.sections.map((s) => s.title)).toEqual(["Anamnese", "Procedere"]);
  }, 60_000);
});
