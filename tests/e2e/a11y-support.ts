import type { Page } from "@playwright/test";
import { makeSpeechWav, makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { expect } from "./support";

// What the accessibility specs share: their own demo account, and one recording of it with its transcript and
// letter (uploaded once, then found again by its file name), for the screens that need data.
export const A11Y_ACCOUNT = "eva-richter";

async function speechFile() {
  const dir = await makeTempDir();
  const wav = await makeSpeechWav(dir, "Guten Morgen. Was führt Sie zu mir?", "Barrierefrei.wav");
  return { wav, done: () => removeTempDir(dir) };
}

/** One recording of this account with its transcript and letter: the keys of the data screens. */
export async function seedRecording(page: Page) {
  await page.goto("/");
  const existing = page.locator("[data-recording]").filter({ hasText: "Barrierefrei.wav" });
  let file: Awaited<ReturnType<typeof speechFile>> | null = null;
  if ((await existing.count()) === 0) {
    file = await speechFile();
    const form = page.locator("[data-upload-form]");
    await form.locator('input[name="audio"]').setInputFiles(file.wav);
    await form.getByRole("button", { name: "Hochladen" }).click();
  }
  const recording = page.locator("[data-recording]").filter({ hasText: "Barrierefrei.wav" }).first();
  await expect(recording.locator("[data-status]")).toHaveAttribute("data-status", "completed", { timeout: 20_000 });
  await file?.done();
  const key = (await recording.getAttribute("data-recording"))!;
  await page.goto("/arztbriefe");
  const row = page.locator("[data-letter-row]").first();
  await expect(async () => {
    await page.reload();
    await expect(row.locator("[data-letter-status]")).toHaveAttribute("data-letter-status", "completed", {
      timeout: 1_000,
    });
  }).toPass({ timeout: 20_000 });
  const letterPath = (await row.locator('[data-action="view"]').getAttribute("href"))!;
  await page.goto("/transcriptions");
  const transcriptPath = (await page.locator('[data-action="view"]').first().getAttribute("href"))!;
  return { key, letterPath, transcriptPath };
}
