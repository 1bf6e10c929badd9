import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loader as filesLoader } from "~/routes/api.files";
import { action as extractPdf } from "~/routes/api.extract-pdf-from-s3";
import { action as pdfUploadUrls } from "~/routes/api.get-pdf-upload-urls";
import { getConfig, setConfig } from "~/services/config/config.server";
import { getDb } from "~/models/db.server";
import { healthReport } from "~/services/admin/health.server";
import { saveRealtimeTranscript } from "~/services/live/save.server";
import { liveUploadKey } from "~/services/live/save-upload.server";
import { getStorage } from "~/services/storage/storage.server";
import { apiClientFor, type ApiClient } from "../support/api-client";
import { makeTempDir, makeTone, removeTempDir } from "../support/audio-fixtures";
import { formUpload, multipartUpload, presignedUpload, putTo, storedState } from "../support/bad-file-doors";
import { conversationOf, chatPage } from "../support/chat-fixtures";
import { setupClamd, TEST_SIGNATURE, withEicar } from "../support/clamd";
import { userIdOf } from "../support/letter-fixtures";
import {
  confirmLive,
  livePayload,
  liveSlot,
  makeRecorderWebm,
  makeTonePcm,
  pcmSource,
  putUpload,
} from "../support/live-save";
import { germanTextPdf } from "../support/pdf-fixtures";
import { callRoute, setupTestApp, signedInUser } from "../setup/app";
import { expectConsoleError } from "../setup/console";

// Every door a file comes in by is scanned by a real clamd before the file is checked or read (ASVS 5.0 5.4.3, ADR
// 0024): a recording through the upload URL, the resumable upload and the form without JavaScript; the live
// recorder's copy; PDFs for a letter's context and for the chat. A hit refuses the file with its name and leaves
// nothing stored; a scanner that cannot answer refuses it too. The test signature is the EICAR string, written into
// otherwise valid audio and PDFs, so that only the scanner can be what refuses them.
const clamd = setupClamd();
const app = setupTestApp({ provider: true, env: { ANTIVIRUS_URL: clamd.url } });
const refused = (name: string) => `The file “${name}” was refused by the virus scanner and was not stored.`;
let dir: string;
let wav: Buffer;
let anna: ApiClient;
let annaId: string;

beforeAll(async () => {
  dir = await makeTempDir("skribent-antivirus-");
  wav = fs.readFileSync(await makeTone(dir, 2, "wav"));
  anna = await apiClientFor(app.issuer, "anna-berger");
  await callRoute(filesLoader, anna("/api/files")); // the first call creates the account
  annaId = await userIdOf("anna-berger");
});
afterAll(async () => {
  await removeTempDir(dir);
});

async function scanAudits(userId: string) {
  return getDb()
    .selectFrom("audit_events")
    .select(["entity_type", "outcome"])
    .where("user_id", "=", userId)
    .where("action", "=", "upload.scan")
    .orderBy("at")
    .execute();
}

describe("uploads are scanned for malware", () => {
  it("a recording carrying the test signature is refused at both API doors; the same audio without it is taken", async () => {
    const infected = { name: "Visite.wav", type: "audio/wav", bytes: withEicar(wav) };
    for (const door of [presignedUpload, multipartUpload]) {
      const before = await storedState(annaId);
      const outcome = await door(anna, infected);
      expect({ status: outcome.status, message: outcome.message }).toEqual({
        status: 400,
        message: refused("Visite.wav"),
      });
      expect(await storedState(annaId)).toEqual(before);
    }
    expect(await scanAudits(annaId)).toEqual([
      { entity_type: "recording", outcome: "denied" },
      { entity_type: "recording", outcome: "denied" },
    ]);
    const clean = await presignedUpload(anna, { ...infected, bytes: wav });
    expect(clean.status).toBe(200);
  });

  it("the form without JavaScript says so in German and in English, and stores nothing", async () => {
    const { user, cookie } = await signedInUser({ email: "formular@praxis.example" });
    const file = { label: "eicar", name: "Befund <b>.wav", type: "audio/wav", bytes: withEicar(wav) };
    const before = await storedState(user.id);
    expect(await formUpload(cookie, file, "de")).toEqual({
      status: 400,
      message: "Die Datei „Befund <b>.wav“ wurde vom Virenscanner abgelehnt und nicht gespeichert.",
    });
    expect(await formUpload(cookie, file, "en")).toEqual({ status: 400, message: refused("Befund <b>.wav") });
    expect(await storedState(user.id)).toEqual(before);
  });

  it("the live recorder's copy is refused and the recording keeps the audio it had", async () => {
    const jonas = await apiClientFor(app.issuer, "jonas-keller");
    await callRoute(filesLoader, jonas("/api/files"));
    const saved = await saveRealtimeTranscript({
      userId: await userIdOf("jonas-keller"),
      payload: livePayload({ display_name: "Live" }),
      pcmAudio: pcmSource(await makeTonePcm(1)),
    });
    const audioBefore = await getStorage().head(saved.audio_key);
    const slot = await (await liveSlot(jonas, saved.audio_key)).json();
    const webm = fs.readFileSync(await makeRecorderWebm(dir));
    expect((await putUpload(slot.url, withEicar(webm), "audio/webm;codecs=opus")).status).toBe(200);
    const confirmed = await confirmLive(jonas, saved.audio_key);
    expect(confirmed.status).toBe(400);
    expect((await confirmed.json()).detail).toBe(refused(path.basename(saved.audio_key)));
    expect(await getStorage().head(saved.audio_key)).toEqual(audioBefore);
    expect(await getStorage().head(liveUploadKey(saved.audio_key))).toBeNull();
  });

  it("a letter's PDF context: one refused PDF refuses the request, and none of the uploaded PDFs is kept", async () => {
    const urls = await (
      await callRoute(
        pdfUploadUrls,
        anna("/api/get-pdf-upload-urls", { method: "POST", json: { filenames: ["Labor.pdf", "Vorbefund.pdf"] } }),
      )
    ).json();
    const pdf = await germanTextPdf();
    const [labor, vorbefund] = urls.upload_urls as Array<{ upload_url: string; s3_key: string }>;
    expect((await putTo(labor!.upload_url, Buffer.from(pdf), "application/pdf")).status).toBe(200);
    expect((await putTo(vorbefund!.upload_url, withEicar(pdf), "application/pdf")).status).toBe(200);
    const keys = [labor!.s3_key, vorbefund!.s3_key];
    const response = await callRoute(
      extractPdf,
      anna("/api/extract-pdf-from-s3", { method: "POST", json: { s3_keys: keys } }),
    );
    expect(response.status).toBe(400);
    expect((await response.json()).detail).toBe(refused("Vorbefund.pdf"));
    for (const key of keys) expect(await getStorage().head(key)).toBeNull();
    expect(await getDb().selectFrom("context_uploads").select("storage_key").execute()).toEqual([]);
  });

  it("a chat PDF is refused before it is read, and the conversation stays empty", async () => {
    const { user, cookie } = await signedInUser({ email: "chat@praxis.example" });
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    let logged: string;
    let page: Awaited<ReturnType<typeof chatPage>>;
    try {
      page = await chatPage(cookie, {
        fields: { intent: "attach" },
        files: [{ name: "Arztbrief.pdf", data: withEicar(await germanTextPdf()) }],
      });
      logged = warn.mock.calls.map((call) => call.join(" ")).join("\n");
    } finally {
      warn.mockRestore();
    }
    // The log names the signature for the operator, never the file or its owner.
    expect(logged).toContain(`[antivirus] an upload was refused: ${TEST_SIGNATURE}`);
    expect(logged).not.toContain("Arztbrief");
    expect(page.status).toBe(400);
    expect(page.html).toContain("Die Datei „Arztbrief.pdf“ wurde vom Virenscanner abgelehnt und nicht gespeichert.");
    expect(await conversationOf(user.id)).toEqual({ messages: [], context: [] });
    expect(await scanAudits(user.id)).toEqual([{ entity_type: "chat", outcome: "denied" }]);
  });

  it("the health check names the scanner; a scanner that cannot answer refuses uploads, and the check says so", async () => {
    expect((await healthReport()).service_tests.antivirus).toMatchObject({
      status: "healthy",
      detail: expect.stringMatching(/^ClamAV \d/),
    });
    const configured = getConfig();
    expectConsoleError();
    setConfig({ ...configured, antivirus: { ...configured.antivirus, target: { path: path.join(dir, "gone.sock") } } });
    try {
      const before = await storedState(annaId);
      const outcome = await presignedUpload(anna, { name: "Sprechstunde.wav", type: "audio/wav", bytes: wav });
      expect(outcome).toMatchObject({
        status: 502,
        message:
          "The file “Sprechstunde.wav” could not be checked for malware and was not stored. Please try again later.",
      });
      expect(await storedState(annaId)).toEqual(before);
      expect((await scanAudits(annaId)).at(-1)).toEqual({ entity_type: "recording", outcome: "failure" });
      // Without JavaScript too: "try again later", not a fault of the file.
      const { user, cookie } = await signedInUser({ email: "scanner-aus@praxis.example" });
      const file = { label: "clean", name: "Sprechstunde.wav", type: "audio/wav", bytes: wav };
      const nothing = await storedState(user.id);
      expect(await formUpload(cookie, file, "de")).toEqual({
        status: 502,
        message:
          "Die Datei „Sprechstunde.wav“ konnte nicht auf Schadsoftware geprüft werden und wurde nicht gespeichert. " +
          "Bitte versuchen Sie es später erneut.",
      });
      expect(await storedState(user.id)).toEqual(nothing);
      expect((await healthReport()).service_tests.antivirus.status).toBe("error");
    } finally {
      setConfig(configured);
    }
  });
});
