import { describe, expect, it } from "vitest";
import { loader as letterLoader, action as letterAction } from "~/routes/api.arztbrief.$";
import { action as deleteLetterAction } from "~/routes/api.delete-arztbrief";
import { action as forceCleanupAction } from "~/routes/api.force-cleanup";
import { loader as promptsLoader, action as promptsAction } from "~/routes/api.prompts";
import { action as promptDeleteAction } from "~/routes/api.prompts.$id";
import { action as refineBulkAction } from "~/routes/api.refine-arztbrief-bulk";
import { action as refineAction } from "~/routes/api.refine-arztbrief-structured";
import { action as tagsAction } from "~/routes/api.update-file-tags";
import { getDb } from "~/models/db.server";
import { runLetterJob } from "~/services/letters/job.server";
import { requestLetter } from "~/services/letters/letters.server";
import type { ApiClient } from "../support/api-client";
import { letterJobOf, letterStatusOf, seedTranscribedRecording } from "../support/letter-fixtures";
import {
  call,
  CONSULTATION,
  createAndRun,
  letterResponder,
  setupLetterModel,
  signInWith,
  withParams,
} from "../support/letters-api";
import { callRoute, setupTestApp } from "../setup/app";

// Letters through the JSON API (issue 6), with the real OpenAI-compatible adapter talking HTTP to a protocol-faithful
// chat-completions server that records what it is sent (tests/support/letters-api.ts): a letter once it exists — saving
// with versions, the stateless refinement calls, delete, reset, tags, redo with another template — and saved prompts.
const app = setupTestApp({ provider: true });
const llm = setupLetterModel();
const signIn = signInWith(app);

describe("letter editing, delete, reset and tags", () => {
  async function readyLetter(account = "anna-berger") {
    const { client, userId } = await signIn(account);
    const seeded = await seedTranscribedRecording({ ownerId: userId, lines: CONSULTATION, tags: ["kardio"] });
    await createAndRun(client, seeded.sourceKey, seeded.recordingId);
    const row = await getDb()
      .selectFrom("letters")
      .where("recording_id", "=", seeded.recordingId)
      .select(["storage_key"])
      .executeTakeFirstOrThrow();
    return { client, userId, ...seeded, key: row.storage_key, param: row.storage_key.slice("arztbriefe/".length) };
  }

  it("saves a new version only when the content changed, and refuses a save over a newer version", async () => {
    const { client, param, key } = await readyLetter();
    const loaded = await withParams(letterLoader, client, `/api/arztbrief/${param}`, { "*": param });
    const content = loaded.body.content;
    const edited = {
      structured_output: content.structured_output.map((s: Record<string, string>, i: number) =>
        i === 0 ? { [Object.keys(s)[0]!]: "Vom Arzt korrigiert." } : s,
      ),
    };
    const put = (json: unknown) =>
      withParams(letterAction, client, `/api/arztbrief/${param}`, { "*": param }, { method: "PUT", json });
    const saved = await put({ content: edited, base_version: loaded.body.version });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ changed: true, version: loaded.body.version + 1 });
    const again = await put({ content: edited });
    expect(again.body).toMatchObject({ changed: false, version: loaded.body.version + 1 });
    const stale = await put({ content: content, base_version: loaded.body.version });
    expect(stale.status).toBe(409);
    expect(stale.body.detail).toBe(
      "The document was changed in the meantime. Please reload it; nothing has been lost.",
    );
    const invalid = await put({ content: { structured_output: [{ a: "x", b: "y" }] } });
    expect(invalid.status).toBe(400);
    const versions = await getDb()
      .selectFrom("letter_versions")
      .innerJoin("letters", "letters.id", "letter_versions.letter_id")
      .where("letters.storage_key", "=", key)
      .select(["letter_versions.version", "letter_versions.kind"])
      .orderBy("letter_versions.version")
      .execute();
    expect(versions.map((v) => v.kind)).toEqual(["generated", "edited"]);
  });

  it("answers the stateless refinement calls in SPEC §7's shape, and validates the instruction", async () => {
    const { client } = await signIn("anna-berger");
    const refined = await call(refineAction, client, "/api/refine-arztbrief-structured", {
      arztbrief_text: "Anamnese: Brustschmerz.",
      query: "Bitte kürzer.",
      language_code: "de-DE",
      section_context: "Anamnese",
      transcript_data: "Sprecher 1: Guten Tag.",
    });
    expect(refined.status).toBe(200);
    expect(typeof refined.body.refined_arztbrief).toBe("string");
    const bulk = await call(refineBulkAction, client, "/api/refine-arztbrief-bulk", {
      arztbrief_content: { structured_output: [{ Anamnese: "Brustschmerz." }, { Procedere: "EKG." }] },
      query: "Bitte formeller.",
      language_code: "de-DE",
      transcript_data: "",
    });
    expect(bulk.status).toBe(200);
    expect(bulk.body.refined_content.structured_output.map((s: object) => Object.keys(s)[0])).toEqual([
      "Anamnese",
      "Procedere",
    ]);
    const tooLong = await call(refineAction, client, "/api/refine-arztbrief-structured", {
      arztbrief_text: "x",
      query: "a".repeat(501),
      language_code: "de-DE",
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.detail).toBe("The instruction may be at most 500 characters long.");
  });

  it("deletes a letter for its owner only; the recording's letter status returns to pending", async () => {
    const { client, param, key, recordingId } = await readyLetter();
    const intruder = await signIn("jonas-keller");
    expect((await withParams(letterLoader, intruder.client, `/api/arztbrief/${param}`, { "*": param })).status).toBe(
      404,
    );
    expect((await call(deleteLetterAction, intruder.client, "/api/delete-arztbrief", { key })).status).toBe(404);
    const deleted = await call(deleteLetterAction, client, "/api/delete-arztbrief", { key });
    expect(deleted.status).toBe(200);
    expect((await withParams(letterLoader, client, `/api/arztbrief/${param}`, { "*": param })).status).toBe(404);
    expect((await letterStatusOf(recordingId)).medical_letter_status).toBe("pending");
  });

  it("counts the letter in reset's cleanup_results, and carries tags to it", async () => {
    const { client, param, sourceKey } = await readyLetter();
    const tagged = await call(tagsAction, client, "/api/update-file-tags", {
      s3_key: sourceKey,
      tags: ["kardio", "dringend"],
      update_all_related: true,
    });
    expect(tagged.status).toBe(200);
    const letter = await withParams(letterLoader, client, `/api/arztbrief/${param}`, { "*": param });
    expect(letter.body.metadata.tags).toEqual(["kardio", "dringend"]);
    const reset = await call(forceCleanupAction, client, "/api/force-cleanup", { s3_key: sourceKey });
    expect(reset.body.cleanup_results).toEqual({
      medical_letters_deleted: 1,
      transcript_deleted: true,
      source_reset: true,
    });
    expect((await withParams(letterLoader, client, `/api/arztbrief/${param}`, { "*": param })).status).toBe(404);
  });

  it("redoes a letter with another template and keeps the earlier one as a version", async () => {
    const { userId, sourceKey, recordingId, key } = await readyLetter();
    const redo = await requestLetter({ userId, sourceKey, kind: "redo", templateId: "kurzbrief" });
    expect(redo.status).toBe("processing");
    await expect(requestLetter({ userId, sourceKey, kind: "redo", templateId: "kurzbrief" })).resolves.toMatchObject({
      job_name: redo.job_name,
    });
    const job = await letterJobOf(recordingId);
    expect(await runLetterJob(job!.id)).toBe("completed");
    expect(await letterStatusOf(recordingId)).toEqual({ medical_letter_status: "completed", template_id: "kurzbrief" });
    const versions = await getDb()
      .selectFrom("letter_versions")
      .innerJoin("letters", "letters.id", "letter_versions.letter_id")
      .where("letters.storage_key", "=", key)
      .select(["letter_versions.kind", "letter_versions.template_id"])
      .orderBy("letter_versions.version")
      .execute();
    expect(versions).toEqual([
      { kind: "generated", template_id: "default" },
      { kind: "redo", template_id: "kurzbrief" },
    ]);
    // The same template again is refused; a redo whose transcript is not clinical leaves the letter as it was.
    await expect(requestLetter({ userId, sourceKey, kind: "redo", templateId: "kurzbrief" })).rejects.toMatchObject({
      message: "letters:errors.sameTemplate",
    });
    llm().responder = letterResponder("other");
    await requestLetter({ userId, sourceKey, kind: "redo", templateId: "default" });
    expect(await runLetterJob((await letterJobOf(recordingId))!.id)).toBe("failed");
    expect(await letterJobOf(recordingId)).toMatchObject({ error_key: "letters:errors.templateSwitchFailed" });
    expect(await letterStatusOf(recordingId)).toEqual({ medical_letter_status: "completed", template_id: "kurzbrief" });
  });
});

describe("saved prompts", () => {
  it("keeps at most 3 per user with SPEC's messages, and deletes only the owner's", async () => {
    const { client } = await signIn("emily-clarke");
    const other = await signIn("jonas-keller");
    for (let i = 1; i <= 3; i++) {
      const saved = await call(promptsAction, client, "/api/prompts", {
        title: `Prompt ${i}`,
        prompt_text: `Text ${i}`,
      });
      expect(saved.status).toBe(201);
    }
    const fourth = await call(promptsAction, client, "/api/prompts", { title: "Prompt 4", prompt_text: "Text 4" });
    expect(fourth.status).toBe(409);
    expect(fourth.body.detail).toBe("Maximum 3 prompts allowed. Please delete one first.");
    const longTitle = await call(promptsAction, other.client, "/api/prompts", {
      title: "x".repeat(41),
      prompt_text: "t",
    });
    expect(longTitle.status).toBe(400);
    const noText = await call(promptsAction, other.client, "/api/prompts", { title: "Titel", prompt_text: "  " });
    expect(noText.body.detail).toBe("Prompt text is required");
    const list = await call(promptsLoader, client, "/api/prompts");
    expect(list.body.prompts.map((p: { title: string }) => p.title)).toEqual(["Prompt 1", "Prompt 2", "Prompt 3"]);
    const id = list.body.prompts[0].id;
    const del = (c: ApiClient) =>
      callRoute(promptDeleteAction, c(`/api/prompts/${id}`, { method: "DELETE" }), { id }).then((r) => r.status);
    expect(await del(other.client)).toBe(404);
    expect(await del(client)).toBe(200);
    expect((await call(promptsLoader, client, "/api/prompts")).body.prompts).toHaveLength(2);
  });

  it("lets only one of two tabs save the third prompt at the same moment", async () => {
    const { client } = await signIn("max-hoffmann");
    for (const n of [1, 2])
      expect((await call(promptsAction, client, "/api/prompts", { title: `P${n}`, prompt_text: "t" })).status).toBe(
        201,
      );
    const answers = await Promise.all(
      ["Tab eins", "Tab zwei"].map((title) => call(promptsAction, client, "/api/prompts", { title, prompt_text: "t" })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    expect((await call(promptsLoader, client, "/api/prompts")).body.prompts).toHaveLength(3);
  });
});
