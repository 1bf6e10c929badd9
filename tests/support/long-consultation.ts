import { buildTranscript, type TranscriptDocument } from "~/services/speech/transcript-format";
import type { EngineWord } from "~/services/speech/types";

// A deterministic 60-minute consultation (two speakers, German, ≥ 9,000 words) for the long-consultation
// tests. Most of it is everyday talk that no extraction rule picks up; a few clinical facts sit at known
// places, and one of them — the anticoagulant started at the end — is stated only in the last tenth, so a
// letter that contains it must have read the end of the conversation.

export const FACTS = {
  /** Only in the last tenth of the consultation. */
  late: "Ab heute nehmen Sie bitte zweimal täglich Apixaban 5 mg.",
  lateDrug: "Apixaban 5 mg",
  /** In the first tenth. */
  early: "Ich nehme seit Jahren morgens Ramipril 5 mg.",
  /** Around the middle. */
  middle: "Gegen Penicillin habe ich eine Allergie, da bekomme ich Ausschlag.",
} as const;

const DOCTOR = [
  "Wie geht es Ihnen heute?",
  "Erzählen Sie mir bitte mehr darüber.",
  "Seit wann haben Sie diese Beschwerden?",
  "Haben Sie das schon einmal so gehabt?",
  "Wie ist es mit dem Schlaf in letzter Zeit?",
  "Wie sieht es mit Bewegung im Alltag aus?",
  "Ich höre jetzt einmal Herz und Lunge ab.",
  "Bitte atmen Sie tief ein und wieder aus.",
  "Das klingt soweit unauffällig.",
  "Wir schauen uns die Laborwerte gleich gemeinsam an.",
  "Haben Sie dazu noch Fragen?",
  "Das ist gut zu wissen.",
  "Wie ist die Belastbarkeit beim Treppensteigen?",
  "Gibt es Veränderungen beim Gewicht?",
  "Wir besprechen gleich das weitere Vorgehen.",
  "Können Sie mir das genauer beschreiben?",
];

const PATIENT = [
  "Es geht mir eigentlich ganz gut.",
  "Manchmal bin ich nach dem Einkaufen sehr erschöpft.",
  "Nachts wache ich öfter auf und kann dann schlecht wieder einschlafen.",
  "Beim Treppensteigen muss ich zwischendurch stehen bleiben.",
  "Meine Tochter hat mich heute hergebracht.",
  "Das Wetter macht mir in letzter Zeit zu schaffen.",
  "Ich gehe jeden Tag eine halbe Stunde spazieren.",
  "Das Herzstolpern kommt vor allem abends auf dem Sofa.",
  "Ich trinke morgens zwei Tassen Kaffee.",
  "Früher war ich viel im Garten unterwegs.",
  "Ich weiß nicht genau, seit wann das so ist.",
  "Mein Hausarzt hat mich zu Ihnen überwiesen.",
  "Die Beine sind abends manchmal etwas geschwollen.",
  "Am Wochenende war ich bei meiner Schwester zu Besuch.",
];

/** mulberry32: a small seeded generator, so every run builds the same consultation. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const wordCount = (sentence: string) => sentence.split(" ").length;

export type ConsultationOptions = { targetWords?: number; seconds?: number; seed?: number };

/** The turns as [speaker, sentences] before timing: doctor (S1) and patient (S2) alternate. */
export function consultationTurns({ targetWords = 9_200, seed = 7 }: ConsultationOptions = {}): Array<
  [string, string[]]
> {
  const next = random(seed);
  const pick = (list: string[]) => list[Math.floor(next() * list.length)]!;
  const turns: Array<[string, string[]]> = [];
  let words = 0;
  let placedEarly = false;
  let placedMiddle = false;
  let placedLate = false;
  for (let t = 0; words < targetWords; t++) {
    const doctor = t % 2 === 0;
    const sentences: string[] = [];
    const size = 2 + Math.floor(next() * 5);
    for (let i = 0; i < size; i++) sentences.push(pick(doctor ? DOCTOR : PATIENT));
    // Facts go where the word count says: early in the first tenth, middle near half, late after 94%.
    if (!doctor && !placedEarly && words > targetWords * 0.03) {
      sentences.splice(1, 0, FACTS.early);
      placedEarly = true;
    }
    if (!doctor && !placedMiddle && words > targetWords * 0.5) {
      sentences.splice(1, 0, FACTS.middle);
      placedMiddle = true;
    }
    if (doctor && !placedLate && words > targetWords * 0.94) {
      sentences.push(FACTS.late);
      placedLate = true;
    }
    turns.push([doctor ? "S1" : "S2", sentences]);
    words += sentences.reduce((sum, s) => sum + wordCount(s), 0);
  }
  if (!placedLate) throw new Error("long consultation: the late fact was not placed");
  return turns;
}

/** The consultation as the transcription engines deliver it, normalised by the production code. */
export function longConsultation(options: ConsultationOptions = {}): TranscriptDocument {
  const seconds = options.seconds ?? 3_600;
  const turns = consultationTurns(options);
  const total = turns.reduce((sum, [, sentences]) => sum + sentences.reduce((n, s) => n + wordCount(s), 0), 0);
  const step = seconds / total;
  const words: EngineWord[] = [];
  let t = 0;
  for (const [speaker, sentences] of turns)
    for (const sentence of sentences) {
      const parts = sentence.split(" ");
      parts.forEach((part, i) => {
        const last = i === parts.length - 1;
        const match = last ? /^(.*?)([.?!,]?)$/.exec(part)! : null;
        const text = match ? match[1]! : part.replace(/,$/, "");
        words.push({ text, start: t, end: t + step * 0.8, confidence: 0.95, speaker });
        if (!last && part.endsWith(","))
          words.push({ text: ",", start: t, end: t, confidence: 1, speaker, punctuation: true });
        if (match?.[2])
          words.push({
            text: match[2],
            start: t,
            end: t,
            confidence: 1,
            speaker,
            punctuation: true,
            endOfSentence: true,
          });
        t += step;
      });
    }
  return buildTranscript(
    { engine: "local", language: "de", audioSeconds: seconds, words },
    new Date("2026-11-21T09:00:00Z"),
  );
}

/** A short consultation with the early and late facts, for the one-request path. */
export function shortConsultation(extra: string[] = []): TranscriptDocument {
  return fromTurns([
    ["S1", ["Guten Morgen, was führt Sie zu mir?"]],
    ["S2", ["Das Herzstolpern kommt vor allem abends auf dem Sofa.", FACTS.early, ...extra]],
    ["S1", ["Wir machen ein EKG.", FACTS.late]],
  ]);
}

/** A transcript from turns of sentences, with simple timing (tests of prompts and guards). */
export function fromTurns(turns: Array<[string, string[]]>, language = "de"): TranscriptDocument {
  const words: EngineWord[] = [];
  let t = 0;
  for (const [speaker, sentences] of turns)
    for (const sentence of sentences) {
      // Keep the sentence's text as one word so that unusual characters survive untouched.
      const match = /^(.*?)([.?!]?)$/s.exec(sentence)!;
      words.push({ text: match[1]!, start: t, end: t + 1, confidence: 0.95, speaker });
      if (match[2])
        words.push({
          text: match[2],
          start: t + 1,
          end: t + 1,
          confidence: 1,
          speaker,
          punctuation: true,
          endOfSentence: true,
        });
      t += 1;
    }
  return buildTranscript({ engine: "local", language, audioSeconds: t, words }, new Date("2026-11-21T09:00:00Z"));
}
