import { describe, expect, it } from "vitest";
import { LlmError } from "~/services/llm/types";
import { FACTS, fromTurns, longConsultation } from "../../../tests/support/long-consultation";
import {
  ScriptedModel,
  extractiveResponder,
  parseNotesBlock,
  type Responder,
} from "../../../tests/support/scripted-model";
import { textOutsideBlocks } from "./data-blocks";
import {
  ALLERGIEN,
  MEDIKATION,
  blocksOf,
  failure,
  inputs,
  rules,
  within,
} from "../../../tests/support/letter-generate-helpers";
import { generateLetter } from "./generate.server";
import type { ContextItem } from "./letter-prompt";

describe("the long-consultation fixture", () => {
  it("is a 60-minute, two-speaker consultation of at least 9,000 words with the late fact only in its last tenth", () => {
    const transcript = longConsultation();
    expect(transcript.word_count).toBeGreaterThanOrEqual(9_000);
    expect(transcript.audio_seconds).toBe(3_600);
    expect(Object.keys(transcript.speakers_info).sort()).toEqual(["S1", "S2"]);
    const words = transcript.turns.flatMap((t) => t.paragraphs.flat()).filter((w) => !w.punctuation);
    const first = words.findIndex((w) => w.text === "Apixaban");
    expect(first).toBeGreaterThan(words.length * 0.9);
    expect(words.filter((w) => w.text === "Apixaban")).toHaveLength(1);
    expect(words[first]!.start).toBeGreaterThan(3_600 * 0.9);
  });
});

describe("generateLetter: a 60-minute consultation in a 4,000-token window", () => {
  it("reads it in parts that all fit, and the fact from the last tenth reaches the letter", async () => {
    const model = new ScriptedModel(extractiveResponder(rules), 4_000);
    const transcript = longConsultation();
    const result = await generateLetter({ model, ...inputs({ transcript }) });

    expect(model.oversized).toEqual([]);
    expect(model.requests.length).toBeGreaterThan(1);
    expect(model.requests.every(within(model))).toBe(true);
    expect(result.strategy).toBe("map_reduce");
    expect(result.requests).toBe(model.requests.length);

    const notes = model.requests.filter((r) => r.schemaName === "arztbrief_notes");
    const final = model.requests.at(-1)!;
    expect(notes.length).toBeGreaterThan(3);
    expect(final.schemaName).toBe("arztbrief");
    // The parts cover the whole transcript, in order, each in its own numbered block.
    const parts = notes
      .map((r) => blocksOf(r))
      .map((blocks) => {
        expect(blocks).toHaveLength(1);
        return blocks[0]!;
      });
    expect(parts.map((p) => p.attributes.part)).toEqual(parts.map((_, i) => `${i + 1}/${parts.length}`));
    const strip = (text: string) => text.replace(/Sprecher \d+: /g, "").replace(/\s+/g, " ");
    expect(strip(parts.map((p) => p.body).join(" "))).toBe(
      strip(transcript.formatted_transcript.replace(/Sprecher \d+:\n/g, "")),
    );
    // The late fact was only in the last part, travelled as a note, and is in the letter.
    expect(parts.filter((p) => p.body.includes(FACTS.lateDrug))).toEqual([parts.at(-1)]);
    const finalNotes = blocksOf(final).find((b) => b.kind === "NOTES")!;
    expect(finalNotes.body).toContain(FACTS.late);
    expect(final.messages.some((m) => textOutsideBlocks(m.content).includes(FACTS.lateDrug))).toBe(false);
    expect(blocksOf(final).some((b) => b.kind === "TRANSCRIPT")).toBe(false);
    expect(result.sections[MEDIKATION]!.text).toContain(FACTS.lateDrug);
    expect(result.sections[MEDIKATION]!.text).toContain("Ramipril 5 mg");
    expect(result.sections[ALLERGIEN]!.text).toContain("Penicillin");
    expect(result.sections[4]!.text).toBe("Keine Informationen gefunden");
    expect(result.usage.promptTokens).toBe(model.requests.reduce((sum, r) => sum + r.promptTokens, 0));
  });

  it("condenses the notes when they do not fit the final request, and everything still fits", async () => {
    // A verbose extractor: besides the facts the rules find, it fills every section with long, distinct notes —
    // far more than the final request can hold. Condensing keeps the rule-matching facts first, as a faithful
    // model keeps clinical facts over chatter.
    const base = extractiveResponder(rules);
    const isFact = (note: string) => rules.some((r) => r.pattern.test(note));
    let part = 0;
    const verbose: Responder = (request, index) => {
      const value = base(request, index) as { notes: Record<string, string[]> };
      const maxItems = request.schema.properties!.notes?.properties!.s1!.maxItems ?? 0;
      if (request.schemaName === "arztbrief_notes") {
        part++;
        for (const [key, list] of Object.entries(value.notes))
          for (let k = list.length; k < maxItems; k++)
            list.push(
              `Gesprächsnotiz ${part}.${key}.${k}: ${"Patientin schildert ausführlich den Alltag. ".repeat(4)}`,
            );
      }
      if (request.schemaName === "arztbrief_notes_reduce") {
        const all = parseNotesBlock(blocksOf(request).find((b) => b.kind === "NOTES")!.body, 5);
        value.notes = Object.fromEntries(
          all.map((list, i) => [
            `s${i + 1}`,
            [...list.filter(isFact), ...list.filter((n) => !isFact(n))].slice(0, maxItems),
          ]),
        );
      }
      return value;
    };
    const model = new ScriptedModel(verbose, 4_000);
    const result = await generateLetter({ model, ...inputs({ transcript: longConsultation() }) });
    expect(model.oversized).toEqual([]);
    expect(model.requests.every(within(model))).toBe(true);
    const reduce = model.requests.filter((r) => r.schemaName === "arztbrief_notes_reduce");
    expect(reduce.length).toBeGreaterThan(0);
    expect(model.requests.at(-1)!.schemaName).toBe("arztbrief");
    expect(result.sections[MEDIKATION]!.text).toContain(FACTS.lateDrug);
    expect(result.sections[ALLERGIEN]!.text).toContain("Penicillin");
  });

  it("reads a context document too large for the final request in parts, and keeps small ones verbatim", async () => {
    const report = [
      ...Array.from({ length: 300 }, (_, i) => `Zeile ${i}: Laborwert im Normbereich, keine Auffälligkeiten.`),
      "Bekannte Allergie gegen Kontrastmittel.",
    ].join("\n");
    const context: ContextItem[] = [
      { kind: "text", text: "Überweisung wegen Herzstolpern." },
      { kind: "pdf", text: report, sourceName: "Labor.pdf" },
    ];
    const model = new ScriptedModel(extractiveResponder(rules), 4_000);
    const result = await generateLetter({ model, ...inputs({ transcript: longConsultation(), context }) });
    expect(model.requests.every(within(model))).toBe(true);
    const pdfParts = model.requests.filter((r) =>
      blocksOf(r).some((b) => b.kind === "CONTEXT" && b.attributes.kind === "pdf"),
    );
    expect(pdfParts.length).toBeGreaterThan(1);
    expect(pdfParts.every((r) => r.schemaName === "arztbrief_notes")).toBe(true);
    const final = model.requests.at(-1)!;
    expect(blocksOf(final).find((b) => b.kind === "CONTEXT")?.body).toBe("Überweisung wegen Herzstolpern.");
    expect(result.sections[ALLERGIEN]!.text).toContain("(PDF Labor.pdf) Bekannte Allergie gegen Kontrastmittel.");
    expect(result.sections[ALLERGIEN]!.text).toContain("Penicillin");
  });

  it("splits a transcript without any punctuation at word boundaries", async () => {
    const words = Array.from({ length: 6_000 }, (_, i) => (i === 5_900 ? "Apixaban 5 mg" : `wort${i % 50}`)).join(" ");
    const transcript = fromTurns([["S1", [words]]]);
    const model = new ScriptedModel(extractiveResponder(rules), 4_000);
    const result = await generateLetter({ model, ...inputs({ transcript }) });
    expect(model.requests.every(within(model))).toBe(true);
    expect(model.requests.length).toBeGreaterThan(2);
    expect(result.sections[MEDIKATION]!.text).toContain("Apixaban 5 mg");
  });

  it("refuses a context window too small for the template without sending anything", async () => {
    const model = new ScriptedModel(extractiveResponder(rules), 1_200);
    const error = await failure(generateLetter({ model, ...inputs({ transcript: longConsultation() }) }));
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).kind).toBe("permanent");
    expect(model.requests).toEqual([]);
  });
});
