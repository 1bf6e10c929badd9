import { expect } from "vitest";
import { appendVersion, insertLetter, insertProposal } from "~/models/letter.server";
import { insertLiveMessage } from "~/models/live-session.server";
import { getDb } from "~/models/db.server";
import { addVocabularyTerm } from "~/services/transcription/user-vocabulary.server";
import { languageCookie } from "~/services/web/i18n.server";
import { keepPendingPost } from "~/services/web/pending-post.server";
import { makeStorageKey } from "~/services/storage/storage.server";
import { reply, type FakeChatServer } from "./fake-openai-chat";
import { ALL_XSS, XSS } from "./injection-payloads";
import { seedTranscribedRecording } from "./letter-fixtures";
import { livePayload, putUpload, segment, stop } from "./live-save";
import { makeTextPdf } from "./pdf-fixtures";
import { serve } from "./remix-document";
import { toneWav } from "./wav";
import { APP_URL, request, signedInUser } from "../setup/app";

// One clinician whose every piece of data is hostile, made through the doors a browser uses (form posts and the
// JSON API, answered by the whole app) wherever a door exists, and with the models where a pipeline would run
// (transcription, letter generation). Then every screen can be rendered with it (injection-xss.test.ts).

export type Language = "de" | "en";

/** A signed-in browser: pages in a language, same-origin form posts and JSON calls, through the whole app. */
export async function browserFor(cookie: string) {
  const english = (await languageCookie().serialize("en")).split(";")[0];
  const same = { Origin: APP_URL, "Sec-Fetch-Site": "same-origin" };
  return {
    cookie,
    get: (path: string, language: Language = "de") =>
      serve(request(path, { cookie: language === "en" ? `${cookie}; ${english}` : cookie })),
    form: (path: string, fields: Record<string, string>) =>
      serve(
        request(path, {
          method: "POST",
          cookie,
          headers: { ...same, "Content-Type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams(fields).toString(),
        }),
      ),
    multipart: (path: string, body: FormData) => serve(request(path, { method: "POST", cookie, headers: same, body })),
    json: (path: string, method: string, body?: unknown) =>
      serve(
        request(path, {
          method,
          cookie,
          headers: { ...same, "Content-Type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      ),
  };
}
export type Browser = Awaited<ReturnType<typeof browserFor>>;

/** The hostile values, by where they were put: each screen's test names the ones it must show (as text). */
export const HOSTILE = {
  userName: `${XSS.breakout} ${XSS.img}`,
  fileName: `${XSS.img}.wav`,
  // No slash: the server keeps only the last path segment of an uploaded file's name.
  uploadName: `<svg onload=alert(1)>${XSS.template}.wav`,
  displayName: `${XSS.breakout} ${XSS.template}`,
  tags: [XSS.script, XSS.img, XSS.svg, XSS.link, XSS.breakout],
  spoken: ALL_XSS,
  context: `Vorbefund ${ALL_XSS}`,
  sectionTitle: XSS.svg,
  letter: `Anamnese ${ALL_XSS}`,
  edited: `Bearbeitet ${XSS.breakout}`,
  proposal: `Vorschlag ${XSS.img}`,
  instruction: `Kürzer ${XSS.svg}`,
  templateName: `${XSS.img} ${XSS.template}`,
  description: `${XSS.svg} ${XSS.breakout}`,
  templatePrompt: `Vorlage ${ALL_XSS}`,
  promptTitle: XSS.img,
  promptText: `Prompt ${ALL_XSS}`,
  question: `Frage ${ALL_XSS}`,
  answer: `Antwort ${ALL_XSS}`,
  pdfName: `${XSS.script}.pdf`,
  pdfText: XSS.svg,
  live: `Live ${ALL_XSS}`,
  liveName: `${XSS.img} live`,
  pending: `Gemerkt ${ALL_XSS}`,
  // At most 60 characters each, one line: the doctor's own vocabulary (issue 24).
  vocabulary: `${XSS.img} Begriff`,
  misheard: XSS.svg,
  // At most 120 characters, one line: the letterhead's practice name (issue 25).
  letterhead: `${XSS.breakout} Praxis`,
  // The export dialog's recipient, kept with the letter (issue 25).
  recipient: `Herrn ${XSS.breakout}`,
};

async function ok(answer: Promise<Response>, what: string) {
  const response = await answer;
  expect(response.status, `${what}: ${response.status}`).toBeLessThan(400);
  return response;
}

export async function seedHostileWorld(llm: () => FakeChatServer) {
  const { user, cookie } = await signedInUser({ email: "mallory@praxis-mallory.example", name: HOSTILE.userName });
  const browser = await browserFor(cookie);
  const ownerId = user.id;

  // A custom template, through the settings screen's form.
  await ok(
    browser.form("/settings/new?language=de-DE", {
      name: HOSTILE.templateName,
      "elements[0].name": "Befund",
      "elements[0].description": HOSTILE.description,
      prompt: HOSTILE.templatePrompt,
    }),
    "new template",
  );
  const template = await getDb()
    .selectFrom("custom_templates")
    .where("owner_id", "=", ownerId)
    .select("template_id")
    .executeTakeFirstOrThrow();

  // A transcribed recording with its context, then its letter (two versions) and a refinement proposal.
  const recording = await seedTranscribedRecording({
    ownerId,
    lines: [
      { speaker: "S1", text: HOSTILE.spoken },
      { speaker: "S2", text: XSS.svg },
    ],
    fileName: HOSTILE.fileName,
    templateId: template.template_id,
    context: [
      { kind: "text", text: HOSTILE.context },
      { kind: "pdf", text: HOSTILE.pdfText, sourceName: HOSTILE.pdfName },
    ],
  });
  const letterKey = makeStorageKey({ ownerId, area: "arztbriefe", extension: ".json" });
  const letter = await getDb()
    .transaction()
    .execute(async (trx) => {
      const row = await insertLetter(trx, {
        ownerId,
        recordingId: recording.recordingId,
        key: letterKey,
        templateId: template.template_id,
        language: "de-DE",
        tags: HOSTILE.tags,
      });
      const base = { letterId: row!.id, ownerId, authorId: ownerId, templateId: template.template_id };
      await appendVersion(trx, {
        ...base,
        version: 1,
        kind: "generated",
        content: { structured_output: [{ [HOSTILE.sectionTitle]: HOSTILE.letter }, { Befund: XSS.script }] },
      });
      await appendVersion(trx, {
        ...base,
        version: 2,
        kind: "edited",
        content: { structured_output: [{ [HOSTILE.sectionTitle]: HOSTILE.edited }, { Befund: XSS.script }] },
      });
      await trx.updateTable("letters").set({ current_version: 2 }).where("id", "=", row!.id).execute();
      return row!;
    });
  await getDb()
    .updateTable("recordings")
    .set({ medical_letter_status: "completed" })
    .where("id", "=", recording.recordingId)
    .execute();
  const proposal = await insertProposal({
    ownerId,
    letterId: letter.id,
    baseVersion: 2,
    scope: "all",
    sectionTitle: null,
    query: HOSTILE.instruction,
    content: { structured_output: [{ [HOSTILE.sectionTitle]: HOSTILE.proposal }, { Befund: XSS.script }] },
  });
  const letterParam = letterKey.replace(/^arztbriefe\//, "");

  // The recording's name and tags, through the audio screen's forms.
  const key = recording.sourceKey;
  await ok(browser.form("/?index", { intent: "rename", key, displayName: HOSTILE.displayName }), "rename");
  for (const tag of HOSTILE.tags) await ok(browser.form("/?index", { intent: "add-tag", key, tag }), `tag ${tag}`);

  // A saved prompt, through the letter editor's form.
  await ok(
    browser.form(`/arztbriefe/${letterParam}`, {
      intent: "savePrompt",
      title: HOSTILE.promptTitle,
      promptText: HOSTILE.promptText,
    }),
    "saved prompt",
  );

  // The letter exported as text for the practice software, its recipient kept, through the export dialog's form.
  await ok(
    browser.form(`/arztbriefe/export/${letterParam}`, {
      recipient_name: HOSTILE.recipient,
      format: "text",
      keep: "yes",
    }),
    "export",
  );

  // An upload under a hostile file name, through the JSON API and the signed storage URL.
  const slot = await (
    await ok(
      browser.json("/api/get-upload-url", "POST", {
        file_name: HOSTILE.uploadName,
        file_type: "audio/wav",
        language_code: "de",
      }),
      "upload url",
    )
  ).json();
  await putUpload(slot.url, toneWav(2), "audio/wav");
  await ok(browser.json("/api/update-file-metadata", "POST", { s3_key: slot.key }), "upload metadata");

  // A saved live recording and an unfinished one whose transcript the record tab offers.
  const results = [segment(HOSTILE.live, 0, "S1", 0.9), stop(1)];
  await ok(
    browser.json(
      "/api/save-realtime-transcript",
      "POST",
      livePayload({
        display_name: HOSTILE.liveName,
        transcript_data: { ...livePayload().transcript_data, results },
        additional_context: HOSTILE.context,
      }),
    ),
    "live save",
  );
  const live = await (
    await ok(browser.json("/live/sessions", "POST", { kind: "recording", language: "de" }), "live session")
  ).json();
  await getDb().updateTable("live_sessions").set({ buffers: 1 }).where("id", "=", live.id).execute();
  await insertLiveMessage(live.id, "final", { message: "AddTranscript", results });

  // The chat: a question with a PDF (hostile name and text), answered by the model with markup.
  llm().replies = [reply.text(HOSTILE.answer)];
  const chat = new FormData();
  chat.append("intent", "send");
  chat.append("question", HOSTILE.question);
  const pdf = await makeTextPdf([[HOSTILE.pdfText, XSS.script]]);
  chat.append("pdf", new File([new Uint8Array(pdf)], HOSTILE.pdfName, { type: "application/pdf" }));
  await ok(browser.multipart("/chat", chat), "chat");

  // The letterhead, saved through Settings › "Briefkopf" (a plain post: no logo).
  await ok(
    browser.form("/settings/letterhead", { intent: "save", practiceName: HOSTILE.letterhead, doctors: XSS.img }),
    "letterhead",
  );

  // The doctor's vocabulary: a term added by hand through the settings dialog's form, one taught by a correction
  // with what the engine had heard instead.
  await ok(
    browser.form("/settings/vocabulary", { intent: "add", term: HOSTILE.vocabulary, language: "de" }),
    "vocabulary",
  );
  await getDb()
    .transaction()
    .execute((trx) =>
      addVocabularyTerm(trx, { userId: ownerId, language: "en", content: "sacubitril", heard: HOSTILE.misheard }),
    );

  // A form kept after the session expired, offered again on the resume page.
  const pendingId = await keepPendingPost({
    userId: ownerId,
    request: request("/chat", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ intent: "send", question: HOSTILE.pending }).toString(),
    }),
  });

  return {
    user,
    browser,
    keys: {
      recordingKey: key,
      uploadKey: slot.key as string,
      transcriptParam: recording.transcriptKey.replace(/^transcripts\//, ""),
      letterKey,
      letterParam,
      proposalId: proposal.id,
      templateId: template.template_id,
      elementId: "befund",
      pendingId: pendingId!,
    },
  };
}
export type HostileWorld = Awaited<ReturnType<typeof seedHostileWorld>>;
