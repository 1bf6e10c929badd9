import { createHash } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";

import { describe, expect, it } from "vitest";

import { TWO_SPEAKER_FIXTURE, buildJsonV2 } from "../../../tests/support/fake-speechmatics";

import { SECONDS, fakeSpeechmaticsForEachTest } from "../../../tests/support/speechmatics-helpers";

// The Speechmatics batch adapter over HTTP against tests/support/fake-speechmatics.ts (PROTOCOLS.md §1): the job
// it sends, how it reads json-v2, and the health check. Rejected jobs, retries, time-outs and aborts:
// speechmatics-failures.server.test.ts.

describe("Speechmatics batch engine", () => {
  const world = fakeSpeechmaticsForEachTest();
  const { engine, request } = world;

  describe("transcribe()", () => {
    it("uploads the WAV with the job config, polls, maps json-v2 and deletes the job", async () => {
      world.server.pollsUntilDone = 2;
      const result = await engine().transcribe(
        request({
          vocabulary: [
            { content: "Ibuprofen", sounds_like: ["ibu profen", " "] },
            { content: "  " },
            { content: "Migräne" },
          ],
        }),
      );

      expect(world.server.jobs).toHaveLength(1);
      const [job] = world.server.jobs;
      expect(job.config).toEqual({
        type: "transcription",
        transcription_config: {
          language: "de",
          operating_point: "enhanced",
          diarization: "speaker",
          additional_vocab: [{ content: "Ibuprofen", sounds_like: ["ibu profen"] }, { content: "Migräne" }],
        },
      });
      expect(job.dataFile).toMatchObject({ filename: "audio.wav", size: world.audio.length });
      expect(job.dataFile?.head).toEqual(world.audio.subarray(0, 64));
      expect(job.dataFile?.sha256).toBe(createHash("sha256").update(world.audio).digest("hex"));

      expect(world.server.requests.map((r) => r.route)).toEqual([
        "create",
        "status",
        "status",
        "status",
        "transcript",
        "delete",
      ]);
      expect(world.server.requests.every((r) => r.authorized)).toBe(true);
      expect(world.server.requests.filter((r) => r.route === "status").map((r) => r.query)).toEqual([
        "wait=0",
        "wait=0",
        "wait=0",
      ]);
      expect(world.server.requests.find((r) => r.route === "transcript")?.query).toBe("format=json-v2");
      expect(job.status).toBe("deleted");
      expect(job.deletion?.force).toBe(false);

      expect(result.engine).toBe("speechmatics");
      expect(result.language).toBe("de");
      expect(result.audioSeconds).toBe(SECONDS);
      const fixture = TWO_SPEAKER_FIXTURE.results;
      expect(result.words).toHaveLength(fixture.length);
      expect(result.words.slice(0, 4)).toEqual([
        { text: "Guten", start: fixture[0].start_time, end: fixture[0].end_time, confidence: 0.98, speaker: "S1" },
        {
          text: "Morgen",
          start: fixture[1].start_time,
          end: fixture[1].end_time,
          confidence: 0.96,
          speaker: "S1",
        },
        {
          text: ",",
          start: fixture[2].start_time,
          end: fixture[2].end_time,
          confidence: 1,
          speaker: "S1",
          punctuation: true,
          endOfSentence: false,
        },
        { text: "Frau", start: fixture[3].start_time, end: fixture[3].end_time, confidence: 0.93, speaker: "S1" },
      ]);
      expect(new Set(result.words.map((w) => w.speaker))).toEqual(new Set(["S1", "S2"]));
      expect(result.words.filter((w) => w.endOfSentence)).toHaveLength(15);
      expect(result.words.filter((w) => w.punctuation && !w.endOfSentence).map((w) => w.text)).toEqual([
        ",",
        ",",
        ",",
        ",",
      ]);
      expect(result.words.some((w) => w.text === "<script>alert(1)</script>" && !w.punctuation)).toBe(true);
      const spoken = result.words.filter((w) => !w.punctuation);
      expect(spoken.some((w) => w.confidence < 0.5)).toBe(true);
      expect(spoken.some((w) => w.confidence >= 0.5 && w.confidence <= 0.85)).toBe(true);
      expect(spoken.some((w) => w.confidence > 0.85)).toBe(true);
    });

    it("omits an empty vocabulary and sends at most 1000 entries", async () => {
      await engine().transcribe(request());
      const many = Array.from({ length: 1_200 }, (_, i) => ({ content: i % 2 ? `Wort${i}` : "" }));
      await engine().transcribe(request({ vocabulary: [{ content: "" }, ...many, ...many] }));
      const configs = world.server.jobs.map((j) => j.config.transcription_config as Record<string, unknown>);
      expect(configs[0]).not.toHaveProperty("additional_vocab");
      const sent = configs[1].additional_vocab as Array<{ content: string }>;
      expect(sent).toHaveLength(1_000);
      expect(sent.every((entry) => entry.content.length > 0)).toBe(true);
    });

    it("maps UU to no speaker, glues opening marks, keeps free marks and skips entities and unknown types", async () => {
      const base = buildJsonV2([{ speaker: "UU", text: "Er sagte „Hallo – tschüss.", confidence: 0.9 }]);
      world.server.transcript = {
        ...base,
        results: [
          ...base.results,
          {
            type: "entity",
            start_time: 9,
            end_time: 9.5,
            entity_class: "date",
            alternatives: [{ content: "heute", confidence: 1, language: "de" }],
          },
          { type: "sound_event", start_time: 10 } as unknown as (typeof base.results)[number],
        ],
      };
      const { words } = await engine().transcribe(request());
      expect(words.map((w) => [w.text, w.speaker, w.punctuation ?? false, w.endOfSentence ?? false])).toEqual([
        ["Er", null, false, false],
        ["sagte", null, false, false],
        ["„Hallo", null, false, false],
        ["–", null, false, false],
        ["tschüss", null, false, false],
        [".", null, true, true],
      ]);
      const hallo = base.results.findIndex((r) => r.alternatives[0].content === "„");
      expect(words[2].start).toBe(base.results[hallo].start_time);
    });

    it("takes the language and the duration from the answer, or else from the request", async () => {
      const base = buildJsonV2([{ speaker: "S1", text: "Hello there." }], { language: "en" });
      world.server.transcript = base;
      const silence = path.join(world.dir, "not-a-wav.bin");
      await writeFile(silence, Buffer.from("not audio"));
      const result = await engine().transcribe(request({ file: silence, language: "en", durationSeconds: 7 }));
      expect(result.language).toBe("en");
      // The fake reports 0 s for a file it cannot read as WAV; the request's own figure stands in.
      expect(result.audioSeconds).toBe(7);
      expect(world.server.jobs[0].dataFile?.size).toBe(9);
    });

    it("keeps to the region of its base URL", async () => {
      const result = await engine({ batchUrl: `${world.server.regionUrl("us1")}/` }).transcribe(request());
      expect(result.words.length).toBeGreaterThan(0);
      expect(world.server.jobs[0].region).toBe("us1");
      expect(new Set(world.server.requests.map((r) => r.region))).toEqual(new Set(["us1"]));
    });
  });

  describe("check()", () => {
    it("is healthy when the key lists jobs", async () => {
      expect(await engine().check()).toEqual({ status: "healthy" });
      expect(world.server.requests).toEqual([
        expect.objectContaining({ route: "list", query: "limit=1", authorized: true }),
      ]);
    });

    it("reports a rejected key without echoing it", async () => {
      const health = await engine({ apiKey: "secret-wrong-key" }).check();
      expect(health.status).toBe("error");
      expect(health.detail).toContain("401");
      expect(health.detail).not.toContain("secret-wrong-key");
    });

    it("reports a server that does not answer within its time-out", async () => {
      world.server.hang = {};
      const started = performance.now();
      const health = await engine().check(150);
      expect(health).toEqual({ status: "error", detail: expect.stringContaining("No answer") });
      expect(performance.now() - started).toBeLessThan(2_000);
    });

    it("says when no API key is configured", async () => {
      expect(await engine({ apiKey: "" }).check()).toEqual({
        status: "not_configured",
        detail: "Speechmatics has no API key",
      });
      expect(world.server.calls()).toBe(0);
    });
  });
});
