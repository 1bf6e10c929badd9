import { describe, expect, it } from "vitest";
import { action as transcribeAction } from "~/routes/api.transcribe_v2";
import { getDb } from "~/models/db.server";
import { runTranscriptionJob } from "~/services/transcription/job.server";
import { correctWord } from "~/services/transcription/corrections.server";
import { engineVocabulary, USER_VOCABULARY_LIMITS } from "~/services/transcription/user-vocabulary.server";
import { getVocabulary } from "~/services/speech/vocabulary.server";
import { apiClientFor } from "../support/api-client";
import { userIdOf } from "../support/letter-fixtures";
import { signInWith } from "../support/letters-api";
import { seedUncertainTranscript, versionsOf, vocabularyOf } from "../support/transcript-corrections";
import { call, jobOf, setupTranscriptionWorld, SPEECHMATICS_ENV } from "../support/transcription-world";
import { setupTestApp } from "../setup/app";

// Corrections teach the vocabulary (issue 24): a corrected term joins the doctor's own vocabulary, with the misheard
// form as its variant, and the next transcription sends it to the engine with the built-in list — the doctor's terms
// first, each term once, only in its own language. The limits hold (500 terms: the correction is saved, the term not).
const app = setupTestApp({ provider: true, env: SPEECHMATICS_ENV });
const { speechmatics, engine, upload } = setupTranscriptionWorld();
const signIn = signInWith(app);

type Vocab = Array<{ content: string; sounds_like?: string[] }>;

async function fix(userId: string, key: string, base: number, text: string, word = { segment: "t0p0", index: 1 }) {
  return correctWord({ userId, key, baseVersion: base, word, text, applyToAll: false, addToVocabulary: true });
}

describe("the doctor's vocabulary", () => {
  it("gains a corrected term, which the next transcription sends to the engine before the built-in list", async () => {
    engine();
    const client = await apiClientFor(app.issuer, "anna-berger");
    const key = await upload(client);
    const userId = await userIdOf("anna-berger");
    const seeded = await seedUncertainTranscript(userId, [
      { speaker: "S1", text: "Dazu ~Sakubitril und ~Entrestro ." },
    ]);
    expect((await fix(userId, seeded.transcriptKey, 1, "Sacubitril")).vocabulary).toBe("added");
    // The same term again, heard otherwise: one entry, a second misheard form.
    const again = await fix(userId, seeded.transcriptKey, 2, "Sacubitril", { segment: "t0p0", index: 3 });
    expect(again.vocabulary).toBe("updated");
    // A term of the built-in list is known already.
    expect((await fix(userId, seeded.transcriptKey, 3, "Ramipril")).vocabulary).toBe("known");
    expect(await vocabularyOf(userId)).toEqual([
      { language: "de", content: "Sacubitril", sounds_like: ["Sakubitril", "Entrestro"] },
    ]);

    expect((await call(transcribeAction, client, "/api/transcribe_v2", { s3_key: key })).status).toBe(200);
    expect(await runTranscriptionJob((await jobOf(key)).id)).toBe("completed");
    const sent = speechmatics().jobs.at(-1)!.config.transcription_config as { additional_vocab: Vocab };
    expect(sent.additional_vocab[0]).toEqual({ content: "Sacubitril", sounds_like: ["Sakubitril", "Entrestro"] });
    expect(sent.additional_vocab).toHaveLength(getVocabulary("de").length + 1);
    expect(sent.additional_vocab.filter((entry) => entry.content === "Ramipril")).toHaveLength(1);
  });

  it("is kept per language and per doctor", async () => {
    const { userId } = await signIn("jonas-keller");
    const { userId: other } = await signIn("emily-clarke");
    const english = await seedUncertainTranscript(
      userId,
      [{ speaker: "S1", text: "Take ~sacubatril daily ." }],
      "en-GB",
    );
    expect((await fix(userId, english.transcriptKey, 1, "sacubitril")).vocabulary).toBe("added");
    expect(await engineVocabulary({ userId, language: "en" })).toEqual([
      { content: "sacubitril", sounds_like: ["sacubatril"] },
    ]);
    expect((await engineVocabulary({ userId, language: "de" })).some((e) => e.content === "sacubitril")).toBe(false);
    expect(await engineVocabulary({ userId: other, language: "en" })).toEqual([]);
  });

  it("holds at most 500 terms: beyond that the correction is saved and the term is not", async () => {
    const { userId } = await signIn("max-hoffmann");
    await getDb()
      .insertInto("user_vocabulary")
      .values(
        Array.from({ length: USER_VOCABULARY_LIMITS.entries }, (_, i) => ({
          owner_id: userId,
          language: "de" as const,
          content: `Begriff${i}`,
          content_key: `begriff${i}`,
          sounds_like: "[]",
          updated_at: new Date(),
        })),
      )
      .execute();
    const seeded = await seedUncertainTranscript(userId, [{ speaker: "S1", text: "Dazu ~Sakubitril ." }]);
    const result = await fix(userId, seeded.transcriptKey, 1, "Sacubitril");
    expect(result).toMatchObject({ version: 2, kind: "corrected", vocabulary: "full" });
    expect(await versionsOf(seeded.transcriptKey)).toHaveLength(1);
    expect(await vocabularyOf(userId)).toHaveLength(USER_VOCABULARY_LIMITS.entries);
  });
});
