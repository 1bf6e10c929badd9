import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { action as audioAction } from "~/routes/_app._index/route";
import { getDb } from "~/models/db.server";
import { languageCookie } from "~/services/web/i18n.server";
import { setupSpeechWav } from "../support/audio-fixtures";
import { serve } from "../support/remix-document";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// The note under the upload form says what happens after an upload, and it must be true: with
// AUTO_START_TRANSCRIPTION off nothing is transcribed until the clinician starts it from the list.
setupTestApp({ env: { AUTO_START_TRANSCRIPTION: "false" } });
const speech = setupSpeechWav();

const note = (html: string) => /<p[^>]*data-upload-note[^>]*>([^<]*)<\/p>/.exec(html)?.[1];

describe("the note under the upload form, with AUTO_START_TRANSCRIPTION off", () => {
  it("says the transcription is started from the list, in German and English, and an upload waits for it", async () => {
    const { cookie, user } = await signedInUser({ email: "ohne-autostart@praxis.example" });
    const german = await (await serve(request("/", { cookie }))).text();
    expect(note(german)).toBe(
      "Nach dem Hochladen starten Sie die Transkription in der Liste; mit „Transkript und Arztbrief“ schreibt Skribent danach den Brief mit der gewählten Vorlage.",
    );
    const english = await (
      await serve(request("/", { cookie: `${cookie}; ${await languageCookie().serialize("en")}` }))
    ).text();
    expect(note(english)).toBe(
      "After the upload, start the transcription from the list; with “Transcript and medical letter” Skribent then writes the letter with the chosen template.",
    );

    const form = new FormData();
    form.set("audio", new Blob([fs.readFileSync(speech.wav())], { type: "audio/wav" }), "Visite.wav");
    form.set("language", "de-DE");
    const upload = await callRoute(
      audioAction,
      request("/?index", { method: "POST", cookie, headers: { "Sec-Fetch-Site": "same-origin" }, body: form }),
    );
    expect(upload.status).toBe(302);
    const jobs = await getDb()
      .selectFrom("transcription_jobs")
      .innerJoin("recordings", "recordings.id", "transcription_jobs.recording_id")
      .where("recordings.owner_id", "=", user.id)
      .select("transcription_jobs.id")
      .execute();
    expect(jobs).toEqual([]);
  });
});
