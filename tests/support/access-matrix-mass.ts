import { describe, expect, it } from "vitest";
import { action as createLiveAction } from "~/routes/live.sessions";
import { action as letterAction } from "~/routes/api.arztbrief.$";
import { action as uploadUrlAction } from "~/routes/api.get-upload-url";
import { action as letterRequestAction } from "~/routes/api.medical-letter-v2";
import { action as renameAction } from "~/routes/api.rename-file";
import { action as transcribeAction } from "~/routes/api.transcribe_v2";
import { action as metadataAction } from "~/routes/api.update-file-metadata";
import { action as tagsAction } from "~/routes/api.update-file-tags";
import { getDb } from "~/models/db.server";
import type { World } from "./access-matrix-fixture";
import { letterJobOf, seedTranscribedRecording } from "./letter-fixtures";
import { livePayload, putUpload, recordingOf, saveLive } from "./live-save";
import { toneWav } from "./wav";
import { APP_URL, callRoute, request } from "../setup/app";

// Issue 9 "Mass assignment: fields a user may not set are ignored." B's creating and updating calls carry
// everything a client should never decide — owner, ids, keys, statuses, dates, system flags, engine, cost — much
// of it naming A's things; what gets stored is B's own, as if those fields had not been sent. Recordings, live
// recordings and letters here; prompts, templates and settings in access-matrix-mass-settings.ts.

export const LONG_AGO = "2000-01-01T00:00:00.000Z";

/** Fields no request may set, filled with A's values wherever A has one. */
export function forged(world: World) {
  const { a } = world.keys;
  return {
    id: a.promptId,
    owner_id: a.userId,
    user_id: a.userId,
    ownerId: a.userId,
    userId: a.userId,
    storage_key: a.recordingKey,
    key: a.recordingKey,
    s3_key: a.recordingKey,
    audio_key: a.recordingKey,
    transcript_key: a.transcriptKey,
    status: "completed",
    upload_status: "ready",
    transcription_status: "completed",
    medical_letter_status: "completed",
    created_at: LONG_AGO,
    is_system: true,
    isSystem: true,
    engine: "forged-engine",
    cost: 1000,
    cost_usd: 1000,
  };
}

/** The forged fields as a form posts them. */
export function forgedFields(world: World) {
  return Object.fromEntries(Object.entries(forged(world)).map(([name, value]) => [name, String(value)]));
}

export async function json(route: Parameters<typeof callRoute>[0], req: Request, params: Record<string, string> = {}) {
  const response = await callRoute(route, req, params);
  return { status: response.status, body: await response.json() };
}

export function form(path: string, cookie: string, fields: Record<string, string>) {
  const headers = { Origin: APP_URL, "Sec-Fetch-Site": "same-origin" };
  return request(path, { method: "POST", cookie, headers, body: new URLSearchParams(fields) });
}

export function massAssignmentSuite(context: () => World) {
  const forgedNow = () => forged(context());

  describe("mass assignment: recordings, live recordings and letters", () => {
    it("a new upload, its metadata, name and tags: B's recording with B's key, statuses the server's", async () => {
      const world = context();
      const api = world.jonas.api;
      const { a } = world.keys;
      const slot = await json(
        uploadUrlAction,
        api("/api/get-upload-url", {
          method: "POST",
          json: { ...forgedNow(), file_name: "b.wav", file_type: "audio/wav", language_code: "de" },
        }),
      );
      expect(slot.status).toBe(200);
      expect(slot.body.key).toMatch(new RegExp(`^audio/${world.jonas.userId}/`));
      await putUpload(slot.body.url, toneWav(2), "audio/wav");
      const metadata = (extra: Record<string, unknown>) =>
        api("/api/update-file-metadata", {
          method: "POST",
          json: {
            ...forgedNow(),
            s3_key: slot.body.key,
            metadata: { ...forgedNow(), display_name: "Eigene", ...extra },
          },
        });
      // A's custom template is not one B can use: refused, not stored.
      expect((await json(metadataAction, metadata({ template_id: a.templateId }))).status).toBe(400);
      expect((await json(metadataAction, metadata({}))).status).toBe(200);
      const renamed = api("/api/rename-file", {
        method: "POST",
        json: { ...forgedNow(), s3_key: slot.body.key, display_name: "Umbenannt" },
      });
      expect((await json(renameAction, renamed)).status).toBe(200);
      const tagged = api("/api/update-file-tags", {
        method: "POST",
        json: { ...forgedNow(), s3_key: slot.body.key, tags: ["eigen"], update_all_related: true },
      });
      expect((await json(tagsAction, tagged)).status).toBe(200);

      const row = await recordingOf(slot.body.key);
      expect(row).toMatchObject({
        owner_id: world.jonas.userId,
        storage_key: slot.body.key,
        display_name: "Umbenannt",
        tags: ["eigen"],
        template_id: null,
        transcription_status: "pending",
        medical_letter_status: "pending",
        transcript_key: null,
      });
      expect(row.created_at.getTime()).toBeGreaterThan(Date.parse(LONG_AGO) + 1000);
    });

    it("a live recording saved and a live session opened are B's, with the server's keys and engine", async () => {
      const world = context();
      const { a } = world.keys;
      // A's template is refused like any unknown one; without it the save is B's, with the server's keys.
      const withTemplate = livePayload({ ...forgedNow(), metadata: { template_id: a.templateId } });
      expect((await saveLive(world.jonas.api, withTemplate)).status).toBe(400);
      const saved = await saveLive(world.jonas.api, livePayload(forgedNow()));
      expect(saved.status).toBe(200);
      const body = await saved.json();
      expect(body.audio_key).toMatch(new RegExp(`^audio/${world.jonas.userId}/`));
      expect(body.transcript_key).toMatch(new RegExp(`^transcripts/${world.jonas.userId}/`));
      const transcript = await getDb()
        .selectFrom("transcripts")
        .where("storage_key", "=", body.transcript_key)
        .select(["owner_id", "engine"])
        .executeTakeFirstOrThrow();
      expect(transcript).toEqual({ owner_id: world.jonas.userId, engine: "local" });

      const live = await json(
        createLiveAction,
        world.jonas.api("/live/sessions", {
          method: "POST",
          json: { ...forgedNow(), id: a.liveSessionId, kind: "recording", language: "de" },
        }),
      );
      expect(live.status).toBe(201);
      expect(live.body.id).not.toBe(a.liveSessionId);
      const session = await getDb()
        .selectFrom("live_sessions")
        .where("id", "=", live.body.id)
        .selectAll()
        .executeTakeFirstOrThrow();
      expect(session).toMatchObject({ owner_id: world.jonas.userId, engine: "local" });
    });

    it("a letter asked for, transcribed or edited by B uses no template of A's and is authored by B", async () => {
      const world = context();
      const { a, b } = world.keys;
      const api = world.jonas.api;
      const fresh = await seedTranscribedRecording({ ownerId: b.userId, lines: [{ speaker: "S1", text: "Husten." }] });
      const asked = await json(
        letterRequestAction,
        api("/api/medical-letter-v2", {
          method: "POST",
          json: {
            ...forgedNow(),
            source_key: fresh.sourceKey,
            metadata: { ...forgedNow(), template_id: a.templateId },
          },
        }),
      );
      // A's template is as unknown to B as a made-up one: refused, and no letter job starts.
      expect(asked).toMatchObject({ status: 404, body: { detail: "Template not found" } });
      expect(await letterJobOf(fresh.recordingId)).toBeUndefined();
      const transcribe = await json(
        transcribeAction,
        api("/api/transcribe_v2", {
          method: "POST",
          json: {
            ...forgedNow(),
            s3_key: fresh.sourceKey,
            metadata: { template_id: a.templateId, job_name: a.jobName },
          },
        }),
      );
      expect(transcribe.status).toBe(400);
      expect((await recordingOf(fresh.sourceKey)).template_id).not.toBe(a.templateId);

      const edited = await json(
        letterAction,
        api(`/api/arztbrief/${b.letterParam}`, {
          method: "PUT",
          json: {
            ...forgedNow(),
            version: 99,
            author_id: a.userId,
            kind: "generated",
            template_id: a.templateId,
            content: { structured_output: [{ Anamnese: "Neu." }] },
          },
        }),
        { "*": b.letterParam },
      );
      expect(edited.status).toBe(200);
      const version = await getDb()
        .selectFrom("letter_versions")
        .innerJoin("letters", "letters.id", "letter_versions.letter_id")
        .where("letters.storage_key", "=", b.letterKey)
        .orderBy("letter_versions.version", "desc")
        .select([
          "letter_versions.version",
          "letter_versions.author_id",
          "letter_versions.kind",
          "letter_versions.owner_id",
        ])
        .executeTakeFirstOrThrow();
      expect(version).toEqual({ version: 2, author_id: b.userId, kind: "edited", owner_id: b.userId });
    });
  });
}
