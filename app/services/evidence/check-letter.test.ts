import { describe, expect, it } from "vitest";
import { checkLetter, type Segment } from "./check-letter";

function segments(...turns: Array<[string, string]>): Segment[] {
  return turns.map(([speaker, text], i) => ({ id: `s${i}`, speaker, start: i * 10, end: i * 10 + 9, text }));
}

const consultation = segments(
  ["doctor", "Was führt Sie heute zu mir?"],
  ["patient", "Seit drei Tagen habe ich Schmerzen in der Brust, die in den linken Arm ziehen."],
  ["doctor", "Haben Sie Fieber oder Husten gehabt?"],
  ["patient", "Nein, kein Fieber und kein Husten."],
  ["doctor", "Haben Sie Allergien?"],
  ["patient", "Ja, gegen Penicillin."],
  ["doctor", "Welche Medikamente nehmen Sie?"],
  ["patient", "Ramipril 5 Milligramm morgens und Simvastatin 20 Milligramm abends."],
  ["doctor", "Der Blutdruck liegt bei 158 zu 94. Ich habe den Verdacht auf eine koronare Herzkrankheit."],
  ["doctor", "Wiedervorstellung in zwei Wochen."],
);

function check(sections: Array<{ title: string; text: string }>, turns = consultation) {
  return checkLetter({ sections, segments: turns, language: "de-DE" });
}

function sentence(result: ReturnType<typeof checkLetter>, text: string) {
  const found = result.sentences.find((s) => s.text.includes(text));
  if (!found) throw new Error(`no sentence with "${text}"`);
  return found;
}

const kinds = (s: { flags: Array<{ kind: string }> }) => s.flags.map((f) => f.kind);

describe("checkLetter", () => {
  it("links a faithful sentence to the segment that says it, without flags", () => {
    const result = check([{ title: "Medikation", text: "Ramipril 5 mg 1-0-0, Simvastatin 20 mg 0-0-1." }]);
    const s = sentence(result, "Ramipril");
    expect(s.status).toBe("supported");
    expect(s.support[0]?.segmentId).toBe("s7");
    expect(s.flags).toEqual([]);
  });

  it("flags a changed dose even though the sentence is otherwise supported", () => {
    const result = check([{ title: "Medikation", text: "Ramipril 10 mg 1-0-0." }]);
    const s = sentence(result, "Ramipril");
    expect(s.status).toBe("supported");
    expect(s.flags).toContainEqual(expect.objectContaining({ kind: "dose", text: "10" }));
  });

  it("flags a swapped side", () => {
    const result = check([
      { title: "Anamnese", text: "Brustschmerzen seit drei Tagen mit Ausstrahlung in den rechten Arm." },
    ]);
    expect(kinds(sentence(result, "Arm"))).toContain("side");
    const faithful = check([
      { title: "Anamnese", text: "Brustschmerzen seit drei Tagen mit Ausstrahlung in den linken Arm." },
    ]);
    expect(kinds(sentence(faithful, "Arm"))).not.toContain("side");
  });

  it("takes a side the speaker corrected at once for the slip it was", () => {
    const turns = segments(
      ["doctor", "She is here for left leg pain. Right leg pain, right leg pain?"],
      ["patient", "Yes, the top part of my right leg, I hit it with the bowling ball."],
      ["doctor", "You have tenderness of your right upper leg."],
    );
    const checked = (text: string) =>
      kinds(checkLetter({ sections: [{ title: "HPI", text }], segments: turns, language: "en-US" }).sentences[0]!);
    expect(checked("Left leg pain after a bowling ball hit it.")).toContain("side");
    expect(checked("Right leg pain after a bowling ball hit it.")).not.toContain("side");
  });

  it("flags a flipped negation: 'Fieber' where the answer was 'kein Fieber'", () => {
    expect(kinds(sentence(check([{ title: "Anamnese", text: "Fieber und Husten." }]), "Fieber"))).toContain("negation");
    expect(sentence(check([{ title: "Anamnese", text: "Kein Fieber, kein Husten." }]), "Fieber").flags).toEqual([]);
  });

  it("supports an abbreviation by the words it stands for", () => {
    const result = check([{ title: "Diagnose", text: "V.a. KHK." }]);
    expect(sentence(result, "KHK").status).toBe("supported");
    expect(sentence(result, "KHK").support[0]?.segmentId).toBe("s8");
  });

  it("finds a fact that spans a question and its answer", () => {
    const result = check([{ title: "Allergien", text: "Penicillin-Allergie." }]);
    const s = sentence(result, "Penicillin");
    expect(s.status).toBe("supported");
    expect(s.support.map((x) => x.segmentId)).toEqual(expect.arrayContaining(["s4", "s5"]));
  });

  it("marks a sentence the consultation does not carry, and a drug never mentioned", () => {
    const result = check([{ title: "Diagnose", text: "Bekanntes Vorhofflimmern. Apixaban 5 mg 1-0-1." }]);
    expect(sentence(result, "Vorhofflimmern").status).toBe("unsupported");
    expect(kinds(sentence(result, "Apixaban"))).toContain("unsupported");
    expect(result.counts.unsupported).toBeGreaterThanOrEqual(1);
  });

  it("does not support a statement by its frame alone: 'History of …', 'Bekannte Vorerkrankung: …' with a subject never said", () => {
    const history = segments(["doctor", "Any past medical history I should know about?"], ["patient", "No, none."]);
    const english = checkLetter({
      sections: [{ title: "PMH", text: "History of asthma." }],
      segments: history,
      language: "en-US",
    });
    expect(english.sentences[0]?.status).toBe("unsupported");
    const german = check([{ title: "Anamnese", text: "Bekannte Vorerkrankung: Asthma." }]);
    expect(sentence(german, "Asthma").status).toBe("unsupported");
  });

  it("treats 'Keine Informationen gefunden' as no claim", () => {
    const result = check([{ title: "Familienanamnese", text: "Keine Informationen gefunden" }]);
    expect(result.sentences[0]?.status).toBe("neutral");
    expect(result.sentences[0]?.flags).toEqual([]);
  });

  it("lists an omitted medication with its segment and the section it belongs in", () => {
    const result = check([
      { title: "Anamnese", text: "Brustschmerzen seit drei Tagen." },
      { title: "Medikation", text: "Ramipril 5 mg 1-0-0." },
      { title: "Procedere", text: "Wiedervorstellung in zwei Wochen." },
    ]);
    const simvastatin = result.omissions.find((o) => o.kind === "medication" && o.text.includes("Simvastatin"));
    expect(simvastatin).toMatchObject({ segmentIds: ["s7"], section: "Medikation" });
    expect(result.omissions.some((o) => o.text.includes("Ramipril"))).toBe(false);
    expect(result.omissions.some((o) => o.kind === "plan")).toBe(false);
    expect(result.omissions).toContainEqual(expect.objectContaining({ kind: "value", terms: ["158", "94"] }));
  });

  it("puts a missing medication under 'Medikation' rather than 'Therapie', and an empty one first", () => {
    const withTherapy = (medication: string) =>
      check([
        { title: "Therapie", text: "Ramipril 5 mg 1-0-0." },
        { title: "Medikation", text: medication },
        { title: "Dauermedikation", text: "Keine Informationen gefunden" },
      ]).omissions.find((o) => o.text.includes("Simvastatin"))?.section;
    expect(withTherapy("Ramipril 5 mg morgens.")).toBe("Dauermedikation");
    expect(withTherapy("Keine Informationen gefunden")).toBe("Medikation");
  });

  it("lists an amount named by its measure as a value, not as a drug ('bleiben 120 Milliliter Restharn')", () => {
    const result = check(
      [{ title: "Befund", text: "Prostata vergrößert." }],
      segments(
        [
          "doctor",
          "Im Ultraschall ist die Prostata vergrößert. Nach dem Wasserlassen bleiben 120 Milliliter Restharn.",
        ],
        ["doctor", "Der PSA-Wert lag bei 2,1 Nanogramm pro Milliliter."],
      ),
    );
    expect(result.omissions.filter((o) => o.kind === "medication")).toEqual([]);
    expect(result.omissions).toContainEqual(expect.objectContaining({ kind: "value", terms: ["120"] }));
    expect(result.omissions).toContainEqual(expect.objectContaining({ kind: "value", terms: ["2.1"] }));
  });

  it("lists no plan where none was made: 'back pain', 'come with me', a patient's question", () => {
    const result = checkLetter({
      sections: [{ title: "Plan", text: "Ibuprofen as needed." }],
      segments: segments(
        ["patient", "My back pain started after I moved a refrigerator."],
        ["doctor", "Okay, come with me, the nurse will come in soon."],
        ["patient", "When should I come back?"],
        ["doctor", "Take ibuprofen as needed."],
      ),
      language: "en-US",
    });
    expect(result.omissions.filter((o) => o.kind === "plan")).toEqual([]);
    const german = check(
      [{ title: "Procedere", text: "Keine Informationen gefunden" }],
      segments(["patient", "Wann soll ich zur Kontrolle kommen?"]),
    );
    expect(german.omissions.filter((o) => o.kind === "plan")).toEqual([]);
  });

  it("does not list the substance of an allergy as a medication the letter left out", () => {
    const result = check([
      { title: "Allergien", text: "Keine Informationen gefunden" },
      { title: "Medikation", text: "Ramipril 5 mg 1-0-0, Simvastatin 20 mg 0-0-1." },
    ]);
    expect(result.omissions).toContainEqual(expect.objectContaining({ kind: "allergy", segmentIds: ["s5"] }));
    expect(result.omissions.filter((o) => o.text.includes("Penicillin"))).toHaveLength(1);
  });

  it("names a section left empty while the consultation has facts of its kind", () => {
    const result = check([
      { title: "Medikation", text: "Keine Informationen gefunden" },
      { title: "Allergien", text: "Penicillin." },
    ]);
    expect(result.emptySections).toContainEqual(expect.objectContaining({ section: "Medikation", kind: "medication" }));
    // Not when another section of that kind carries it: an empty "Therapie" beside a filled "Medikation".
    const beside = check([
      { title: "Therapie", text: "Keine Informationen gefunden" },
      { title: "Medikation", text: "Ramipril 5 mg 1-0-0, Simvastatin 20 mg 0-0-1." },
    ]);
    expect(beside.emptySections.filter((e) => e.kind === "medication")).toEqual([]);
  });

  it("checks English the same way", () => {
    const english = segments(
      ["doctor", "any chest pain or shortness of breath?"],
      ["patient", "no, nothing like that."],
      ["doctor", "your right knee has a small effusion. i'll increase your lisinopril to 40 milligrams a day."],
    );
    const result = checkLetter({
      sections: [
        { title: "HPI", text: "The patient denies chest pain or dyspnea." },
        { title: "EXAM", text: "Left knee effusion." },
        { title: "PLAN", text: "Increase lisinopril to 20 mg daily." },
      ],
      segments: english,
      language: "en-GB",
    });
    expect(sentence(result, "denies").flags).toEqual([]);
    expect(kinds(sentence(result, "knee"))).toContain("side");
    expect(kinds(sentence(result, "lisinopril"))).toContain("dose");
  });

  it("reads headings, labels and conditions as a letter means them", () => {
    const result = check([
      { title: "Befund", text: "Kardiovaskulär\nBlutdruck: 158/94." },
      { title: "Procedere", text: "Bei Fieber sofort Wiedervorstellung." },
    ]);
    expect(sentence(result, "Kardiovaskulär").status).toBe("neutral");
    expect(sentence(result, "158").flags).toEqual([]);
    // an instruction for a case is not the claim that the patient has fever
    expect(kinds(sentence(result, "Bei Fieber"))).not.toContain("negation");
  });

  it("is deterministic", () => {
    const sections = [{ title: "Anamnese", text: "Brustschmerzen seit drei Tagen, kein Fieber." }];
    expect(check(sections)).toEqual(check(sections));
  });
});

describe("checkLetter: the model's citations (issue 24)", () => {
  function cited(text: string, sources: string[]) {
    return checkLetter({
      sections: [{ title: "Anamnese", text }],
      segments: consultation,
      language: "de-DE",
      citedFor: (s) => (s.text === text ? sources : null),
    }).sentences[0]!;
  }

  it("confirms a source that says the sentence, also when the fact spans a question and its answer", () => {
    const right = cited("Ramipril 5 mg morgens.", ["s7"]);
    expect(right.citation).toEqual({ holding: ["s7"], notHolding: [], unknown: [] });
    expect(kinds(right)).toEqual([]);
    const answer = cited("Keine Allergie gegen Penicillin.", ["s5"]);
    expect(answer.citation?.holding).toEqual(["s5"]);
  });

  it("flags a sentence whose named sources do not hold it, even when the checker finds it elsewhere", () => {
    const wrong = cited("Kein Fieber und kein Husten.", ["s0"]);
    expect(wrong.status).toBe("supported");
    expect(wrong.citation).toEqual({ holding: [], notHolding: ["s0"], unknown: [] });
    expect(kinds(wrong)).toEqual(["citation"]);
  });

  it("flags a source the consultation does not have, and keeps one that holds beside it", () => {
    const madeUp = cited("Ramipril 5 mg morgens.", ["s7", "s99"]);
    expect(madeUp.citation).toEqual({ holding: ["s7"], notHolding: [], unknown: ["s99"] });
    expect(kinds(madeUp)).toEqual(["citation"]);
  });

  it("has no citation where the model named none, and counts citation flags apart from strict ones", () => {
    const none = cited("Ramipril 5 mg morgens.", []);
    expect(none.citation).toBeNull();
    const result = checkLetter({
      sections: [{ title: "Anamnese", text: "Kein Fieber und kein Husten." }],
      segments: consultation,
      citedFor: () => ["s0"],
    });
    expect(result.counts.flagged).toBe(0);
  });
});
