import path from "node:path";
import { writeFile } from "node:fs/promises";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { makeTempDir, removeTempDir } from "../../../tests/support/audio-fixtures";
import {
  makeConsultationWav,
  makeDictationWav,
  makeSilenceWav,
  type Role,
  type ScriptedWav,
  type ScriptTurn,
} from "../../../tests/support/consultation-audio";
import { segmentationModelBytes, writeSpeakerModels } from "../../../tests/support/speaker-models";

import { createLocalSpeechEngine, diarizeFile, type LocalSpeechConfig } from "./local-engine.server";
import { SILERO, writeRandomWhisperModel } from "../../../tests/support/local-engine-helpers";
import { assignSpeakers, type SpeakerTurn } from "./local-speakers.server";
import { buildTranscript } from "./transcript-format";
import { SpeechEngineError, type EngineWord } from "./types";

// The local engine's speaker separation (ADR 0011) through sherpa-onnx's real offline diarization, on speaker
// models the test builds (tests/support/speaker-models.ts: no real pyannote or 3D-Speaker model can be
// downloaded here) and on espeak-ng speech: a low-pitched doctor and a high-pitched patient taking turns
// (tests/support/consultation-audio.ts). No speech recogniser with weights exists here either, so words are
// placed at the script's times and laid over the turns the engine's own diarization step returns; one test
// runs the whole engine with a whisper model of random weights, whose meaningless words still have times.

const SLOW = 120_000;
/** How far a turn may start or end from the script, in seconds. */
const TOLERANCE = 0.25;

let dir: string;
let consultation: ScriptedWav;
let dictation: ScriptedWav;
let silence: string;
let config: LocalSpeechConfig;

beforeAll(async () => {
  dir = await makeTempDir("skribent-diarization-");
  const models = await writeSpeakerModels(dir);
  [consultation, dictation, silence] = await Promise.all([
    makeConsultationWav(dir),
    makeDictationWav(dir),
    makeSilenceWav(dir, 5),
  ]);
  const whisperModel = path.join(dir, "random-whisper.bin");
  await writeRandomWhisperModel(whisperModel);
  config = {
    whisperModel,
    vadModel: SILERO,
    segmentationModel: models.segmentation,
    embeddingModel: models.embedding,
    threads: 2,
  };
}, SLOW);

afterAll(async () => {
  if (dir) await removeTempDir(dir);
});

/** Turns of one speaker that follow each other (a pause inside a turn) as one. */
function merged(turns: SpeakerTurn[]): SpeakerTurn[] {
  const out: SpeakerTurn[] = [];
  for (const turn of turns) {
    const last = out[out.length - 1];
    if (last && last.speaker === turn.speaker) last.end = Math.max(last.end, turn.end);
    else out.push({ ...turn });
  }
  return out;
}

/** The script's words, spread evenly over each turn, with their punctuation as words of their own. */
function scriptedWords(turns: ScriptTurn[]): Array<EngineWord & { role: Role }> {
  return turns.flatMap((turn) => {
    const tokens = turn.text.split(/\s+/);
    const step = (turn.end - turn.start) / tokens.length;
    return tokens.flatMap((token, i) => {
      const [, text, mark] = /^(.*?)([.,?!:]?)$/.exec(token)!;
      const start = turn.start + i * step;
      const end = turn.start + (i + 1) * step;
      const word = { text, start, end, confidence: 0.9, speaker: null, role: turn.role };
      if (!mark) return [word];
      return [word, { ...word, text: mark, start: end, punctuation: true, endOfSentence: mark !== "," }];
    });
  });
}

describe("speaker separation on a consultation", () => {
  it(
    "finds two speakers whose turns start and end where the script has the doctor and the patient speak",
    async () => {
      const turns = merged(await diarizeFile(config, consultation.file));

      expect(new Set(turns.map((t) => t.speaker)).size).toBe(2);
      expect(turns).toHaveLength(consultation.turns.length);
      const speakerOf = new Map<Role, number>();
      turns.forEach((turn, i) => {
        const scripted = consultation.turns[i];
        if (!speakerOf.has(scripted.role)) speakerOf.set(scripted.role, turn.speaker);
        expect(turn.speaker).toBe(speakerOf.get(scripted.role));
        expect(Math.abs(turn.start - scripted.start)).toBeLessThan(TOLERANCE);
        expect(Math.abs(turn.end - scripted.end)).toBeLessThan(TOLERANCE);
      });
      expect(speakerOf.get("doctor")).not.toBe(speakerOf.get("patient"));
    },
    SLOW,
  );

  it(
    "names the doctor S1 and the patient S2 by first appearance, word by word and in speakers_info",
    async () => {
      const words = scriptedWords(consultation.turns);
      const labelled = assignSpeakers(words, await diarizeFile(config, consultation.file));

      const expected = { doctor: "S1", patient: "S2" };
      expect(labelled.map((w) => w.speaker)).toEqual(words.map((w) => expected[w.role]));

      const transcript = buildTranscript({
        engine: "local",
        language: "de",
        audioSeconds: consultation.seconds,
        words: labelled,
      });
      expect(transcript.turns.map((t) => t.speaker)).toEqual(["S1", "S2", "S1", "S2"]);
      const [doctor1, patient1, doctor2, patient2] = consultation.turns;
      const span = (t: ScriptTurn) => t.end - t.start;
      expect(Object.keys(transcript.speakers_info)).toEqual(["S1", "S2"]);
      const { S1, S2 } = transcript.speakers_info;
      expect(Object.keys(S1).sort()).toEqual(["first_appearance", "total_duration", "total_segments"]);
      expect(S1.total_segments).toBe(2);
      expect(S2.total_segments).toBe(2);
      expect(S1.first_appearance).toBeCloseTo(doctor1.start, 2);
      expect(S2.first_appearance).toBeCloseTo(patient1.start, 2);
      expect(S1.total_duration).toBeCloseTo(span(doctor1) + span(doctor2), 2);
      expect(S2.total_duration).toBeCloseTo(span(patient1) + span(patient2), 2);
    },
    SLOW,
  );

  it(
    "is what transcribe() uses: its words carry the speakers of this diarization (whole engine, random whisper)",
    async () => {
      const engine = createLocalSpeechEngine(config);
      try {
        const result = await engine.transcribe({
          file: consultation.file,
          language: "de",
          durationSeconds: consultation.seconds,
          vocabulary: [],
        });
        // Random weights give meaningless words (here one long one), but with times: enough to see the
        // engine label them from the turns diarizeFile finds rather than leave every word "S1".
        expect(result.words.length).toBeGreaterThan(0);
        const turns = await diarizeFile(config, consultation.file);
        const unlabelled = result.words.map((w) => ({ ...w, speaker: null }));
        expect(result.words).toEqual(assignSpeakers(unlabelled, turns));
      } finally {
        await engine.unload();
      }
    },
    SLOW,
  );
});

describe("one voice, or none", () => {
  it(
    "finds one speaker in a dictation, from its first word to its last",
    async () => {
      const turns = await diarizeFile(config, dictation.file);

      expect(new Set(turns.map((t) => t.speaker)).size).toBe(1);
      const [scripted] = dictation.turns;
      expect(Math.abs(turns[0].start - scripted.start)).toBeLessThan(TOLERANCE);
      expect(Math.abs(turns[turns.length - 1].end - scripted.end)).toBeLessThan(TOLERANCE);
      const labelled = assignSpeakers(scriptedWords(dictation.turns), turns);
      expect(new Set(labelled.map((w) => w.speaker))).toEqual(new Set(["S1"]));
    },
    SLOW,
  );

  it(
    "finds no turn in silence, and words then all belong to S1",
    async () => {
      const turns = await diarizeFile(config, silence);

      expect(turns).toEqual([]);
      const labelled = assignSpeakers(scriptedWords(consultation.turns), turns);
      expect(new Set(labelled.map((w) => w.speaker))).toEqual(new Set(["S1"]));
    },
    SLOW,
  );
});

describe("speaker models that cannot be used", () => {
  async function failure(overrides: Partial<LocalSpeechConfig>): Promise<SpeechEngineError> {
    const error = await diarizeFile({ ...config, ...overrides }, consultation.file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SpeechEngineError);
    expect((error as SpeechEngineError).kind).toBe("not_configured");
    expect((error as SpeechEngineError).options.userMessageKey).toBe("transcriptions:errors.modelsMissing");
    return error as SpeechEngineError;
  }

  it(
    "names a missing file and its variable",
    async () => {
      const missing = path.join(dir, "nowhere.onnx");
      const error = await failure({ embeddingModel: missing });
      expect(error.message).toContain(`speaker embedding model ${missing} (LOCAL_SPEAKER_EMBEDDING_MODEL) is missing`);
    },
    SLOW,
  );

  it(
    "names the segmentation model when it is another kind of ONNX model (the process survives)",
    async () => {
      const error = await failure({ segmentationModel: SILERO });
      expect(error.message).toContain(
        `speaker segmentation model ${SILERO} (LOCAL_SEGMENTATION_MODEL) cannot be loaded`,
      );
    },
    SLOW,
  );

  it(
    "names the embedding model when it is a segmentation model",
    async () => {
      const error = await failure({ embeddingModel: config.segmentationModel });
      expect(error.message).toContain(
        `speaker embedding model ${config.segmentationModel} (LOCAL_SPEAKER_EMBEDDING_MODEL) cannot be loaded`,
      );
    },
    SLOW,
  );

  it(
    "names the segmentation model when it expects another sample rate",
    async () => {
      const file = path.join(dir, "8khz.onnx");
      await writeFile(file, segmentationModelBytes({ sampleRate: 8000 }));
      const error = await failure({ segmentationModel: file });
      expect(error.message).toContain(`speaker segmentation model ${file} (LOCAL_SEGMENTATION_MODEL)`);
      expect(error.message).toContain("8000 Hz");
    },
    SLOW,
  );
});
