import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { action as audioAction } from "~/routes/_app._index/route";
import { getDb } from "~/models/db.server";
import { getStorage } from "~/services/storage/storage.server";
import { makeFake, setupSpeechWav } from "../support/audio-fixtures";
import { germanTextPdf, GERMAN_LINES } from "../support/pdf-fixtures";
import { serve } from "../support/remix-document";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// The upload without JavaScript, on the server path: multipart form, the
// server's checks, and context from text and PDFs stored with the recording.
setupTestApp();
const speech = setupSpeechWav();

function post(cookie: string, form: FormData) {
  return request("/?index", { method: "POST", cookie, headers: { "Sec-Fetch-Site": "same-origin" }, body: form });
}

describe("upload form (no JavaScript)", () => {
  it("stores a checked WAV with template, mode, text and PDF context", async () => {
    const { cookie, user } = await signedInUser({ email: "form-upload@praxis.example" });
    const form = new FormData();
    form.set("audio", new Blob([fs.readFileSync(speech.wav())], { type: "audio/wav" }), "Visite.wav");
    form.set("language", "de-DE");
    form.set("mode", "transcript");
    form.set("templateId", "soap");
    form.set("additionalContext", "Allergie: Penicillin");
    form.set(
      "contextPdf",
      new Blob([new Uint8Array(await germanTextPdf())], { type: "application/pdf" }),
      "Vorbefund.pdf",
    );
    const response = await callRoute(audioAction, post(cookie, form));
    expect(response.status).toBe(302);
    const row = await getDb()
      .selectFrom("recordings")
      .where("owner_id", "=", user.id)
      .select(["id", "storage_key", "template_id", "transcription_mode", "original_filename", "upload_status"])
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      template_id: "soap",
      transcription_mode: "transcript",
      original_filename: "Visite.wav",
      upload_status: "ready",
    });
    expect(row.storage_key).toMatch(new RegExp(`^audio/${user.id}/\\d{8}-\\d{6}-.+\\.wav$`));
    expect((await getStorage().head(row.storage_key))?.size).toBe(fs.statSync(speech.wav()).size);
    const context = await getDb()
      .selectFrom("recording_context")
      .where("recording_id", "=", row.id)
      .select(["kind", "text"])
      .execute();
    expect(context.map((c) => c.kind).sort()).toEqual(["pdf", "text"]);
    expect(context.find((c) => c.kind === "pdf")?.text).toContain(GERMAN_LINES[0]);
  });

  it("says under the form that transcription starts by itself (AUTO_START_TRANSCRIPTION on, the default)", async () => {
    const { cookie } = await signedInUser({ email: "form-note@praxis.example" });
    const html = await (await serve(request("/", { cookie }))).text();
    expect(/<p[^>]*data-upload-note[^>]*>([^<]*)<\/p>/.exec(html)?.[1]).toBe(
      "Nach dem Hochladen startet die Transkription; mit „Transkript und Arztbrief“ schreibt Skribent danach den Brief mit der gewählten Vorlage.",
    );
  });

  it("refuses a PDF named .wav with the SPEC message and keeps nothing", async () => {
    const { cookie, user } = await signedInUser({ email: "form-upload-2@praxis.example" });
    const fake = await makeFake(speech.dir(), "pdf", "x.wav");
    const form = new FormData();
    form.set("audio", new Blob([fs.readFileSync(fake)], { type: "audio/wav" }), "x.wav");
    const response = await callRoute(audioAction, post(cookie, form));
    expect(response.status).toBe(400);
    expect((await response.json()).error).toContain("application/pdf");
    const rows = await getDb().selectFrom("recordings").where("owner_id", "=", user.id).select("id").execute();
    expect(rows).toEqual([]);
  });

  it("refuses a patient id while patient records are switched off, before saving the audio", async () => {
    const { cookie, user } = await signedInUser({ email: "form-upload-3@praxis.example" });
    const form = new FormData();
    form.set("audio", new Blob([fs.readFileSync(speech.wav())], { type: "audio/wav" }), "y.wav");
    form.set("patientId", "P-1");
    const response = await callRoute(audioAction, post(cookie, form));
    // The JSON API's status for the same refusal (context-api.test.ts): the one error mapping.
    expect(response.status).toBe(403);
    expect((await response.json()).error).toBe(
      "Das Abrufen von Patientenakten ist für Ihre Organisation ausgeschaltet",
    );
    const rows = await getDb().selectFrom("recordings").where("owner_id", "=", user.id).select("id").execute();
    expect(rows).toEqual([]);
  });
});
