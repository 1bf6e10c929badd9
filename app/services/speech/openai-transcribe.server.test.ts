import { createHash } from "node:crypto";

import { describe, expect, it } from "vitest";

import { GERMAN_TRANSCRIPT, buildTranscript } from "../../../tests/support/fake-openai-transcribe";

import { WHISPER_PROMPT_MAX_CHARS, whisperPrompt } from "./vocabulary.server";

import {
  EXPECTED_TOKENS,
  texts,
  word,
  fakeOpenAiTranscribeForEachTest,
} from "../../../tests/support/openai-transcribe-helpers";
import type { VocabularyEntry } from "./types";

// The OpenAI-compatible transcription engine over HTTP against the fake server (PROTOCOLS.md §3): the form it
// sends and how it reads the answers of OpenAI, speaches, vLLM and Ollama. Which failures it retries, and the
// health check: openai-transcribe-failures.server.test.ts.

describe("OpenAI-compatible transcription engine", () => {
  const world = fakeOpenAiTranscribeForEachTest();
  const { engine, request } = world;

  describe("the request", () => {
    it("posts the WAV and the fields for verbose_json with word and segment timestamps", async () => {
      const vocabulary: VocabularyEntry[] = [
        { content: "Metoprolol" },
        { content: "Ramipril", sounds_like: ["rami prill"] },
        { content: "Dr. Weißenbach" },
      ];
      await engine().transcribe(request({ vocabulary }));

      const [sent] = world.server.transcriptionRequests();
      expect(sent.method).toBe("POST");
      expect(sent.bearer).toBe(true);
      expect(sent.fields).toEqual({
        model: ["whisper-1"],
        language: ["de"],
        response_format: ["verbose_json"],
        "timestamp_granularities[]": ["word", "segment"],
        temperature: ["0"],
        prompt: ["Metoprolol, Ramipril, Dr. Weißenbach"],
      });
      expect(sent.file).toMatchObject({ name: "audio.wav", type: "audio/wav", size: world.bytes.length });
      expect(sent.file?.head.subarray(0, 4).toString()).toBe("RIFF");
      expect(sent.file?.sha256).toBe(createHash("sha256").update(world.bytes).digest("hex"));
    });

    it("leaves out the prompt without vocabulary and the Authorization header without a key", async () => {
      world.server.apiKey = null;
      await engine({ apiKey: undefined }).transcribe(request());
      const [sent] = world.server.transcriptionRequests();
      expect(sent.bearer).toBe(false);
      expect(sent.fields.prompt).toBeUndefined();
    });

    it("bounds the prompt to Whisper's window, keeping the first terms", async () => {
      const vocabulary = Array.from({ length: 400 }, (_, i) => ({ content: `Fachbegriff${i}` }));
      await engine().transcribe(request({ vocabulary }));
      const prompt = world.server.transcriptionRequests()[0].fields.prompt[0];
      expect(prompt.startsWith("Fachbegriff0, Fachbegriff1, ")).toBe(true);
      expect(prompt).not.toContain("Fachbegriff399");
      expect(prompt.length).toBeLessThanOrEqual(WHISPER_PROMPT_MAX_CHARS);
      expect(prompt).toBe(whisperPrompt(vocabulary));
    });
  });

  describe("reading the answer", () => {
    it("maps OpenAI's verbose_json: punctuation from the text, confidence from avg_logprob, speaker S1", async () => {
      const result = await engine().transcribe(request());

      expect(result.engine).toBe("openai");
      expect(result.language).toBe("de"); // "german"
      expect(result.audioSeconds).toBe(14.2);
      expect(texts(result)).toEqual(EXPECTED_TOKENS);
      expect(result.words.every((w) => w.speaker === "S1")).toBe(true);

      const punctuation = result.words.filter((w) => w.punctuation);
      expect(punctuation.map((w) => [w.text, w.endOfSentence === true])).toEqual([
        [".", true],
        [".", true],
        [",", false],
        ["?", true],
        [",", false],
        ["!", true],
      ]);
      expect(result.words.filter((w) => !w.punctuation).every((w) => w.punctuation === undefined)).toBe(true);

      // OpenAI has no per-word probability: each word takes exp(avg_logprob) of its segment.
      expect(word(result, "Guten").confidence).toBeCloseTo(Math.exp(-0.05), 6);
      expect(word(result, "Patient").confidence).toBeCloseTo(Math.exp(-0.35), 6);
      expect(word(result, "<script>alert(1)</script>").confidence).toBeCloseTo(Math.exp(-1.2), 6);
      expect(word(result, "Grad").confidence).toBeCloseTo(Math.exp(-0.1), 6);
      const words = result.words.filter((w) => !w.punctuation);
      expect(words.some((w) => w.confidence < 0.5)).toBe(true);
      expect(words.some((w) => w.confidence >= 0.5 && w.confidence <= 0.85)).toBe(true);
      expect(words.some((w) => w.confidence > 0.85)).toBe(true);

      // Word times come from the server; a punctuation mark sits at the end of its word.
      const fixtureTag = GERMAN_TRANSCRIPT.words[1];
      expect(word(result, "Tag")).toMatchObject({ start: fixtureTag.start, end: fixtureTag.end });
      expect(result.words[2]).toMatchObject({ start: fixtureTag.end, end: fixtureTag.end });
    });

    it("uses a word's own probability and its attached punctuation (speaches)", async () => {
      world.server.dialect = "speaches";
      const result = await engine().transcribe(request());
      expect(texts(result)).toEqual(EXPECTED_TOKENS);
      expect(result.language).toBe("de");
      expect(word(result, "Guten").confidence).toBe(0.99);
      expect(word(result, "<script>alert(1)</script>").confidence).toBe(0.1);
      expect(result.words.find((w) => w.text === "?")).toMatchObject({ punctuation: true, endOfSentence: true });
    });

    it("reads vLLM's duration given as a string", async () => {
      world.server.dialect = "vllm";
      const result = await engine().transcribe(request());
      expect(result.audioSeconds).toBe(14.2);
      expect(texts(result)).toEqual(EXPECTED_TOKENS);
    });

    it("maps language names to codes and keeps the requested language for anything unknown", async () => {
      world.server.transcript = { ...GERMAN_TRANSCRIPT, language: "English" };
      expect((await engine().transcribe(request({ language: "de" }))).language).toBe("en");
      world.server.transcript = { ...GERMAN_TRANSCRIPT, language: "klingon" };
      expect((await engine().transcribe(request({ language: "de" }))).language).toBe("de");
    });

    it("derives words from segments when the server sends no word timestamps", async () => {
      world.server.transcript = { ...GERMAN_TRANSCRIPT, words: [] };
      const result = await engine().transcribe(request());
      expect(texts(result)).toEqual(EXPECTED_TOKENS);
      // "Guten Tag." spans 0–1.4 s: two words, 0.7 s each.
      expect(word(result, "Guten")).toMatchObject({ start: 0, end: 0.7 });
      expect(word(result, "Tag")).toMatchObject({ start: 0.7, end: 1.4 });
      expect(word(result, "Tag").confidence).toBeCloseTo(Math.exp(-0.05), 6);
      expect(word(result, "ins").confidence).toBeCloseTo(Math.exp(-1.2), 6);
    });

    it("spreads Ollama's bare text over the recording with an unknown confidence", async () => {
      world.server.dialect = "ollama";
      world.server.transcript = buildTranscript({
        language: "german",
        languageCode: "de",
        duration: 4,
        segments: [{ start: 0, end: 4, text: "Guten Tag. Wie geht's?", avg_logprob: -0.1 }],
      });
      const result = await engine().transcribe(request({ durationSeconds: 8 }));
      expect(texts(result)).toEqual(["Guten", "Tag", ".", "Wie", "geht's", "?"]);
      expect(result.audioSeconds).toBe(8);
      expect(result.language).toBe("de");
      expect(result.words.map((w) => w.confidence)).toEqual([0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
      expect(result.words.filter((w) => !w.punctuation).map((w) => [w.start, w.end])).toEqual([
        [0, 2],
        [2, 4],
        [4, 6],
        [6, 8],
      ]);
      expect(result.words.every((w) => w.speaker === "S1")).toBe(true);
    });

    it("returns no words for silence", async () => {
      world.server.transcript = { ...GERMAN_TRANSCRIPT, text: "", segments: [], words: [] };
      const result = await engine().transcribe(request());
      expect(result.words).toEqual([]);
    });
  });
});
