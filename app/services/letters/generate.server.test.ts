import { describe, expect, it } from "vitest";
import { LlmError } from "~/services/llm/types";
import { FACTS, fromTurns, longConsultation } from "../../../tests/support/long-consultation";
import { ScriptedModel, extractiveResponder, type Responder } from "../../../tests/support/scripted-model";
import {
  ALLERGIEN,
  MEDIKATION,
  blocksOf,
  failure,
  inputs,
  rules,
  template,
  within,
} from "../../../tests/support/letter-generate-helpers";
import { generateLetter, LetterGenerationError, type UsageEvent } from "./generate.server";

describe("generateLetter: a consultation that fits", () => {
  it("makes exactly one request and writes the facts into their sections", async () => {
    const model = new ScriptedModel(extractiveResponder(rules), 16_000);
    const events: UsageEvent[] = [];
    const result = await generateLetter({ model, ...inputs(), onUsage: (e) => events.push(e) });
    expect(model.requests).toHaveLength(1);
    expect(result.requests).toBe(1);
    expect(result.strategy).toBe("single");
    expect(result.documentType).toBe("patient_conversation");
    expect(result.sections.map((s) => s.title)).toEqual(template.elements.map((e) => e.name));
    expect(result.sections[MEDIKATION]!.text).toContain(FACTS.lateDrug);
    expect(result.sections[ALLERGIEN]!.text).toBe("Keine Informationen gefunden");
    expect(events).toEqual([{ phase: "letter", usage: result.usage, model: "scripted-model" }]);
    expect(result.usage.promptTokens).toBe(model.requests[0]!.promptTokens);
    expect(model.requests.every(within(model))).toBe(true);
  });

  it("passes the abort signal to the model", async () => {
    const controller = new AbortController();
    const model = new ScriptedModel(extractiveResponder(rules));
    await generateLetter({ model, ...inputs(), signal: controller.signal });
    expect(model.requests[0]!.signal).toBe(controller.signal);
  });
});

describe("generateLetter: the guard", () => {
  const otherExcept = (clinicalPart: number | null): Responder => {
    const base = extractiveResponder(rules);
    let part = 0;
    return (request, index) => {
      const value = base(request, index) as Record<string, unknown>;
      if (request.schemaName === "arztbrief_notes") {
        part++;
        return { ...value, document_type: part === clinicalPart ? "doctor_dictation" : "other" };
      }
      return value;
    };
  };

  it("writes the letter when any part is clinical", async () => {
    const model = new ScriptedModel(otherExcept(3), 4_000);
    const result = await generateLetter({ model, ...inputs({ transcript: longConsultation() }) });
    expect(result.documentType).toBe("doctor_dictation");
    expect(model.requests.at(-1)!.schemaName).toBe("arztbrief");
    expect(model.requests.at(-1)!.messages[0]!.content).toContain('"doctor_dictation" (already determined');
  });

  it("stops with not_patient_conversation when every part is other, before the final request", async () => {
    const model = new ScriptedModel(otherExcept(null), 4_000);
    const error = await failure(generateLetter({ model, ...inputs({ transcript: longConsultation() }) }));
    expect(error).toBeInstanceOf(LetterGenerationError);
    expect((error as LetterGenerationError).code).toBe("not_patient_conversation");
    expect((error as Error).message).toBe("Dies ist kein Patientengespräch");
    expect(model.requests.every((r) => r.schemaName === "arztbrief_notes")).toBe(true);
  });

  it("reports template_switch_failed on a redo", async () => {
    const model = new ScriptedModel(otherExcept(null), 4_000);
    const error = await failure(generateLetter({ model, ...inputs({ transcript: longConsultation() }), mode: "redo" }));
    expect((error as LetterGenerationError).code).toBe("template_switch_failed");
  });

  it("applies to a single request, and an empty transcript needs no request at all", async () => {
    const model = new ScriptedModel(extractiveResponder(rules, { documentType: "other" }));
    const error = await failure(generateLetter({ model, ...inputs() }));
    expect((error as LetterGenerationError).code).toBe("not_patient_conversation");
    expect(model.requests).toHaveLength(1);

    const silent = new ScriptedModel(extractiveResponder(rules));
    const empty = await failure(generateLetter({ model: silent, ...inputs({ transcript: fromTurns([]) }) }));
    expect((empty as LetterGenerationError).code).toBe("not_patient_conversation");
    expect(silent.requests).toEqual([]);
  });
});

describe("generateLetter: failures", () => {
  it("maps the engine's invalid_output to structure_error", async () => {
    const cause = new LlmError("invalid_output", "Structured output processing failed");
    const model = new ScriptedModel(() => {
      throw cause;
    });
    const error = await failure(generateLetter({ model, ...inputs() }));
    expect(error).toBeInstanceOf(LetterGenerationError);
    expect((error as LetterGenerationError).code).toBe("structure_error");
    expect((error as LetterGenerationError).userMessageKey).toBe("letters:errors.invalidStructure");
    expect((error as Error).cause).toBe(cause);
  });

  it("treats an answer with a missing section as structure_error", async () => {
    const model = new ScriptedModel(() => ({ document_type: "patient_conversation", sections: { s1: "a" } }));
    const error = await failure(generateLetter({ model, ...inputs() }));
    expect((error as LetterGenerationError).code).toBe("structure_error");
  });

  it("lets transient and permanent errors through unchanged, for the job layer to retry or not", async () => {
    for (const kind of ["transient", "permanent"] as const) {
      const original = new LlmError(kind, "upstream said no", { status: kind === "transient" ? 503 : 400 });
      const model = new ScriptedModel(() => {
        throw original;
      });
      expect(await failure(generateLetter({ model, ...inputs() }))).toBe(original);
    }
  });

  it("sends no further request once the signal is aborted", async () => {
    const controller = new AbortController();
    const base = extractiveResponder(rules);
    const model = new ScriptedModel((request, index) => {
      if (index === 1) controller.abort();
      return base(request, index);
    }, 4_000);
    const error = await failure(
      generateLetter({ model, ...inputs({ transcript: longConsultation() }), signal: controller.signal }),
    );
    expect((error as Error).name).toBe("AbortError");
    expect(model.requests).toHaveLength(2);
  });

  it("does not start when the signal is already aborted", async () => {
    const model = new ScriptedModel(extractiveResponder(rules));
    const error = await failure(generateLetter({ model, ...inputs(), signal: AbortSignal.abort() }));
    expect((error as Error).name).toBe("AbortError");
    expect(model.requests).toEqual([]);
  });
});

describe("generateLetter: an engine that names its sources (issue 24)", () => {
  class CitingModel extends ScriptedModel {
    readonly citesSources = true;
  }
  /** Cites, for the first section, the transcript's first line by the id the prompt shows. */
  const citing: Responder = (request) => {
    const transcript = blocksOf(request).find((b) => b.kind === "TRANSCRIPT")?.body ?? "";
    const first = /^\[(t\d+p\d+)\] [^:]+: (.*)$/m.exec(transcript);
    const keys = Object.keys(request.schema.properties!.sections!.properties!);
    return {
      document_type: "patient_conversation",
      sections: Object.fromEntries(
        keys.map((key, i) => [key, i === 0 && first ? [{ text: first[2], sources: [first[1]] }] : []]),
      ),
    };
  };

  it("asks for statements with sources in the one-request letter and hands the citations on", async () => {
    const model = new CitingModel(citing, 16_000);
    const result = await generateLetter({ model, ...inputs() });
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]!.schema.properties!.sections!.properties!.s1!.type).toBe("array");
    expect(result.citations).toHaveLength(1);
    expect(result.citations[0]).toMatchObject({ section: 0, sources: ["t0p0"] });
    expect(result.sections[0]!.text).toBe(result.citations[0]!.text);
  });

  it("asks for plain sections and has no citations when the engine does not cite", async () => {
    const model = new ScriptedModel(extractiveResponder(rules), 16_000);
    const result = await generateLetter({ model, ...inputs() });
    expect(model.requests[0]!.schema.properties!.sections!.properties!.s1!.type).toBe("string");
    expect(result.citations).toEqual([]);
  });
});
