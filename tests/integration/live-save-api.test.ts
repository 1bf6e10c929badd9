import { describe, expect, it } from "vitest";
import { loader as transcriptLoader } from "~/routes/api.transcript_v2.$";
import { getDb } from "~/models/db.server";
import { settleMetering } from "~/services/admin/usage.server";
import { apiClientFor } from "../support/api-client";
import { livePayload, recordingOf, saveLive, segment, stop } from "../support/live-save";
import { callRoute, setupTestApp } from "../setup/app";

// SPEC §7 save-realtime-transcript as an external client calls it (issue 7): bearer token, JSON, exactly the
// answer's fields; the transcript is the server's own, stored and served like a batch transcript. The audio
// side (server copy, browser copy, letters) is in live-save-audio.test.ts.
const app = setupTestApp({ provider: true });

function as(accountId: string) {
  return apiClientFor(app.issuer, accountId);
}

const liveAudioRows = () =>
  getDb()
    .selectFrom("usage_events")
    .select(["units"])
    .where("endpoint", "=", "speechmatics-jwt")
    .where("unit", "=", "audio_second")
    .orderBy("id")
    .execute();

describe("POST /api/save-realtime-transcript", () => {
  it("answers exactly transcript_key and audio_key, and the transcript opens like a batch one", async () => {
    const anna = await as("anna-berger");
    const response = await saveLive(anna, livePayload());
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(Object.keys(body).sort()).toEqual(["audio_key", "transcript_key"]);
    expect(body.audio_key).toMatch(/^audio\/[0-9a-f-]{36}\/\d{8}-\d{6}-[0-9a-f-]{36}\.webm$/);
    expect(body.transcript_key).toMatch(/^transcripts\/[0-9a-f-]{36}\/\d{8}-\d{6}-[0-9a-f-]{36}\.json$/);

    const short = body.transcript_key.replace(/^transcripts\//, "");
    const opened = await callRoute(transcriptLoader, anna(`/api/transcript_v2/${short}`), { "*": short });
    expect(opened.status).toBe(200);
    const transcript = await opened.json();
    expect(transcript.raw_transcript).toBe("Guten Tag. Mir schwindelt.");
    expect(transcript.formatted_transcript).toBe("Sprecher 1:\nGuten Tag.\n\nSprecher 2:\nMir schwindelt.");
    // The client's speaker_stats are not trusted: the server counts its own.
    expect(transcript.speakers_info).toEqual({
      S1: { total_segments: 1, total_duration: 0.9, first_appearance: 0 },
      S2: { total_segments: 1, total_duration: 0.9, first_appearance: 1.2 },
    });
    expect(transcript.highlighted_transcript).toContain('<mark class="confidence-low">schwindelt</mark>');
    expect(transcript.words.map((w: { text: string; confidence_level: string }) => w.confidence_level)).toEqual([
      "high",
      "high",
      "high",
      "high",
      "low",
      "high",
    ]);
    expect(transcript.words[4]).toMatchObject({ text: "schwindelt", confidence: 0.31, speaker: "S2" });

    const row = await recordingOf(body.audio_key);
    expect(row).toMatchObject({
      transcript_key: body.transcript_key,
      transcription_status: "completed",
      upload_status: "awaiting_upload",
      display_name: "Herr Müller Kontrolle",
      original_filename: "live",
      tags: ["Kardio"],
      language_code: "de-DE",
      template_id: "entlassbrief",
      transcription_mode: "transcript",
      declared_type: "audio/webm;codecs=opus",
      created_via: "realtime",
      source_type: "realtime_recording",
      original_mime_type: "audio/webm;codecs=opus",
      // No audio stored yet: like an upload's, audio_format names only audio the server has checked.
      audio_format: null,
      duration_seconds: 3,
    });
    expect(row.save_fingerprint).toMatch(/^[0-9a-f]{64}$/);
    const stored = await getDb()
      .selectFrom("transcripts")
      .where("recording_id", "=", row.id)
      .select(["storage_key", "language_code", "engine", "word_count", "speaker_count", "tags"])
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({
      storage_key: body.transcript_key,
      language_code: "de",
      engine: "local",
      word_count: 4,
      speaker_count: 2,
      tags: ["Kardio"],
    });
    const context = await getDb()
      .selectFrom("recording_context")
      .where("recording_id", "=", row.id)
      .select(["kind", "text"])
      .execute();
    expect(context).toEqual([{ kind: "text", text: "Vorbefund: Hypertonie" }]);
    const audit = await getDb()
      .selectFrom("audit_events")
      .where("action", "=", "recording.live-save")
      .select(["outcome", "entity_id"])
      .execute();
    expect(audit).toContainEqual({ outcome: "success", entity_id: row.id });

    // Another user cannot open it.
    const jonas = await as("jonas-keller");
    expect((await callRoute(transcriptLoader, jonas(`/api/transcript_v2/${short}`), { "*": short })).status).toBe(404);
  });

  it("gives a retried payload the first save's keys, not a second recording, and meters its audio once", async () => {
    const anna = await as("anna-berger");
    const body = livePayload({ display_name: "Wiederholt", language_code: "en", metadata: { tags: "Kardio" } });
    await settleMetering();
    const before = await liveAudioRows();
    const first = await (await saveLive(anna, body)).json();
    const second = await (await saveLive(anna, body)).json();
    expect(second).toEqual(first);
    // The browser recognised it (direct mode): the server meters what the transcript covers, once.
    await settleMetering();
    const metered = (await liveAudioRows()).slice(before.length);
    expect(metered.map((row) => Number(row.units))).toEqual([3]);
    const rows = await getDb().selectFrom("recordings").where("display_name", "=", "Wiederholt").selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ language_code: "en-GB", tags: ["Kardio"], template_id: null });
    expect(rows[0]!.transcription_mode).toBe("transcript_and_letter");
  });

  it("refuses a transcript without content, and the limits every other path has", async () => {
    const anna = await as("anna-berger");
    const data = livePayload().transcript_data;
    for (const results of [[], [stop(0)], [segment("   ", 0, "S1", 0.9)], [segment("…", 0, "S1", 0.9)]]) {
      const response = await saveLive(anna, livePayload({ transcript_data: { ...data, results } }));
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ detail: "No transcript content to save" });
    }
    for (const [overrides, detail] of [
      [{ display_name: "n".repeat(101) }, "Text must be 100 characters or less"],
      [{ additional_context: "k".repeat(10_001) }, "Additional context cannot exceed 10000 characters"],
      [{ metadata: { template_id: "gibt-es-nicht" } }, "Template not found"],
      [{ metadata: { tags: ["a", "b", "c", "d", "e", "f"] } }, "A file can have at most 5 tags"],
      [{ language_code: "fr" }, "Invalid transcript data"],
      [{ transcript_data: undefined }, "Invalid transcript data"],
      [{ duration: 5 * 3600 }, "Invalid transcript data"],
      [{ created_via: "upload" }, "Invalid transcript data"],
      [{ original_mime_type: "audio/webm\r\nX-Evil: 1" }, "Invalid recording format"],
    ] as const) {
      const response = await saveLive(anna, livePayload(overrides));
      expect(response.status, detail).toBe(400);
      expect(await response.json()).toEqual({ detail });
    }
    const audit = await getDb()
      .selectFrom("audit_events")
      .where("action", "=", "recording.live-save")
      .where("outcome", "=", "success")
      .select("id")
      .execute();
    expect(audit).toHaveLength(2);
  });
});
