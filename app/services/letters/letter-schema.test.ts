import { describe, expect, it } from "vitest";
import type { JsonSchema } from "~/services/llm/types";
import { LetterGenerationError } from "./letter-errors";
import { assertClinical, buildLetterSchema, readLetterAnswer } from "./letter-schema";

const titles = ["Anamnese", "Befund", "Diagnose", "Therapie und Procedere"];

function answer(sections: Record<string, unknown>, documentType: unknown = "patient_conversation") {
  return { document_type: documentType, sections };
}
const full = { s1: "Husten seit drei Tagen.", s2: "Lunge frei.", s3: "Akute Bronchitis.", s4: "Inhalation." };

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof LetterGenerationError ? error.code : `other: ${String(error)}`;
  }
  return undefined;
}

/** Every object in the schema is strict: all properties required, nothing else allowed (OpenAI strict mode). */
function assertStrict(schema: JsonSchema) {
  if (schema.type === "object") {
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual(Object.keys(schema.properties ?? {}));
  }
  for (const child of Object.values(schema.properties ?? {})) assertStrict(child);
  if (schema.items) assertStrict(schema.items);
}

describe("buildLetterSchema", () => {
  it("fixes the order and presence of the template's sections", () => {
    const schema = buildLetterSchema(titles, "de-DE");
    assertStrict(schema);
    expect(schema.required).toEqual(["document_type", "sections"]);
    expect(schema.properties!.document_type!.enum).toEqual(["patient_conversation", "doctor_dictation", "other"]);
    const sections = schema.properties!.sections!;
    expect(Object.keys(sections.properties!)).toEqual(["s1", "s2", "s3", "s4"]);
    expect(Object.values(sections.properties!).map((p) => p.description)).toEqual(titles);
    expect(Object.values(sections.properties!).every((p) => p.type === "string")).toBe(true);
    expect(sections.description).toContain("Keine Informationen gefunden");
    expect(buildLetterSchema(titles, "en-GB").properties!.sections!.description).toContain("No information found");
  });

  it("refuses a template without sections", () => {
    expect(() => buildLetterSchema([], "de-DE")).toThrow();
  });
});

describe("readLetterAnswer", () => {
  it("returns the sections in template order with their titles", () => {
    const result = readLetterAnswer(
      answer({ s4: "Inhalation.", s2: "Lunge frei.", s3: "Bronchitis.", s1: "Husten." }),
      titles,
      "de-DE",
    );
    expect(result.documentType).toBe("patient_conversation");
    expect(result.sections).toEqual([
      { title: "Anamnese", text: "Husten." },
      { title: "Befund", text: "Lunge frei." },
      { title: "Diagnose", text: "Bronchitis." },
      { title: "Therapie und Procedere", text: "Inhalation." },
    ]);
  });

  it.each([
    ["a missing section", answer({ s1: "a", s2: "b", s3: "c" })],
    ["an extra section", answer({ ...full, s5: "e" })],
    ["a section keyed by title", answer({ ...full, Anamnese: "x" })],
    ["a section that is not text", answer({ ...full, s2: ["Lunge frei"] })],
    ["a null section", answer({ ...full, s3: null })],
    ["an unknown document_type", answer(full, "dictation")],
    ["a missing document_type", { sections: full }],
    ["an extra top-level key", { ...answer(full), comment: "x" }],
    ["sections as a list", answer([] as unknown as Record<string, unknown>)],
    ["no object at all", "Husten seit drei Tagen"],
  ])("refuses %s as a structure error", (_name, value) => {
    expect(codeOf(() => readLetterAnswer(value, titles, "de-DE"))).toBe("structure_error");
  });

  it("turns empty sections into the no-information wording of the letter's language", () => {
    const value = answer({ s1: "Husten.", s2: "", s3: "   ", s4: "no information found" });
    expect(readLetterAnswer(value, titles, "de-DE").sections.map((s) => s.text)).toEqual([
      "Husten.",
      "Keine Informationen gefunden",
      "Keine Informationen gefunden",
      "Keine Informationen gefunden",
    ]);
    expect(readLetterAnswer(value, titles, "en-GB").sections.map((s) => s.text)).toEqual([
      "Husten.",
      "No information found",
      "No information found",
      "No information found",
    ]);
  });

  it('answers "other" with not_patient_conversation, or template_switch_failed on a redo', () => {
    expect(codeOf(() => readLetterAnswer(answer(full, "other"), titles, "de-DE"))).toBe("not_patient_conversation");
    expect(codeOf(() => readLetterAnswer(answer(full, "other"), titles, "de-DE", { mode: "redo" }))).toBe(
      "template_switch_failed",
    );
    expect(readLetterAnswer(answer(full, "doctor_dictation"), titles, "de-DE").documentType).toBe("doctor_dictation");
    expect(readLetterAnswer(answer(full, "other"), titles, "de-DE", { checkDocumentType: false }).documentType).toBe(
      "other",
    );
  });

  it("carries SPEC's messages and the user-facing keys", () => {
    const notConversation = new LetterGenerationError("not_patient_conversation");
    expect(notConversation.message).toBe("Dies ist kein Patientengespräch");
    expect(notConversation.userMessageKey).toBe("letters:errors.notPatientConversation");
    expect(new LetterGenerationError("structure_error").message).toBe("Invalid medical letter structure");
    expect(new LetterGenerationError("structure_error").userMessageKey).toBe("letters:errors.invalidStructure");
    expect(new LetterGenerationError("template_switch_failed").message).toBe(
      "Template switch failed; this does not seem to be a structured document or dictation",
    );
    expect(codeOf(() => assertClinical("other", "create"))).toBe("not_patient_conversation");
    expect(codeOf(() => assertClinical("patient_conversation"))).toBeUndefined();
  });
});

describe("a cited letter answer (issue 24)", () => {
  it("asks for statements with sources per section, strictly", () => {
    const schema = buildLetterSchema(titles, "de-DE", true);
    assertStrict(schema);
    const sections = schema.properties!.sections!;
    expect(Object.keys(sections.properties!)).toEqual(["s1", "s2", "s3", "s4"]);
    for (const [i, property] of Object.values(sections.properties!).entries()) {
      expect(property.type).toBe("array");
      expect(property.description).toBe(titles[i]);
      expect(property.items!.required).toEqual(["text", "sources"]);
    }
  });

  it("joins the statements into the section's text and keeps each one's sources, without brackets", () => {
    const value = answer({
      s1: [
        { text: "Husten seit drei Tagen.", sources: ["[t1p0]"] },
        { text: "Kein Fieber.", sources: ["t3p0", "t2p0"] },
      ],
      s2: [
        { text: "Befund:\n", sources: [] },
        { text: "Lunge frei.", sources: ["t5p0"] },
      ],
      s3: [{ text: "Keine Informationen gefunden", sources: ["t1p0"] }],
      s4: [],
    });
    const result = readLetterAnswer(value, titles, "de-DE");
    expect(result.sections.map((s) => s.text)).toEqual([
      "Husten seit drei Tagen. Kein Fieber.",
      "Befund:\nLunge frei.",
      "Keine Informationen gefunden",
      "Keine Informationen gefunden",
    ]);
    // A "no information" section claims nothing, so it cites nothing; a statement without sources is no citation.
    expect(result.citations).toEqual([
      { section: 0, text: "Husten seit drei Tagen.", sources: ["t1p0"] },
      { section: 0, text: "Kein Fieber.", sources: ["t3p0", "t2p0"] },
      { section: 1, text: "Lunge frei.", sources: ["t5p0"] },
    ]);
  });

  it("refuses statements that are not { text, sources }", () => {
    expect(codeOf(() => readLetterAnswer(answer({ ...full, s1: [{ text: "x" }] }), titles, "de-DE"))).toBe(
      "structure_error",
    );
    expect(codeOf(() => readLetterAnswer(answer({ ...full, s1: [["x"]] }), titles, "de-DE"))).toBe("structure_error");
  });

  it("keeps at most eight sources of a statement", () => {
    const many = Array.from({ length: 12 }, (_, i) => `t${i}p0`);
    const result = readLetterAnswer(answer({ ...full, s1: [{ text: "Husten.", sources: many }] }), titles, "de-DE");
    expect(result.citations[0]!.sources).toEqual(many.slice(0, 8));
  });
});
