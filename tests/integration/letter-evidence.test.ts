import { describe, expect, it } from "vitest";
import { action as editorAction } from "~/routes/_app.arztbriefe.$/route";
import { action as evidenceAction, loader as evidenceLoader } from "~/routes/api.arztbrief-evidence.$";
import { getDb } from "~/models/db.server";
import type { StoredLetterContent } from "~/models/schema";
import { CHECKED_CONSULTATION, page, post, seedLetter, versionsOf } from "../support/letter-screens";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";
import { expectConsoleError } from "../setup/console";

// The letter editor's check (issue 24), on the server path without JavaScript: every sentence with the transcript
// segments it rests on, the flags the independent checker raises (no support; a dose that differs), the facts the
// letter left out, a doctor's confirmation of a flag, an omission turned into a proposal, and the doctor's own
// wording shown as not checked. Letters are inserted through the models (no language model needed).
setupTestApp();

const LETTER: StoredLetterContent = {
  structured_output: [
    { Anamnese: "Kein Fieber, kein Husten. Seit zwei Wochen Rückenschmerzen nach einem Sturz." },
    { Medikation: "Ramipril 10 mg morgens." },
    { Allergien: "Keine Informationen gefunden" },
  ],
};

async function letterForCheck(email: string) {
  const { user, cookie } = await signedInUser({ email });
  const letter = await seedLetter(user.id, { content: LETTER, lines: CHECKED_CONSULTATION });
  return { user, cookie, letter };
}

/** The check's item of the sentence with this text: its status, flags and sources. */
function sentence(html: string, text: string) {
  const item = html
    .split(/(?=<li [^>]*data-sentence=)/)
    .slice(1)
    .map((chunk) => chunk.split("</ol></section>")[0]!)
    .find((chunk) => chunk.includes(`>${text}<`));
  expect(item, `sentence “${text}” on the page`).toBeDefined();
  return item!;
}

/** The doctor replaces the model's unsupported sentence with one of their own (version 2); that sentence. */
async function saveOwnSentence(letter: { editor: string; path: string }, cookie: string) {
  const own = "Rückenschmerzen seit dem Umzug, laut Angehörigen.";
  const saved = await post(
    editorAction,
    letter.editor,
    cookie,
    {
      intent: "save",
      base_version: "1",
      title: ["Anamnese", "Medikation", "Allergien"],
      text: [`Kein Fieber, kein Husten. ${own}`, "Ramipril 10 mg morgens.", "Keine Informationen gefunden"],
    },
    { "*": letter.path },
  );
  expect(saved.status).toBe(302);
  return own;
}

function confirmationsOf(letterKey: string) {
  return getDb()
    .selectFrom("letter_confirmations")
    .innerJoin("letters", "letters.id", "letter_confirmations.letter_id")
    .where("letters.storage_key", "=", letterKey)
    .select(["letter_confirmations.flag_kind", "letter_confirmations.sentence_hash"])
    .execute();
}

describe("the letter check", () => {
  it("counts what is left to verify in the editor's header and links to the check", async () => {
    const { cookie, letter } = await letterForCheck("check-header@praxis.example");
    const { status, html } = await page(letter.editor, cookie);
    expect(status).toBe(200);
    expect(html).toContain('data-evidence-summary="open"');
    expect(html).toContain("1 statement without evidence");
    expect(html).toContain("1 differing detail");
    expect(html).toMatch(/possible omission/);
    expect(html).toContain(`href="${letter.editor}?check=1"`);
  });

  it("shows each sentence with its sources in the transcript, and flags the unsupported one and the changed dose", async () => {
    const { cookie, letter } = await letterForCheck("check-view@praxis.example");
    const { status, html } = await page(`${letter.editor}?check=1`, cookie);
    expect(status).toBe(200);
    const transcriptPath = `/transcriptions/${letter.transcriptKey.replace(/^transcripts\//, "")}`;

    const fever = sentence(html, "Kein Fieber, kein Husten.");
    expect(fever).toContain('data-status="supported"');
    // The patient's answer (turn 3, paragraph 0) is where it was said.
    expect(fever).toContain(`href="${transcriptPath}#seg-t3p0"`);
    expect(fever).toContain("Nein, kein Fieber und kein Husten.");
    expect(fever).not.toContain("data-flag");

    const invented = sentence(html, "Seit zwei Wochen Rückenschmerzen nach einem Sturz.");
    expect(invented).toContain('data-status="unsupported"');
    expect(invented).toContain('data-flag="unsupported"');

    const dose = sentence(html, "Ramipril 10 mg morgens.");
    expect(dose).toContain('data-flag="dose"');
    expect(dose).toContain(`href="${transcriptPath}#seg-t1p0"`);

    // Allergies: the section says nothing although the patient named one.
    expect(html).toContain('data-empty-section="Allergien"');
  });

  it("keeps a confirmed flag confirmed, counts it no longer, and audits which flag without the text", async () => {
    const { user, cookie, letter } = await letterForCheck("check-confirm@praxis.example");
    const before = await page(`${letter.editor}?check=1`, cookie);
    const doseHash = /data-sentence="([0-9a-f]{32})"/.exec(sentence(before.html, "Ramipril 10 mg morgens."))![1]!;
    const confirmed = await post(
      editorAction,
      `${letter.editor}?check=1`,
      cookie,
      { intent: "confirmFlag", sentence: doseHash!, flag: "dose" },
      { "*": letter.path },
    );
    expect(confirmed.status).toBe(302);
    expect(await confirmationsOf(letter.key)).toEqual([{ flag_kind: "dose", sentence_hash: doseHash }]);
    const after = await page(`${letter.editor}?check=1`, cookie);
    expect(sentence(after.html, "Ramipril 10 mg morgens.")).toContain("data-confirmed");
    expect(after.html).not.toContain("differing detail");
    expect(after.html).toContain("1 statement without evidence");

    const rows = await getDb()
      .selectFrom("audit_events")
      .where("user_id", "=", user.id)
      .where("action", "like", "letter.confirm.%")
      .selectAll()
      .execute();
    expect(rows.map((r) => [r.action, r.entity_id, r.outcome])).toEqual([
      ["letter.confirm.dose", letter.key, "success"],
    ]);
    expect(JSON.stringify(rows)).not.toContain("Ramipril");
  });

  it("refuses to confirm a wording the letter no longer has, with a message, and changes nothing", async () => {
    const { cookie, letter } = await letterForCheck("check-stale@praxis.example");
    const response = await post(
      editorAction,
      `${letter.editor}?check=1`,
      cookie,
      { intent: "confirmFlag", sentence: "0".repeat(32), flag: "dose" },
      { "*": letter.path },
    );
    expect(response.status).toBe(404);
    expect((await response.json()).error).toBe("This statement has changed meanwhile. The check was recalculated.");
    expect(await confirmationsOf(letter.key)).toEqual([]);
  });

  it("shows the doctor's own wording as not checked, while the other sentences keep their sources", async () => {
    const { cookie, letter } = await letterForCheck("check-edit@praxis.example");
    await saveOwnSentence(letter, cookie);
    const { html } = await page(`${letter.editor}?check=1`, cookie);
    const own = sentence(html, "Rückenschmerzen seit dem Umzug, laut Angehörigen.");
    expect(own).toContain('data-status="doctor"');
    expect(own).toContain("Your wording – not checked");
    expect(own).not.toContain("data-source");
    expect(sentence(html, "Kein Fieber, kein Husten.")).toContain('data-status="supported"');
    // The unsupported sentence was the model's; the doctor's replacement is not counted as one.
    expect(html).not.toContain("statement without evidence");
  });

  it("turns a listed omission into a proposal for its section, and leaves the letter as it is", async () => {
    const { cookie, letter } = await letterForCheck("check-omission@praxis.example");
    const check = await page(`${letter.editor}?check=1`, cookie);
    const forms = [...check.html.matchAll(/name="omission" value="(\d+)"/g)].map((m) => m[1]!);
    expect(forms.length).toBeGreaterThan(0);
    const proposed = await post(
      editorAction,
      `${letter.editor}?check=1`,
      cookie,
      { intent: "proposeOmission", omission: forms[0]! },
      { "*": letter.path },
    );
    expect(proposed.status).toBe(302);
    expect(proposed.headers.get("Location")).toMatch(new RegExp(`^${letter.editor}\\?proposal=`));
    expect(await versionsOf(letter.key)).toHaveLength(1);
    const proposal = await page(proposed.headers.get("Location")!, cookie);
    expect(proposal.html).toContain("Add omitted detail");
  });

  it("keeps the doctor's own wording theirs when an accepted proposal stores the whole letter again", async () => {
    const { cookie, letter } = await letterForCheck("check-accept@praxis.example");
    const own = await saveOwnSentence(letter, cookie);
    const check = await page(`${letter.editor}?check=1`, cookie);
    const allergy = [...check.html.matchAll(/data-omission="allergy"[\s\S]*?name="omission" value="(\d+)"/g)];
    expect(allergy, "the penicillin allergy listed as an omission").toHaveLength(1);
    const proposed = await post(
      editorAction,
      `${letter.editor}?check=1`,
      cookie,
      { intent: "proposeOmission", omission: allergy[0]![1]! },
      { "*": letter.path },
    );
    const proposalId = new URL(proposed.headers.get("Location")!, "http://x").searchParams.get("proposal")!;
    const accepted = await post(
      editorAction,
      letter.editor,
      cookie,
      { intent: "accept", proposalId },
      { "*": letter.path },
    );
    expect(accepted.status).toBe(302);
    expect((await versionsOf(letter.key)).map((v) => v.kind)).toEqual(["generated", "edited", "refined"]);

    const { html } = await page(`${letter.editor}?check=1`, cookie);
    // The doctor's sentence is still theirs, not the model's: no flag, nothing to confirm.
    expect(sentence(html, own)).toContain('data-status="doctor"');
    expect(html).not.toContain("statement without evidence");
    // What the proposal brought in is checked like any machine-written sentence, and the omission is gone.
    const added = html.match(/<li [^>]*data-sentence=[^>]*data-status="(\w+)"[^>]*>(?:(?!<\/li>)[\s\S])*?Penicillin/);
    expect(added?.[1]).toBe("supported");
    expect(html).not.toContain('data-omission="allergy"');
  });

  it("gives the structured editor each stored sentence's evidence for the caret panel, and no evidence of nothing", async () => {
    const { cookie, letter } = await letterForCheck("check-caret@praxis.example");
    const { html } = await page(letter.editor, cookie);
    const panel = html.match(/<aside [^>]*data-sentence-panel[^>]*>/)?.[0];
    const attribute = panel?.match(/ data-evidence="([^"]*)"/)?.[1];
    expect(attribute, "the panel with its data").toBeDefined();
    const data = JSON.parse(attribute!.replace(/&quot;/g, '"').replace(/&amp;/g, "&")) as {
      transcriptPath: string;
      segments: Record<string, [string, number, string]>;
      sections: Array<Array<{ text: string; status: string; sources: string[] }>>;
    };
    expect(data.transcriptPath).toBe(`/transcriptions/${letter.transcriptKey.replace(/^transcripts\//, "")}`);
    const fever = data.sections[0]!.find((s) => s.text === "Kein Fieber, kein Husten.");
    expect(fever).toMatchObject({ status: "supported", sources: ["t3p0"] });
    expect(data.segments.t3p0).toEqual([expect.any(String), expect.any(Number), "Nein, kein Fieber und kein Husten."]);
    // The unsupported sentence's nearest passages are not offered as evidence.
    const fall = data.sections[0]!.find((s) => s.text.startsWith("Seit zwei Wochen"));
    expect(fall).toMatchObject({ status: "unsupported", sources: [] });
    // Another view or mode has no panel.
    expect((await page(`${letter.editor}?view=text`, cookie)).html).not.toContain("data-sentence-panel");
  });

  it("is another user's letter: a 404, nothing confirmed", async () => {
    const { letter } = await letterForCheck("check-owner@praxis.example");
    const other = await signedInUser({ email: "check-other@praxis.example" });
    expectConsoleError();
    expect((await page(`${letter.editor}?check=1`, other.cookie)).status).toBe(404);
    const response = await post(
      editorAction,
      `${letter.editor}?check=1`,
      other.cookie,
      { intent: "confirmFlag", sentence: "0".repeat(32), flag: "dose" },
      { "*": letter.path },
    ).catch((thrown: unknown) => thrown as Response);
    expect(response.status).toBe(404);
    expect(await confirmationsOf(letter.key)).toEqual([]);
  });
});

/** The JSON API with the app's session cookie (as its own scripts call it): GET, or POST with a JSON body. */
async function api(path: string, cookie: string, body?: unknown) {
  const params = { "*": path };
  const url = `/api/arztbrief-evidence/${path}`;
  if (body === undefined) return callRoute(evidenceLoader, request(url, { cookie }), params);
  const init = {
    cookie,
    method: "POST",
    headers: { "Content-Type": "application/json", "Sec-Fetch-Site": "same-origin" },
    body: JSON.stringify(body),
  };
  return callRoute(evidenceAction, request(url, init), params);
}

describe("the letter check over the JSON API", () => {
  it("answers every sentence with its status, flags and segments, the omissions and the counts", async () => {
    const { cookie, letter } = await letterForCheck("check-api@praxis.example");
    const response = await api(letter.path, cookie);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({ key: letter.key, available: true, transcript_key: letter.transcriptKey });
    expect(body.counts).toMatchObject({ unsupported: 1, flagged: 1 });
    const sentences = body.sections.flatMap((s: { sentences: unknown[] }) => s.sentences);
    expect(sentences.find((s: { text: string }) => s.text === "Ramipril 10 mg morgens.")).toMatchObject({
      status: "supported",
      flags: [{ kind: "dose", text: "10", confirmed: false }],
      sources: [{ segment_id: "t1p0", speaker: "Sprecher 2", text: "Ramipril 5 Milligramm morgens, sonst nichts." }],
    });
    expect(body.omissions).toContainEqual(
      expect.objectContaining({ kind: "allergy", section: "Allergien", empty_section: true }),
    );
  });

  it("confirms a flag once, refuses an unknown kind of flag with the allowed ones, and proposes an omission", async () => {
    const { cookie, letter } = await letterForCheck("check-api-write@praxis.example");
    const body = await (await api(letter.path, cookie)).json();
    const dose = body.sections[1].sentences[0];
    const first = await api(letter.path, cookie, { action: "confirm", sentence: dose.hash, flag: "dose" });
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ confirmed: true, already_confirmed: false });
    const again = await api(letter.path, cookie, { action: "confirm", sentence: dose.hash, flag: "dose" });
    expect(await again.json()).toMatchObject({ confirmed: true, already_confirmed: true });
    expect((await (await api(letter.path, cookie)).json()).counts.flagged).toBe(0);

    const unknown = await api(letter.path, cookie, { action: "confirm", sentence: dose.hash, flag: "mood" });
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).detail).toBe(
      "Unknown kind of flag. Allowed: unsupported, number, dose, date, side, negation, citation.",
    );

    const proposed = await api(letter.path, cookie, { action: "propose_omission", omission: 0 });
    expect(proposed.status).toBe(201);
    const { proposal_id } = await proposed.json();
    const proposal = await getDb()
      .selectFrom("letter_proposals")
      .where("id", "=", proposal_id)
      .select(["query", "section_title", "status"])
      .executeTakeFirstOrThrow();
    expect(proposal).toMatchObject({ section_title: "Allergien", status: "open" });
    expect(proposal.query).toMatch(/^Add omitted detail \(Allergy\): .*Penicillin/);
    expect(await versionsOf(letter.key)).toHaveLength(1);
  });

  it("is another user's letter: a 404 for reading and confirming", async () => {
    const { letter } = await letterForCheck("check-api-owner@praxis.example");
    const other = await signedInUser({ email: "check-api-other@praxis.example" });
    expect((await api(letter.path, other.cookie)).status).toBe(404);
    const confirm = await api(letter.path, other.cookie, { action: "confirm", sentence: "0".repeat(32), flag: "dose" });
    expect(confirm.status).toBe(404);
    expect(await confirmationsOf(letter.key)).toEqual([]);
  });
});
