import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { recordCitations } from "~/models/letter-citation.server";
import { keepExportDetails } from "~/models/letter-export.server";
import { sql } from "kysely";
import { finishAnswer, insertChatContext, insertChatTurn } from "~/models/chat.server";
import { appendVersion, insertLetter, insertProposal } from "~/models/letter.server";
import type { StoredLetterContent } from "~/models/schema";
import { action as createLiveAction } from "~/routes/live.sessions";
import { action as customTemplateAction } from "~/routes/api.structure.custom-template";
import { action as pdfUrlsAction } from "~/routes/api.get-pdf-upload-urls";
import { action as uploadUrlAction } from "~/routes/api.get-upload-url";
import { action as promptsAction } from "~/routes/api.prompts";
import { action as transcribeAction } from "~/routes/api.transcribe_v2";
import { action as metadataAction } from "~/routes/api.update-file-metadata";
import { action as partsStartAction } from "~/routes/api.upload-parts.start";
import { getDb } from "~/models/db.server";
import { keepPendingPost } from "~/services/web/pending-post.server";
import { makeStorageKey, STORAGE_AREAS } from "~/services/storage/storage.server";
import { settleMetering } from "~/services/admin/usage.server";
import { addVocabularyTerm } from "~/services/transcription/user-vocabulary.server";
import { saveOwnLetterhead } from "~/services/accounts/letterhead.server";
import { apiClientFor, type ApiClient } from "./api-client";
import { seedTranscribedRecording } from "./letter-fixtures";
import { livePayload, putUpload, saveLive } from "./live-save";
import { pngLogo } from "./letterhead-fixtures";
import { germanTextPdf } from "./pdf-fixtures";
import { toneWav } from "./wav";
import { callRoute, request, signedInUser } from "../setup/app";

// The first user ("A", Anna) owns one of everything a user can own, made through the same calls a client makes
// where that is quick, and with the model functions where a pipeline (transcription, a language model) would be
// slow. The second user ("B", Jonas) owns a letter of his own, so ids of A's can be tried inside it too.

/** Words that appear only in A's data: none of them may ever reach B. */
export const WORDS = {
  displayName: "Zitronenfalter Visite",
  fileName: "Pfauenauge-Sprechstunde.wav",
  uploadName: "Feuersalamander-Upload.wav",
  spoken: "Quittengelee Bernsteinzimmer",
  context: "Walnussbaum-Vorbefund",
  letter: "Kolibrifeder im Befund",
  proposal: "Mandarinenbaum-Vorschlag",
  template: "Kolibri-Vorlage",
  element: "Schwalbenschwanz",
  promptTitle: "Glockenblume",
  promptText: "Schreibe wie Lavendelhonig",
  chat: "Rhabarberkompott-Frage",
  chatAnswer: "Holunderblüten-Antwort",
  chatPdf: "Kirschkern-Befund.pdf",
  live: "Distelfink Liveaufnahme",
  vocabulary: "Ringelblumensalbe",
  misheard: "Ringelblumensalve",
  letterhead: "Sonnentau-Praxis",
  letterheadDoctor: "Dr. med. Anna Kornblume",
};

export type User = { userId: string; cookie: string; api: ApiClient };

async function userFor(issuer: string, accountId: string, email: string): Promise<User> {
  // The same account through both doors: the session of a web sign-in and a bearer token of the provider.
  const { user, cookie } = await signedInUser({ email, subject: accountId, issuer });
  return { userId: user.id, cookie, api: await apiClientFor(issuer, accountId) };
}

async function call(route: Parameters<typeof callRoute>[0], req: Request) {
  const response = await callRoute(route, req);
  if (response.status >= 300) throw new Error(`${req.url}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** A transcribed recording with a one-version letter (and, for A, a refinement proposal). */
export async function recordingWithLetter(
  ownerId: string,
  words: { fileName: string; displayName: string; spoken: string; letter: string },
) {
  const recording = await seedTranscribedRecording({
    ownerId,
    lines: [{ speaker: "S1", text: `Heute ${words.spoken}` }],
    fileName: words.fileName,
    context: [{ kind: "text", text: WORDS.context }],
    templateId: "soap",
  });
  const key = makeStorageKey({ ownerId, area: "arztbriefe", extension: ".json" });
  const letter = await getDb()
    .transaction()
    .execute(async (trx) => {
      const row = await insertLetter(trx, {
        ownerId,
        recordingId: recording.recordingId,
        key,
        templateId: "soap",
        language: "de-DE",
        tags: [],
      });
      const content: StoredLetterContent = {
        structured_output: [{ Anamnese: words.letter }, { Befund: "Unauffällig." }],
      };
      await appendVersion(trx, {
        letterId: row!.id,
        ownerId,
        version: 1,
        kind: "generated",
        authorId: ownerId,
        templateId: "soap",
        content,
      });
      return row!;
    });
  await getDb()
    .updateTable("recordings")
    .set({ medical_letter_status: "completed", display_name: words.displayName })
    .where("id", "=", recording.recordingId)
    .execute();
  return { ...recording, letterId: letter.id, letterKey: key, letterParam: key.replace(/^arztbriefe\//, "") };
}

/** The id Settings › "Aktive Sitzungen" names the user's (only) session by. */
async function publicSessionId(userId: string) {
  const row = await getDb().selectFrom("sessions").where("user_id", "=", userId).select("public_id").executeTakeFirst();
  return row!.public_id;
}

export async function seedWorld(issuer: string) {
  const anna = await userFor(issuer, "anna-berger", "anna.berger@praxis-berger.example");
  const jonas = await userFor(issuer, "jonas-keller", "jonas.keller@klinikum-nord.example");
  const api = anna.api;

  const letter = await recordingWithLetter(anna.userId, WORDS);
  const proposal = await insertProposal({
    ownerId: anna.userId,
    letterId: letter.letterId,
    baseVersion: 1,
    scope: "all",
    sectionTitle: null,
    query: WORDS.proposal,
    content: { structured_output: [{ Anamnese: WORDS.proposal }] },
  });
  const own = await recordingWithLetter(jonas.userId, {
    fileName: "jonas.wav",
    displayName: "Jonas",
    spoken: "Husten",
    letter: "Husten.",
  });

  // An upload through the API, checked by the server, with its transcription queued (no worker runs here).
  const slot = await call(
    uploadUrlAction,
    api("/api/get-upload-url", {
      method: "POST",
      json: { file_name: WORDS.uploadName, file_type: "audio/wav", language_code: "de" },
    }),
  );
  await putUpload(slot.url, toneWav(2), "audio/wav");
  await call(metadataAction, api("/api/update-file-metadata", { method: "POST", json: { s3_key: slot.key } }));
  const job = await call(transcribeAction, api("/api/transcribe_v2", { method: "POST", json: { s3_key: slot.key } }));

  const pdfs = await call(
    pdfUrlsAction,
    api("/api/get-pdf-upload-urls", { method: "POST", json: { filenames: ["a.pdf"] } }),
  );
  for (const { upload_url } of pdfs.upload_urls)
    await putUpload(upload_url, Buffer.from(await germanTextPdf()), "application/pdf");

  const template = await call(
    customTemplateAction,
    api("/api/structure/custom-template", {
      method: "POST",
      json: {
        template_id: "kolibri",
        custom_name: WORDS.template,
        language_code: "de-DE",
        structure_elements: [{ name: WORDS.element, description: WORDS.element }],
        prompt: WORDS.template,
      },
    }),
  );
  const prompt = await call(
    promptsAction,
    api("/api/prompts", { method: "POST", json: { title: WORDS.promptTitle, prompt_text: WORDS.promptText } }),
  );

  const pending = await getDb()
    .transaction()
    .execute((trx) => insertChatTurn(trx, { ownerId: anna.userId, question: WORDS.chat }));
  const answer = { ownerId: anna.userId, id: pending.id, content: WORDS.chatAnswer, contextTruncated: false };
  await finishAnswer({ ...answer, status: "done" });
  await insertChatContext(getDb(), { ownerId: anna.userId, files: [{ name: WORDS.chatPdf, text: WORDS.chatPdf }] });

  const live = await call(
    createLiveAction,
    request("/live/sessions", {
      method: "POST",
      cookie: anna.cookie,
      headers: { "Content-Type": "application/json", "Sec-Fetch-Site": "same-origin" },
      body: JSON.stringify({ kind: "recording", language: "de" }),
    }),
  );
  const saved = await (await saveLive(api, livePayload({ display_name: WORDS.live }))).json();
  const parts = await call(
    partsStartAction,
    api("/api/upload-parts/start", {
      method: "POST",
      json: { file_name: WORDS.uploadName, file_type: "audio/wav", file_size: 11 * 1024 * 1024, language_code: "de" },
    }),
  );
  const pendingPostId = await keepPendingPost({
    userId: anna.userId,
    request: request("/chat", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ question: WORDS.chat }).toString(),
    }),
  });
  // A term of A's own vocabulary, taught by a correction (the review's path into it).
  await getDb()
    .transaction()
    .execute((trx) =>
      addVocabularyTerm(trx, {
        userId: anna.userId,
        language: "de",
        content: WORDS.vocabulary,
        heard: WORDS.misheard,
      }),
    );
  const vocabulary = await getDb()
    .selectFrom("user_vocabulary")
    .where("owner_id", "=", anna.userId)
    .select("id")
    .executeTakeFirstOrThrow();
  // A's letter as a model cited it (issue 24) and as A exported it, with the details kept (issue 25).
  await recordCitations(getDb(), {
    ownerId: anna.userId,
    letterId: letter.letterId,
    citations: [{ wordingHash: "0".repeat(32), segmentIds: ["t0p0"] }],
  });
  await keepExportDetails({
    ownerId: anna.userId,
    letterId: letter.letterId,
    details: {
      recipientName: WORDS.letter,
      recipientAddress: ["Weg 1"],
      patientName: "Anna",
      patientBirthDate: null,
      subject: WORDS.letter,
      date: null,
    },
  });
  // A's letterhead with a logo (issue 25): B's page, posts and the logo's preview never reach it.
  const letterheadId = await saveOwnLetterhead({
    userId: anna.userId,
    fields: {
      practiceName: WORDS.letterhead,
      doctors: [WORDS.letterheadDoctor],
      street: "Weg 1",
      postalCode: "10115",
      city: "Berlin",
      phone: "",
      email: "",
      bsnr: "123456789",
      lanr: null,
      closing: "",
      signature: [],
    },
    logo: { data: pngLogo(8, 8) },
    request: request("/settings/letterhead"),
  });
  await settleMetering();

  const a = {
    userId: anna.userId,
    recordingKey: letter.sourceKey,
    transcriptKey: letter.transcriptKey,
    transcriptParam: letter.transcriptKey.replace(/^transcripts\//, ""),
    letterKey: letter.letterKey,
    letterParam: letter.letterParam,
    proposalId: proposal.id,
    uploadedKey: slot.key as string,
    jobName: job.job_name as string,
    pdfKeys: pdfs.upload_urls.map((u: { s3_key: string }) => u.s3_key) as string[],
    templateId: template.template_id as string,
    elementId: WORDS.element.toLowerCase(),
    promptId: prompt.prompt.id as string,
    liveSessionId: live.id as string,
    liveAudioKey: saved.audio_key as string,
    liveTranscriptKey: saved.transcript_key as string,
    multipartKey: parts.key as string,
    pendingPostId: pendingPostId!,
    sessionId: await publicSessionId(anna.userId),
    vocabularyId: vocabulary.id,
    letterheadId: letterheadId as string,
  };
  const b = { userId: jonas.userId, letterKey: own.letterKey, letterParam: own.letterParam };
  const secrets = [
    ...Object.values(WORDS),
    "anna.berger@praxis-berger.example",
    "Anna Berger",
    ...Object.values(a).flat(),
  ];
  return { anna, jonas, keys: { a, b }, secrets };
}

export type World = Awaited<ReturnType<typeof seedWorld>>;
export type Keys = World["keys"];

/**
 * Everything of the user's the app stores: every row of every table with an owner_id or user_id column (found in
 * the schema, so a new table is included), their users row, and the bytes of their objects in the local store.
 */
export async function snapshotOf(userId: string, storageDir: string) {
  // The usage rows of calls already answered are written a second later (admin/usage.server.ts meter): first them.
  await settleMetering();
  const { rows: columns } = await sql<{ table_name: string; column_name: string }>`
    select table_name, column_name from information_schema.columns
    where table_schema = current_schema() and column_name in ('owner_id', 'user_id')
    order by table_name`.execute(getDb());
  const tables: Record<string, string[]> = {};
  for (const { table_name, column_name } of columns) {
    const { rows } = await sql<Record<string, unknown>>`
      select * from ${sql.table(table_name)} where ${sql.ref(column_name)} = ${userId}`.execute(getDb());
    tables[table_name] = rows.map((row) => JSON.stringify(row)).sort();
  }
  const user = await getDb().selectFrom("users").where("id", "=", userId).selectAll().executeTakeFirstOrThrow();
  const objects: Record<string, string> = {};
  for (const area of STORAGE_AREAS) {
    const dir = path.join(storageDir, area, userId);
    if (!fs.existsSync(dir)) continue;
    for (const name of fs.readdirSync(dir, { recursive: true }) as string[]) {
      const file = path.join(dir, name);
      if (fs.statSync(file).isFile())
        objects[`${area}/${userId}/${name}`] = createHash("sha256").update(fs.readFileSync(file)).digest("hex");
    }
  }
  return { tables, user: JSON.stringify(user), objects };
}
