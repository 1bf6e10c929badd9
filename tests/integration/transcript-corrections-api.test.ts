import { describe, expect, it } from "vitest";
import { action as correctionsAction } from "~/routes/api.transcript-corrections";
import { loader as reviewLoader } from "~/routes/api.transcript-review.$";
import { loader as transcriptLoader } from "~/routes/api.transcript_v2.$";
import { findDataBlocks } from "~/services/letters/data-blocks";
import { transcriptSegments } from "~/services/transcription/segments";
import { getTranscript } from "~/services/transcription/transcripts.server";
import { call, createAndRun, setupLetterModel, signInWith, withParams } from "../support/letters-api";
import {
  auditRowsOf,
  seedUncertainTranscript,
  storedDocument,
  versionsOf,
  vocabularyOf,
} from "../support/transcript-corrections";
import { setupTestApp } from "../setup/app";

// Transcript corrections through the JSON API (issue 24), as a client makes them with a bearer token: each change a new
// version while the recognised transcript stays as stored, identical occurrences changed together and nothing else,
// another user's transcript a 404, a stale base version a 409 that writes nothing, speaker names in the text the
// letter model receives, merge and move with stable segment ids, corrected terms in the doctor's vocabulary and
// doubtful vocabulary words in the review, bad input refused with a clear message, and audit rows without text.
const app = setupTestApp({ provider: true });
const llm = setupLetterModel();
const signIn = signInWith(app);

const LINES = [
  { speaker: "S1", text: "Nehmen Sie ~Sakubitril ?" },
  { speaker: "S2", text: "Ja , Sakubitril und ~Sakubitril retard , dazu ?Ramipril ." },
];

async function review(client: Parameters<typeof call>[1], path: string) {
  return withParams(reviewLoader, client, `/api/transcript-review/${path}`, { "*": path });
}

async function correct(client: Parameters<typeof call>[1], body: Record<string, unknown>) {
  return call(correctionsAction, client, "/api/transcript-corrections", body);
}

describe("the transcript review and corrections API", () => {
  it("lists the uncertain words, and a correction makes a new version while the recognised one stays", async () => {
    const { client, userId } = await signIn("anna-berger");
    const seeded = await seedUncertainTranscript(userId, LINES);
    const recognised = JSON.stringify(await storedDocument(seeded.transcriptKey));

    const listed = await review(client, seeded.path);
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ transcript_key: seeded.transcriptKey, version: 1, total: 3 });
    expect(listed.body.items.map((i: { text: string; reasons: string[] }) => [i.text, i.reasons])).toEqual([
      // No dictionary knows "Sakubitril" (the drug is Sacubitril): a reason of its own at each doubtful moment.
      ["Sakubitril", ["low_confidence", "unknown_word"]],
      ["Sakubitril", ["low_confidence", "unknown_word"]],
      // Ramipril is in the built-in vocabulary: heard uncertainly, it is doubted for that too.
      ["Ramipril", ["medium_confidence", "vocabulary_uncertain"]],
    ]);
    const first = listed.body.items[0];
    expect(first).toMatchObject({ segment: "t0p0", word_index: 2, start: 2, end: 2.5, occurrences: 3 });
    expect(first.context).toEqual({ before: "Nehmen Sie", after: "?" });

    const fixed = await correct(client, {
      transcript_key: seeded.transcriptKey,
      base_version: 1,
      action: "correct",
      segment: "t0p0",
      word_index: 2,
      text: "Sacubitril",
    });
    expect(fixed.status).toBe(200);
    expect(fixed.body).toEqual({
      transcript_key: seeded.transcriptKey,
      version: 2,
      result: "corrected",
      words: 1,
      vocabulary: "added",
    });
    expect(JSON.stringify(await storedDocument(seeded.transcriptKey))).toBe(recognised);
    expect(await versionsOf(seeded.transcriptKey)).toEqual([{ version: 2, kind: "correction", author_id: userId }]);

    const current = await withParams(transcriptLoader, client, `/api/transcript_v2/${seeded.path}`, {
      "*": seeded.path,
    });
    expect(current.body.raw_transcript).toBe(
      "Nehmen Sie Sacubitril? Ja, Sakubitril und Sakubitril retard, dazu Ramipril.",
    );
    expect(current.body.words.find((w: { text: string }) => w.text === "Sacubitril")).toMatchObject({
      reviewed: "corrected",
      confidence: 0.3,
    });
    // The other two "Sakubitril" are left: the confident one now for no dictionary knowing it, the doubtful one.
    expect((await review(client, seeded.path)).body).toMatchObject({ version: 2, total: 3 });

    // The corrected term joins the doctor's vocabulary, with what the engine heard as its misheard variant.
    expect(await vocabularyOf(userId)).toEqual([
      { language: "de", content: "Sacubitril", sounds_like: ["Sakubitril"] },
    ]);
  });

  it("applies a fix to every identical occurrence and to nothing else", async () => {
    const { client, userId } = await signIn("jonas-keller");
    const seeded = await seedUncertainTranscript(userId, [
      { speaker: "S1", text: "~Sakubitril , metroprolol , Sakubitril-Tablette und ~Sakubitril ." },
    ]);
    const fixed = await correct(client, {
      transcript_key: seeded.path,
      base_version: 1,
      action: "correct",
      segment: "t0p0",
      word_index: 0,
      text: "Sacubitril",
      apply_to_all: true,
      add_to_vocabulary: false,
    });
    expect(fixed.body).toMatchObject({ version: 2, words: 2, vocabulary: null });
    const { document } = await getTranscript({ userId, key: seeded.transcriptKey });
    expect(document.raw_transcript).toBe("Sacubitril, metroprolol, Sakubitril-Tablette und Sacubitril.");
    expect(await vocabularyOf(userId)).toEqual([]);
  });

  it("confirms words: they leave the review, and typing the word as heard confirms it too", async () => {
    const { client, userId } = await signIn("emily-clarke");
    const seeded = await seedUncertainTranscript(userId, LINES);
    const confirmed = await correct(client, {
      transcript_key: seeded.transcriptKey,
      base_version: 1,
      action: "confirm",
      segment: "t1p0",
      word_index: 8,
    });
    expect(confirmed.body).toMatchObject({ version: 2, result: "confirmed", words: 1 });
    const same = await correct(client, {
      transcript_key: seeded.transcriptKey,
      base_version: 2,
      action: "correct",
      segment: "t0p0",
      word_index: 2,
      text: "Sakubitril",
      apply_to_all: true,
    });
    expect(same.body).toMatchObject({ version: 3, result: "confirmed", words: 3, vocabulary: null });
    expect((await review(client, seeded.path)).body).toMatchObject({ version: 3, total: 0, items: [] });
    expect((await versionsOf(seeded.transcriptKey)).map((v) => v.kind)).toEqual(["confirmation", "correction"]);
    expect(await vocabularyOf(userId)).toEqual([]);
  });

  it("teaches the doctor's vocabulary a word no dictionary knows when it is confirmed as right, and nothing else", async () => {
    const { client, userId } = await signIn("hanna-vogt");
    const seeded = await seedUncertainTranscript(userId, LINES);
    // "Ramipril" is a built-in term: confirming it teaches nothing, even when asked to.
    const known = await correct(client, {
      transcript_key: seeded.transcriptKey,
      base_version: 1,
      action: "confirm",
      segment: "t1p0",
      word_index: 8,
      add_to_vocabulary: true,
    });
    expect(known.body).toMatchObject({ version: 2, result: "confirmed", vocabulary: null });
    const unknown = await correct(client, {
      transcript_key: seeded.transcriptKey,
      base_version: 2,
      action: "confirm",
      segment: "t0p0",
      word_index: 2,
      apply_to_all: true,
      add_to_vocabulary: true,
    });
    expect(unknown.body).toMatchObject({ version: 3, result: "confirmed", words: 3, vocabulary: "added" });
    expect(await vocabularyOf(userId)).toEqual([{ language: "de", content: "Sakubitril", sounds_like: [] }]);
    expect((await review(client, seeded.path)).body).toMatchObject({ total: 0 });
  });

  it("refuses a change made on an older version with a 409 and writes nothing", async () => {
    const { client, userId } = await signIn("max-hoffmann");
    const seeded = await seedUncertainTranscript(userId, LINES);
    const body = { transcript_key: seeded.transcriptKey, action: "correct", segment: "t0p0", word_index: 2 };
    expect((await correct(client, { ...body, base_version: 1, text: "Sacubitril" })).status).toBe(200);
    const stale = await correct(client, { ...body, base_version: 1, text: "Metohexal" });
    expect(stale.status).toBe(409);
    expect(stale.body.detail).toMatch(/changed in the meantime/);
    const ahead = await correct(client, { ...body, base_version: 7, text: "Metohexal" });
    expect(ahead.status).toBe(409);
    expect(await versionsOf(seeded.transcriptKey)).toHaveLength(1);
    const { document } = await getTranscript({ userId, key: seeded.transcriptKey });
    expect(document.raw_transcript).toContain("Sie Sacubitril?");
    // Two changes on the same version at once: one is saved, the other refused.
    const both = await Promise.all([
      correct(client, { ...body, base_version: 2, word_index: 2, segment: "t1p0", text: "Entresto" }),
      correct(client, { ...body, base_version: 2, action: "name_speaker", speaker: "S1", role: "doctor" }),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(await versionsOf(seeded.transcriptKey)).toHaveLength(2);
  });

  it("answers another user's transcript with 404, as a missing one, and changes nothing", async () => {
    const anna = await signIn("sara-yilmaz");
    const ben = await signIn("lena-wagner");
    const seeded = await seedUncertainTranscript(anna.userId, LINES);
    expect((await review(ben.client, seeded.path)).status).toBe(404);
    expect((await review(ben.client, "transcripts/nicht-da.json")).status).toBe(404);
    for (const body of [
      { action: "correct", segment: "t0p0", word_index: 2, text: "Sacubitril" },
      { action: "name_speaker", speaker: "S1", role: "doctor" },
      { action: "merge_speakers", from: "S2", into: "S1" },
    ]) {
      const refused = await correct(ben.client, { transcript_key: seeded.transcriptKey, base_version: 1, ...body });
      expect(refused.status).toBe(404);
    }
    expect(await versionsOf(seeded.transcriptKey)).toEqual([]);
  });

  it("names speakers, and the letter model reads the names instead of 'Sprecher n'", async () => {
    const { client, userId } = await signIn("tim-schroeder");
    const seeded = await seedUncertainTranscript(userId, LINES);
    const doctor = await correct(client, {
      transcript_key: seeded.transcriptKey,
      base_version: 1,
      action: "name_speaker",
      speaker: "S1",
      role: "doctor",
    });
    expect(doctor.body).toEqual({ transcript_key: seeded.transcriptKey, version: 2 });
    await correct(client, {
      transcript_key: seeded.transcriptKey,
      base_version: 2,
      action: "name_speaker",
      speaker: "S2",
      role: "patient",
      name: "Frau Weber",
    });
    const listed = await review(client, seeded.path);
    expect(listed.body.speakers).toEqual([
      { speaker: "S1", speaker_number: 1, role: "doctor", name: null, label: "Ärztin/Arzt" },
      { speaker: "S2", speaker_number: 2, role: null, name: "Frau Weber", label: "Frau Weber" },
    ]);

    const before = llm().chatRequests().length;
    await createAndRun(client, seeded.sourceKey, seeded.recordingId);
    const sent = llm().chatRequests().slice(before);
    const messages = sent[0]!.body.messages as Array<{ content: string }>;
    const transcript = messages.flatMap((m) => findDataBlocks(m.content)).find((b) => b.kind === "TRANSCRIPT")!;
    expect(transcript.body).toContain("Ärztin/Arzt: Nehmen Sie Sakubitril?");
    expect(transcript.body).toContain("Frau Weber: Ja, Sakubitril");
    expect(transcript.body).not.toContain("Sprecher");
  });

  it("merges two speakers and moves a paragraph to another speaker, keeping every segment's id", async () => {
    const { client, userId } = await signIn("eva-richter");
    const seeded = await seedUncertainTranscript(userId, [
      { speaker: "S1", text: "Eins . Zwei . Drei . Vier . Fünf . Sechs . Sieben ." },
      { speaker: "S2", text: "Acht ." },
      { speaker: "S3", text: "Neun ." },
    ]);
    const segments = async () =>
      transcriptSegments((await getTranscript({ userId, key: seeded.transcriptKey })).document).map((s) => [
        s.id,
        s.speakerNumber,
      ]);
    expect(await segments()).toEqual([
      ["t0p0", 1],
      ["t0p1", 1],
      ["t1p0", 2],
      ["t2p0", 3],
    ]);
    const base = { transcript_key: seeded.transcriptKey };
    const merged = await correct(client, {
      ...base,
      base_version: 1,
      action: "merge_speakers",
      from: "S3",
      into: "S2",
    });
    expect(merged.body.version).toBe(2);
    const moved = await correct(client, {
      ...base,
      base_version: 2,
      action: "move_segment",
      segment: "t0p1",
      to: "S2",
    });
    expect(moved.body.version).toBe(3);
    expect(await segments()).toEqual([
      ["t0p0", 1],
      ["t0p1", 2],
      ["t1p0", 2],
      ["t2p0", 2],
    ]);
    const { document } = await getTranscript({ userId, key: seeded.transcriptKey });
    expect(Object.keys(document.speakers_info)).toEqual(["S1", "S2"]);
    expect((await versionsOf(seeded.transcriptKey)).map((v) => v.kind)).toEqual(["speakers", "speakers"]);

    const same = await correct(client, { ...base, base_version: 3, action: "merge_speakers", from: "S2", into: "S2" });
    expect(same.status).toBe(400);
    const gone = await correct(client, { ...base, base_version: 3, action: "move_segment", segment: "t9p0", to: "S1" });
    expect(gone.status).toBe(404);
  });

  it("puts vocabulary words heard uncertainly or amid silence into the review, saying why", async () => {
    const { client, userId } = await signIn("clara-schmidt");
    // "Kardiomyopathie" and "Zystoskopie" are in the built-in list; "Sacubitril" becomes the doctor's own term.
    const seeded = await seedUncertainTranscript(userId, [
      { speaker: "S1", text: "Verdacht auf ?Kardiomyopathie , dazu ~Sakubitril .", pauseAfter: 4 },
      { speaker: "S2", text: "Zystoskopie", pauseAfter: 4 },
      { speaker: "S1", text: "Gut so ." },
    ]);
    const fixed = await correct(client, {
      transcript_key: seeded.transcriptKey,
      base_version: 1,
      action: "correct",
      segment: "t0p0",
      word_index: 5,
      text: "Sacubitril",
    });
    expect(fixed.body.vocabulary).toBe("added");
    const second = await seedUncertainTranscript(userId, [{ speaker: "S1", text: "Weiter ~Sacubitril 50 ." }]);
    const listed = await review(client, seeded.path);
    expect(listed.body.items.map((i: { text: string; reasons: string[] }) => [i.text, i.reasons])).toEqual([
      ["Kardiomyopathie", ["medium_confidence", "vocabulary_uncertain"]],
      ["Zystoskopie", ["vocabulary_in_silence"]],
    ]);
    const other = await review(client, second.path);
    expect(other.body.items.map((i: { text: string; reasons: string[] }) => [i.text, i.reasons])).toEqual([
      ["Sacubitril", ["low_confidence", "vocabulary_uncertain"]],
    ]);
  });

  it("refuses bad input with a clear message and writes nothing", async () => {
    const { client, userId } = await signIn("felix-braun");
    const seeded = await seedUncertainTranscript(userId, LINES);
    const base = { transcript_key: seeded.transcriptKey, base_version: 1 };
    const word = { ...base, action: "correct", segment: "t0p0", word_index: 2 };
    const cases: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ ...base }, 400, /no such change/],
      [{ ...base, action: "rewrite" }, 400, /no such change/],
      [{ ...word, text: "Sacubitril", transcript_key: 5 }, 400, /Transcript key is required/],
      [{ ...word, text: "Sacubitril", base_version: "eins" }, 400, /version the change was made on/],
      [{ ...word, text: "Sacubitril", base_version: "1" }, 400, /version the change was made on/],
      [{ ...word, text: "Sacubitril", word_index: "2" }, 400, /field word_index/],
      [{ ...word, text: 42 }, 400, /field text/],
      [{ ...word, text: "   " }, 400, /type the correction/],
      [{ ...word, text: "x".repeat(61) }, 400, /at most 60 characters/],
      [{ ...word, text: "Meto\nprolol" }, 400, /line breaks/],
      [{ ...word, text: "Sacubitril", word_index: 3 }, 404, /not \(or no longer\) in the transcript/],
      [{ ...word, text: "Sacubitril", segment: "../x" }, 400, /No valid word/],
      [{ ...word, text: "Sacubitril", apply_to_all: "yes" }, 400, /field apply_to_all/],
      [{ ...base, action: "name_speaker", speaker: "S1", role: "chief" }, 400, /no such role/],
      [{ ...base, action: "name_speaker", speaker: "S1", name: "N".repeat(41) }, 400, /at most 40 characters/],
      [{ ...base, action: "name_speaker", speaker: "S9", role: "doctor" }, 404, /speaker is not/],
      [{ ...base, action: "merge_speakers", from: "S1" }, 400, /valid speaker/],
    ];
    for (const [body, status, detail] of cases) {
      const refused = await correct(client, body);
      expect([body, refused.status]).toEqual([body, status]);
      expect(refused.body.detail).toMatch(detail);
    }
    expect(await versionsOf(seeded.transcriptKey)).toEqual([]);
  });

  it("audits each confirmation and correction with who and when, never the text", async () => {
    const { client, userId } = await signIn("paul-neumann");
    const seeded = await seedUncertainTranscript(userId, LINES);
    await review(client, seeded.path);
    await correct(client, {
      transcript_key: seeded.transcriptKey,
      base_version: 1,
      action: "correct",
      segment: "t0p0",
      word_index: 2,
      text: "Sacubitril",
    });
    await correct(client, {
      transcript_key: seeded.transcriptKey,
      base_version: 2,
      action: "confirm",
      segment: "t1p0",
      word_index: 7,
    });
    await correct(client, {
      transcript_key: seeded.transcriptKey,
      base_version: 3,
      action: "name_speaker",
      speaker: "S1",
      role: "doctor",
    });
    const rows = (await auditRowsOf(userId)).filter((r) => r.entity_id === seeded.transcriptKey);
    expect(rows.map((r) => r.action)).toEqual([
      "transcript.review.read",
      "transcript.word.correct",
      "transcript.word.confirm",
      "transcript.speaker.name",
    ]);
    for (const row of rows) {
      expect(row).toMatchObject({ entity_type: "transcript", entity_id: seeded.transcriptKey, outcome: "success" });
      expect(row.at).toBeInstanceOf(Date);
      expect(JSON.stringify(row)).not.toMatch(/Sacubitril|Sakubitril|Ramipril|doctor/);
    }
  });
});
