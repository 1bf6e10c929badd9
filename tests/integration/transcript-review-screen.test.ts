import { describe, expect, it } from "vitest";
import { action as viewerAction, loader as viewerLoader } from "~/routes/_app.transcriptions.$";
import { getTranscript } from "~/services/transcription/transcripts.server";
import { page, post } from "../support/letter-screens";
import {
  auditRowsOf,
  seedUncertainTranscript,
  storedDocument,
  versionsOf,
  vocabularyOf,
} from "../support/transcript-corrections";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// The transcript page's corrections without JavaScript (issue 24): the review steps through the uncertain words with
// the audio of each moment, a fix saves a version and shows the next word, identical occurrences change together, a
// stale form is refused with 409 and keeps what was typed, and speakers are named, merged and given a paragraph with
// plain forms. Rendered to HTML the way the server renders it (tests/support/letter-screens.ts), in English.
setupTestApp();

const LINES = [
  { speaker: "S1", text: "Nehmen Sie ~Sakubitril ?" },
  { speaker: "S2", text: "Ja , Sakubitril und ~Sakubitril retard , dazu ?Ramipril ." },
];

function decoded(html: string) {
  return html
    .replace(/&amp;/g, "&")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'");
}

describe("the review of uncertain words", () => {
  it("shows one word at a time in its sentence, with its moment of audio, progress, and Skip/Back", async () => {
    const { user, cookie } = await signedInUser({ email: "review@praxis.example" });
    const seeded = await seedUncertainTranscript(user.id, LINES);
    const viewer = await page(seeded.viewer, cookie);
    expect(viewer.status).toBe(200);
    expect(viewer.html).toContain(`href="${seeded.viewer}?review=1"`);
    expect(viewer.html).toContain("Review uncertain words (3)");

    const first = await page(`${seeded.viewer}?review=1`, cookie);
    expect(first.status).toBe(200);
    const html = decoded(first.html);
    expect(html).toMatch(/data-review-progress="?[^>]*>1 \/ 3</);
    expect(html).toContain("Nehmen Sie <mark");
    expect(html).toMatch(/data-review-word="?[^>]*>Sakubitril<\/mark>\?/);
    expect(html).toContain("Low recognition confidence");
    // The native player plays a second before to a second after the word (2 s to 2.5 s).
    expect(html).toMatch(/<audio[^>]*src="[^"]*#t=1,3.5"/);
    expect(html).toContain('name="base_version" value="1"');
    expect(html).toContain('name="segment" value="t0p0"');
    expect(html).toContain('name="index" value="2"');
    expect(html).toContain("Apply to all 3 identical occurrences");
    expect(html).toMatch(/name="add_to_vocabulary"[^>]*checked/);
    expect(html).toContain(`href="${seeded.viewer}?review=2"`);
    expect(html).not.toContain("data-review-back");

    const last = decoded((await page(`${seeded.viewer}?review=99`, cookie)).html);
    expect(last).toMatch(/>3 \/ 3</);
    expect(last).toContain("Ramipril");
    expect(last).toContain("A term from the vocabulary, recognised only uncertainly");
    expect(last).toContain(`href="${seeded.viewer}?review=2"`);
    expect(last).not.toContain("data-review-skip");
  });

  it("saves a fix as a new version at every identical occurrence and goes on to the next word", async () => {
    const { user, cookie } = await signedInUser({ email: "fix@praxis.example" });
    const seeded = await seedUncertainTranscript(user.id, LINES);
    const recognised = JSON.stringify(await storedDocument(seeded.transcriptKey));
    const saved = await post(
      viewerAction,
      `${seeded.viewer}?review=1`,
      cookie,
      {
        intent: "correctWord",
        base_version: "1",
        segment: "t0p0",
        index: "2",
        review: "1",
        text: "Sacubitril",
        apply_to_all: "yes",
      },
      { "*": seeded.path },
    );
    expect(saved.status).toBe(302);
    expect(saved.headers.get("Location")).toBe(`${seeded.viewer}?review=1`);
    expect(JSON.stringify(await storedDocument(seeded.transcriptKey))).toBe(recognised);
    const { document, version } = await getTranscript({ userId: user.id, key: seeded.transcriptKey });
    expect(version).toBe(2);
    expect(document.raw_transcript).toBe("Nehmen Sie Sacubitril? Ja, Sacubitril und Sacubitril retard, dazu Ramipril.");

    const next = decoded((await page(`${seeded.viewer}?review=1`, cookie)).html);
    expect(next).toMatch(/>1 \/ 1</);
    expect(next).toContain('name="base_version" value="2"');
    const confirmed = await post(
      viewerAction,
      `${seeded.viewer}?review=1`,
      cookie,
      { intent: "confirmWord", base_version: "2", segment: "t1p0", index: "8", review: "1", text: "Ramipril" },
      { "*": seeded.path },
    );
    expect(confirmed.status).toBe(302);
    const done = decoded((await page(`${seeded.viewer}?review=1`, cookie)).html);
    expect(done).toContain("All uncertain words have been reviewed.");
    // The viewer says which version it shows and keeps the recognised one a link away.
    const viewer = decoded((await page(seeded.viewer, cookie)).html);
    expect(viewer).toContain("Corrected version (version 3)");
    const recognisedView = decoded((await page(`${seeded.viewer}?version=recognised`, cookie)).html);
    expect(recognisedView).toContain("You are looking at the recognised version");
    expect(recognisedView).toContain("Nehmen Sie");
    expect(recognisedView).toMatch(/>Sakubitril<\/mark>/);
    expect(recognisedView).not.toContain('name="intent" value="nameSpeaker"');
    expect((await auditRowsOf(user.id)).map((r) => r.action)).toContain("transcript.word.correct");
  });

  it("asks about a word no dictionary knows, and a confirmation with the box ticked teaches the vocabulary", async () => {
    const { user, cookie } = await signedInUser({ email: "unknown-word@praxis.example" });
    const seeded = await seedUncertainTranscript(user.id, LINES);
    const first = decoded((await page(`${seeded.viewer}?review=1`, cookie)).html);
    expect(first).toContain("Low recognition confidence");
    expect(first).toContain("A word no dictionary knows – often a misheard term or name");
    expect(first).toContain("words no dictionary knows.");
    const confirmed = await post(
      viewerAction,
      `${seeded.viewer}?review=1`,
      cookie,
      {
        intent: "confirmWord",
        base_version: "1",
        segment: "t0p0",
        index: "2",
        review: "1",
        apply_to_all: "yes",
        add_to_vocabulary: "yes",
      },
      { "*": seeded.path },
    );
    expect(confirmed.status).toBe(302);
    expect((await vocabularyOf(user.id)).map((v) => v.content)).toEqual(["Sakubitril"]);
    // Only Ramipril is left to look at; Sakubitril is the doctor's term now, at every occurrence.
    const next = decoded((await page(`${seeded.viewer}?review=1`, cookie)).html);
    expect(next).toMatch(/>1 \/ 1</);
    expect(next).toMatch(/data-review-word="?[^>]*>Ramipril<\/mark>/);
  });

  it("refuses a stale form with 409 and a bad fix with 400, keeping what was typed", async () => {
    const { user, cookie } = await signedInUser({ email: "stale@praxis.example" });
    const seeded = await seedUncertainTranscript(user.id, LINES);
    const fields = { intent: "correctWord", segment: "t0p0", index: "2", review: "1" };
    await post(
      viewerAction,
      seeded.viewer,
      cookie,
      { ...fields, base_version: "1", text: "Sacubitril" },
      {
        "*": seeded.path,
      },
    );
    const stale = await page(`${seeded.viewer}?review=1`, cookie, { ...fields, base_version: "1", text: "Entresto" });
    expect(stale.status).toBe(409);
    expect(decoded(stale.html)).toContain("The transcript was changed in the meantime");
    expect(stale.html).toContain('value="Entresto"');
    const blank = await page(`${seeded.viewer}?review=1`, cookie, { ...fields, base_version: "2", text: " " });
    expect(blank.status).toBe(400);
    expect(blank.html).toContain("Please type the correction.");
    const long = await page(`${seeded.viewer}?review=1`, cookie, {
      ...fields,
      base_version: "2",
      text: "x".repeat(61),
    });
    expect(long.status).toBe(400);
    expect(long.html).toContain("at most 60 characters");
    expect(await versionsOf(seeded.transcriptKey)).toHaveLength(1);
  });

  it("is another user's transcript: 404 for the page, the review and every form", async () => {
    const { user } = await signedInUser({ email: "owner@praxis.example" });
    const other = await signedInUser({ email: "other@praxis.example" });
    const seeded = await seedUncertainTranscript(user.id, LINES);
    const read = await callRoute(viewerLoader, request(`${seeded.viewer}?review=1`, { cookie: other.cookie }), {
      "*": seeded.path,
    });
    expect(read.status).toBe(404);
    expect(await read.text()).not.toContain("Sakubitril");
    const forms: Array<Record<string, string>> = [
      { intent: "correctWord", base_version: "1", segment: "t0p0", index: "2", review: "1", text: "Sacubitril" },
      { intent: "nameSpeaker", base_version: "1", speaker: "S1", role: "doctor", name: "" },
      { intent: "moveSegment", base_version: "1", segment: "t0p0", to: "S2" },
    ];
    for (const fields of forms) {
      const refused = await post(viewerAction, seeded.viewer, other.cookie, fields, { "*": seeded.path });
      expect(refused.status).toBe(404);
    }
    expect(await versionsOf(seeded.transcriptKey)).toEqual([]);
  });
});

describe("the speakers on the transcript page", () => {
  it("are named, merged and given a paragraph with plain forms, and the viewer shows the names", async () => {
    const { user, cookie } = await signedInUser({ email: "speakers@praxis.example" });
    const seeded = await seedUncertainTranscript(user.id, [
      { speaker: "S1", text: "Guten Tag ." },
      { speaker: "S2", text: "Hallo ." },
      { speaker: "S3", text: "Ich bin die Tochter ." },
    ]);
    const viewer = await page(seeded.viewer, cookie);
    expect(viewer.html).toContain('name="intent" value="nameSpeaker"');
    expect(viewer.html).toContain('name="intent" value="mergeSpeakers"');
    expect(viewer.html).toContain('data-move-segment="t1p0"');
    expect(viewer.html).toContain('id="seg-t2p0"');

    const at = { "*": seeded.path };
    const named = await post(
      viewerAction,
      seeded.viewer,
      cookie,
      { intent: "nameSpeaker", base_version: "1", speaker: "S1", role: "doctor", name: "" },
      at,
    );
    expect(named.status).toBe(302);
    await post(
      viewerAction,
      seeded.viewer,
      cookie,
      { intent: "nameSpeaker", base_version: "2", speaker: "S2", role: "patient", name: "Herr Roth" },
      at,
    );
    await post(
      viewerAction,
      seeded.viewer,
      cookie,
      { intent: "mergeSpeakers", base_version: "3", from: "S3", into: "S2" },
      at,
    );
    await post(
      viewerAction,
      seeded.viewer,
      cookie,
      { intent: "moveSegment", base_version: "4", segment: "t1p0", to: "S1" },
      at,
    );

    const after = decoded((await page(seeded.viewer, cookie)).html);
    expect(after).toMatch(/data-speaker-label="?[^>]*>Doctor</);
    expect(after).toMatch(/data-speaker-label="?[^>]*>Herr Roth</);
    expect(after).not.toContain(">Speaker 3<");
    const { document } = await getTranscript({ userId: user.id, key: seeded.transcriptKey });
    expect(document.formatted_transcript).toBe(
      "Ärztin/Arzt:\nGuten Tag.\n\nÄrztin/Arzt:\nHallo.\n\nHerr Roth:\nIch bin die Tochter.",
    );

    const bad = await page(seeded.viewer, cookie, {
      intent: "nameSpeaker",
      base_version: "5",
      speaker: "S1",
      role: "surgeon",
      name: "",
    });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain("There is no such role.");
    const same = await page(seeded.viewer, cookie, {
      intent: "mergeSpeakers",
      base_version: "5",
      from: "S1",
      into: "S1",
    });
    expect(same.status).toBe(400);
    expect(same.html).toContain("Please choose two different speakers.");

    // A name is text wherever it shows: the page, the highlighted transcript.
    const hostile = "<img src=x onerror=alert(1)>";
    await post(
      viewerAction,
      seeded.viewer,
      cookie,
      { intent: "nameSpeaker", base_version: "5", speaker: "S1", role: "", name: hostile },
      at,
    );
    const shown = await page(seeded.viewer, cookie);
    expect(shown.html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(shown.html).not.toContain(hostile);
    const current = await getTranscript({ userId: user.id, key: seeded.transcriptKey });
    expect(current.document.highlighted_transcript).toContain("<h3>&lt;img src=x onerror=alert(1)&gt;</h3>");
  });
});
