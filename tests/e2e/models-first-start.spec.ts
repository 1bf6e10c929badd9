import { makeSpeechWav, makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { MIRROR_PORT, MODELS_APP_PORT } from "../../playwright.config";
import { chooseAccountIfAsked, expect, test } from "./support";
import type { Page } from "@playwright/test";

// Issue 21 end to end: an app on the embedded engines starts without its models; they come from the tests' model
// mirror, which is down (503) when the clinicians upload and record. Their recordings are kept and say they wait
// for the speech model — a live recording says so while it records, and is saved without text; once the mirror is
// back the model arrives, is verified, and the recordings go on by themselves — nobody clicks again. One page with
// JavaScript and one without, side by side (the download is one per app).
const BASE = `http://localhost:${MODELS_APP_PORT}`;
let dir: string;
let wav: string;

test.beforeAll(async () => {
  dir = await makeTempDir();
  wav = await makeSpeechWav(dir, "Guten Morgen. Was führt Sie zu mir?", "Erststart.wav");
});
test.afterAll(async () => {
  await removeTempDir(dir);
});

async function signInAt(page: Page, accountId: string) {
  await page.goto(`${BASE}/`);
  await chooseAccountIfAsked(page, accountId);
  await expect(page).toHaveURL(`${BASE}/`);
}

async function upload(page: Page) {
  const form = page.locator("[data-upload-form]");
  await form.locator('input[name="audio"]').setInputFiles(wav);
  await form.getByRole("button", { name: "Hochladen" }).click();
  return page.locator("[data-recording]").filter({ hasText: "Erststart.wav" });
}

test("uploads and a live recording made while the speech model cannot be fetched wait for it and finish by themselves", async ({
  page,
  browser,
}) => {
  test.setTimeout(240_000);
  const noJs = await browser.newContext({ javaScriptEnabled: false, locale: "de-DE", timezoneId: "Europe/Berlin" });
  const plain = await noJs.newPage();
  try {
    await signInAt(page, "jonas-keller");
    await signInAt(plain, "emily-clarke");

    // The workspace says the model is not there yet, and why.
    await expect(page.locator("[data-model-notice]")).toContainText("konnte noch nicht geladen werden");
    await expect(page.locator("[data-model-notice]")).toContainText("503");

    const uploads = [await upload(page), await upload(plain)];

    // A live recording on the embedded engine meanwhile: it records, says it will be transcribed later, and saves.
    await page.goto(`${BASE}/?tab=record`);
    const recorder = page.locator("[data-live-recorder]");
    await expect(recorder).toHaveAttribute("data-state", "ready", { timeout: 20_000 });
    await page.locator('[data-live-action="start"]').click();
    await expect(recorder).toHaveAttribute("data-state", "listening", { timeout: 20_000 });
    await expect(page.locator("[data-live-later]")).toContainText("Die Aufnahme wird gespeichert und transkribiert");
    await expect(page.locator("[data-live-elapsed]")).toHaveText(/^0:0[3-9]$/, { timeout: 20_000 });
    await page.locator('[data-live-action="stop"]').click();
    await expect(recorder).toHaveAttribute("data-state", "paused", { timeout: 20_000 });
    await expect(page.locator("[data-live-later]")).toBeVisible();
    await page.locator('input[name="transcription_mode"][value="transcript"]').check();
    await page.locator('[data-live-action="save"]').click();
    await page.waitForURL(/\/\?saved=/, { timeout: 30_000 });
    const live = page.locator("[data-recording]").filter({ hasNotText: "Erststart.wav" });
    await expect(live).toHaveCount(1);
    const rows = [...uploads, live];
    for (const row of rows) {
      await expect(row.locator("[data-status]")).toHaveAttribute("data-status", "processing");
      await expect(row.locator("[data-waiting-for-model]")).toContainText(/Wartet auf Sprachmodell \(\d+ %\)/);
    }

    // The mirror comes back: nobody touches either page from here on.
    const released = await fetch(`http://127.0.0.1:${MIRROR_PORT}/_control/release`, { method: "POST" });
    expect(released.status).toBe(204);
    for (const row of rows) {
      await expect(row.locator("[data-status]")).toHaveAttribute("data-status", "completed", { timeout: 150_000 });
    }
    await page.goto(`${BASE}/`);
    await expect(page.locator("[data-model-notice]")).toHaveCount(0);

    // What the engine heard, in the upload's transcript and in the live recording's (its whole audio, after saving).
    await page.goto(`${BASE}/transcriptions`);
    const transcripts = page.locator("tbody tr").filter({ has: page.locator("[data-transcript-row]") });
    await expect(transcripts).toHaveCount(2);
    for (const name of ["Erststart.wav", /live-/]) {
      await page.goto(`${BASE}/transcriptions`);
      await transcripts.filter({ hasText: name }).getByRole("link", { name: "Transkript ansehen" }).click();
      await expect(page.locator("[data-transcript-viewer] [data-transcript-text]")).toContainText("Guten Morgen.");
    }
  } finally {
    await noJs.close();
  }
});
