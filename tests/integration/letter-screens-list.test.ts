import { describe, expect, it } from "vitest";
import { action as editorAction } from "~/routes/_app.arztbriefe.$/route";
import { action as redoAction } from "~/routes/_app.arztbriefe.redo.$";
import { action as listAction } from "~/routes/_app.arztbriefe/route";
import { action as viewerAction } from "~/routes/_app.transcriptions.$";
import { action as transcriptionsAction } from "~/routes/_app.transcriptions/route";
import { getDb } from "~/models/db.server";
import { letterJobOf, letterStatusOf, seedTranscribedRecording } from "../support/letter-fixtures";
import { LINES, page, post, seedLetter, SOAP, titlesAndTexts, versionsOf } from "../support/letter-screens";
import { setupTestApp, signedInUser } from "../setup/app";

// The letter screens' server path (issue 6) around the editor: the Arztbriefe list with its delete, the redo dialog and
// the letter parts of the Transcriptions screens, called with real requests against a real database and rendered to
// HTML the way the server renders them (no JavaScript). Letters are inserted through the models
// (tests/support/letter-screens.ts), so no language model is needed. The editor itself: letter-screens-editor.test.ts
// and letter-screens-revisions.test.ts.
setupTestApp();

function toastOf(response: Response) {
  return response.headers.get("Set-Cookie") ?? "";
}

describe("the Arztbriefe list", () => {
  it("shows SPEC §4 status labels, the recording's name, a greyed processing row and a failed redo's reason", async () => {
    const { user, cookie } = await signedInUser({ email: "list@praxis.example" });
    const done = await seedLetter(user.id, { displayName: "Frau Becker" });
    const busy = await seedLetter(user.id, { status: "processing" });
    const redoFailed = await seedLetter(user.id);
    await getDb()
      .insertInto("letter_jobs")
      .values({
        owner_id: user.id,
        recording_id: redoFailed.recordingId,
        job_name: "letter-redo-failed",
        kind: "redo",
        template_id: "kurzbrief",
        status: "failed",
        error_key: "letters:errors.templateSwitchFailed",
        updated_at: new Date(),
      })
      .execute();
    const failed = await seedLetter(user.id, { status: "failed" });
    const structure = await seedLetter(user.id, { status: "structure_error" });
    const pending = await seedLetter(user.id, { status: "pending" });

    const { status, html } = await page("/arztbriefe", cookie);
    expect(status).toBe(200);
    const row = (key: string) => {
      const at = html.indexOf(`data-letter-row="${key}"`);
      return html.slice(html.lastIndexOf("<tr", at), html.indexOf("</tr>", at));
    };
    expect(row(done.key)).toContain("Frau Becker");
    expect(row(done.key)).toContain("Visite.wav");
    expect(row(done.key)).toContain("Document Created");
    expect(row(busy.key)).toMatch(/^<tr class="[^"]*opacity-60/);
    expect(row(busy.key)).toContain("Processing");
    expect(row(busy.key)).toContain("data-spinner");
    expect(row(busy.key)).toMatch(/<button[^>]*disabled=""[^>]*data-action="delete"/);
    expect(row(busy.key)).toMatch(/Recording #\d/);
    expect(row(redoFailed.key)).toContain("Document Created");
    expect(row(redoFailed.key)).toContain(
      "Template switch failed; this does not seem to be a structured document or dictation",
    );
    expect(row(failed.key)).toContain("Document creation error");
    expect(row(structure.key)).toContain("Invalid Document Structure");
    expect(row(pending.key)).toContain("Pending");
    expect(row(done.key)).toContain(`href="/arztbriefe/${done.path}"`);
    expect(row(done.key)).toContain(`href="/arztbriefe/redo/${done.path}"`);
    // Without JavaScript the list refreshes itself while something is processing.
    expect(html).toContain('<noscript><meta http-equiv="refresh" content="5"/></noscript>');
    // Each row once (issue 26), with its actions once: the table's row is the phone's card (.row-cards).
    expect(html.split(`data-letter-row="${done.key}"`)).toHaveLength(2);
    expect(html.split(`href="/arztbriefe/redo/${done.path}"`)).toHaveLength(2);
    expect(html).toMatch(/<table class="row-cards" role="table">/);
  });

  it("confirms a delete by saying what is lost, deletes the letter with its versions, and refuses while a job runs", async () => {
    const { user, cookie } = await signedInUser({ email: "delete@praxis.example" });
    const letter = await seedLetter(user.id);
    const confirm = await page(`/arztbriefe?delete=${encodeURIComponent(letter.key)}`, cookie);
    expect(confirm.html).toContain("data-confirm-delete");
    expect(confirm.html).toContain("The medical letter is deleted for good, with its only version.");
    expect(confirm.html).toContain("The recording and its transcript stay");
    // Not while processing (SPEC §4): a queued job makes the server refuse, and nothing is deleted.
    await getDb()
      .insertInto("letter_jobs")
      .values({
        owner_id: user.id,
        recording_id: letter.recordingId,
        job_name: "letter-busy",
        kind: "redo",
        template_id: "kurzbrief",
        status: "queued",
        updated_at: new Date(),
      })
      .execute();
    const refused = await post(listAction, "/arztbriefe", cookie, { intent: "delete", key: letter.key });
    expect(refused.status).toBe(409);
    expect((await refused.json()).error).toBe("The document is being created. Please wait until it is ready.");
    expect(await versionsOf(letter.key)).toHaveLength(1);
    await getDb().deleteFrom("letter_jobs").where("recording_id", "=", letter.recordingId).execute();

    const deleted = await post(listAction, "/arztbriefe", cookie, { intent: "delete", key: letter.key });
    expect(deleted.status).toBe(302);
    expect(toastOf(deleted)).toContain("skribent_toast");
    expect(await versionsOf(letter.key)).toHaveLength(0);
    expect((await letterStatusOf(letter.recordingId)).medical_letter_status).toBe("pending");
    const unknown = await post(listAction, "/arztbriefe", cookie, { intent: "nope" });
    expect(unknown.status).toBe(400);
  });
});

describe("redo with a different template", () => {
  it("offers the other templates of the letter's language, excludes the current one, and starts the job", async () => {
    const { user, cookie } = await signedInUser({ email: "redo@praxis.example" });
    const letter = await seedLetter(user.id);
    const dialog = await page(`/arztbriefe/redo/${letter.path}`, cookie);
    expect(dialog.status).toBe(200);
    expect(dialog.html).toContain('data-current-template="soap"');
    expect(dialog.html).not.toMatch(/name="templateId"[^>]*value="soap"/);
    expect(dialog.html).toMatch(/name="templateId"[^>]*value="kurzbrief"/);
    expect(dialog.html).toContain("The current text stays in the version history.");
    expect(dialog.html).not.toContain("additionalContext");

    const same = await page(`/arztbriefe/redo/${letter.path}`, cookie, { templateId: "soap" });
    expect(same.status).toBe(400);
    expect(same.html).toContain("Please choose a different template than the current one.");

    const started = await post(
      redoAction,
      `/arztbriefe/redo/${letter.path}`,
      cookie,
      { templateId: "kurzbrief" },
      {
        "*": letter.path,
      },
    );
    expect(started.status).toBe(302);
    expect(started.headers.get("Location")).toBe("/arztbriefe");
    expect((await letterStatusOf(letter.recordingId)).medical_letter_status).toBe("processing");
    expect((await letterJobOf(letter.recordingId))?.kind).toBe("redo");
    // Busy: the editor is read-only and the list row greyed.
    const editor = await page(letter.editor, cookie);
    expect(editor.html).toContain("data-letter-busy");
    expect(editor.html).not.toContain('data-action="save"');
    const refused = await post(
      editorAction,
      letter.editor,
      cookie,
      {
        intent: "save",
        base_version: "1",
        ...titlesAndTexts(SOAP),
      },
      { "*": letter.path },
    );
    expect(refused.status).toBe(409);
  });

  it("says 'Template information missing for redo' when the template is unknown", async () => {
    const { user, cookie } = await signedInUser({ email: "notemplate@praxis.example" });
    const letter = await seedLetter(user.id, { templateId: null });
    const dialog = await page(`/arztbriefe/redo/${letter.path}`, cookie);
    expect(dialog.html).toContain("Template information missing for redo");
    expect(dialog.html).not.toContain('name="templateId"');
    expect(dialog.html).toContain("data-problem");
    const posted = await post(
      redoAction,
      `/arztbriefe/redo/${letter.path}`,
      cookie,
      { templateId: "kurzbrief" },
      {
        "*": letter.path,
      },
    );
    expect(posted.status).toBe(400);
    expect((await posted.json()).error).toBe("Template information missing for redo");
  });
});

describe("letters on the Transcriptions screens", () => {
  it("shows the letter status, creates a letter once, links to an existing one, and gives the not-a-patient notice", async () => {
    const { user, cookie } = await signedInUser({ email: "transcripts@praxis.example" });
    const fresh = await seedTranscribedRecording({ ownerId: user.id, lines: LINES, templateId: "soap" });
    const withLetter = await seedLetter(user.id);
    const notPatient = await seedTranscribedRecording({ ownerId: user.id, lines: LINES, templateId: "soap" });
    await getDb()
      .updateTable("recordings")
      .set({ medical_letter_status: "failed" })
      .where("id", "=", notPatient.recordingId)
      .execute();
    await getDb()
      .insertInto("letter_jobs")
      .values({
        owner_id: user.id,
        recording_id: notPatient.recordingId,
        job_name: "letter-not-patient",
        kind: "create",
        template_id: "soap",
        status: "failed",
        error_key: "letters:errors.notPatientConversation",
        updated_at: new Date(),
      })
      .execute();

    const list = await page("/transcriptions", cookie);
    expect(list.html).toContain("Letter status");
    expect(list.html).toContain(`href="/arztbriefe/${withLetter.path}"`);
    expect(list.html).toContain("Document Created");
    expect(list.html).toContain("This recording contains neither a patient conversation nor a doctor dictation");
    expect(list.html).toContain(`name="key" value="${fresh.sourceKey}"`);

    const created = await post(transcriptionsAction, "/transcriptions", cookie, {
      intent: "createLetter",
      key: fresh.sourceKey,
    });
    expect(created.status).toBe(302);
    expect(created.headers.get("Location")).toBe("/transcriptions");
    expect((await letterStatusOf(fresh.recordingId)).medical_letter_status).toBe("processing");
    const job = await letterJobOf(fresh.recordingId);
    expect(job?.kind).toBe("create");
    // A second click starts nothing new.
    await post(transcriptionsAction, "/transcriptions", cookie, { intent: "createLetter", key: fresh.sourceKey });
    expect((await letterJobOf(fresh.recordingId))?.id).toBe(job?.id);

    const refreshed = await page("/transcriptions", cookie);
    expect(refreshed.html).toContain('data-letter-status="processing"');
    expect(refreshed.html).toMatch(/<button[^>]*disabled=""[^>]*data-action="create-letter"/);
    expect(refreshed.html).toContain('<noscript><meta http-equiv="refresh" content="5"/></noscript>');

    // The viewer offers "Create document" for the not-a-patient recording and the way to an existing letter.
    const viewerPath = `/transcriptions/${notPatient.transcriptKey.replace(/^transcripts\//, "")}`;
    const viewer = await page(viewerPath, cookie);
    expect(viewer.html).toContain("data-viewer-letter");
    expect(viewer.html).toContain("Create document");
    expect(viewer.html).toContain("This recording contains neither a patient conversation nor a doctor dictation");
    const again = await post(
      viewerAction,
      viewerPath,
      cookie,
      { intent: "createLetter" },
      { "*": notPatient.transcriptKey.replace(/^transcripts\//, "") },
    );
    expect(again.status).toBe(302);
    expect(again.headers.get("Location")).toBe(viewerPath);
    const letterViewer = await page(
      `/transcriptions/${withLetter.transcriptKey.replace(/^transcripts\//, "")}`,
      cookie,
    );
    expect(letterViewer.html).toContain(`href="/arztbriefe/${withLetter.path}"`);
    expect(letterViewer.html).toContain('data-action="open-letter"');
  });
});
