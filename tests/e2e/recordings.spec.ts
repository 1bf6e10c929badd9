import type { Locator } from "@playwright/test";
import { makeFake, makeSpeechWav, makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { expect, signIn, test } from "./support";

// Accounts per project, so the JavaScript-on and -off runs never share recordings.
const account = (project: string) => (project === "js" ? "jonas-keller" : "emily-clarke");
let dir: string;
let wav: string;
let fakePdf: string;

test.beforeAll(async () => {
  dir = await makeTempDir();
  wav = await makeSpeechWav(dir, "Guten Tag, Frau Müller. Wie geht es Ihnen heute?", "Gespräch Müller.wav");
  fakePdf = await makeFake(dir, "pdf", "befund.wav");
});
test.afterAll(async () => {
  await removeTempDir(dir);
});

/**
 * Where a row's name, status and delete link are. Each row is rendered once (issue 26): side by side in a table row
 * from md up, one below the other in a card on a phone.
 */
async function layout(row: Locator) {
  const parts = [
    row.locator("[data-recording-name]"),
    row.locator("[data-status]"),
    row.getByRole("link", { name: "Löschen" }),
  ];
  const [name, status, remove] = await Promise.all(parts.map(async (part) => (await part.boundingBox())!));
  return {
    sideBySide: status.x >= name.x + name.width && remove.x >= status.x + status.width,
    stacked: status.y >= name.y + name.height && remove.y >= status.y + status.height,
  };
}

test("upload a WAV with template and context, rename, tag, play and delete it", async ({ page }, info) => {
  // Upload, transcription, three dialogs and the player: about 25 s on an idle two-core machine, over 30 s under load.
  test.setTimeout(90_000);
  await signIn(page, account(info.project.name));
  const form = page.locator("[data-upload-form]");

  // A PDF with a .wav name is refused by the server with the SPEC message — in the page's language, with JavaScript
  // (the upload script asks the API for it) as without.
  await form.locator('input[name="audio"]').setInputFiles(fakePdf);
  await form.getByRole("button", { name: "Hochladen" }).click();
  await expect(page.locator("[data-upload-error]")).toContainText(
    "Der Dateityp „application/pdf“ wird nicht unterstützt",
  );

  await form.locator('input[name="audio"]').setInputFiles(wav);
  // With JavaScript a valid file opens the template dialog (SPEC §2); without, the fields are in the form.
  if (info.project.name === "js") await expect(page.locator("[data-template-dialog]")).toBeVisible();
  await form.getByLabel("SOAP-Notiz", { exact: true }).check();
  await form.getByText("Zusätzlicher Kontext (optional)").click();
  await form.locator('textarea[name="additionalContext"]').fill("Vorbefund: arterielle Hypertonie");
  // With JavaScript the bytes go straight to storage through the upload URL; without, through the form.
  const direct =
    info.project.name === "js"
      ? page.waitForRequest((r) => r.method() === "PUT" && r.url().includes("/resources/storage/audio/"))
      : null;
  await form.getByRole("button", { name: "Hochladen" }).click();
  if (direct) await direct;
  // Auto-start is on by default: the upload hands over to transcription (the test speech server).
  await expect(page.getByText("Die Datei wurde hochgeladen; die Transkription läuft.")).toBeVisible();
  const newest = page.locator("[data-recording]").first();
  await expect(newest).toContainText("Gespräch Müller.wav");
  // From here on this recording by its key: another spec's leftovers in the account cannot be mistaken for it.
  const row = page.locator(`[data-recording="${await newest.getAttribute("data-recording")}"]`);
  await expect(row.locator("[data-recording-name]")).toHaveText(/Aufnahme #\d+/);
  // The list refreshes itself while processing (a script with JavaScript, a meta refresh without).
  await expect(row.locator("[data-status]")).toHaveAttribute("data-status", "completed", { timeout: 20_000 });
  await expect(row).toContainText("Transkript bereit");
  // A table row under column headers (the phone's card is the same row, below).
  await expect(page.getByRole("columnheader", { name: "Dateiname" })).toBeVisible();
  expect(await layout(row)).toEqual({ sideBySide: true, stacked: false });

  await row.getByRole("link", { name: "Umbenennen und Tags" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Anzeigename").fill(" ");
  await dialog.getByRole("button", { name: "Umbenennen" }).click();
  await expect(page.getByRole("dialog").getByText("Der Text darf nicht leer sein")).toBeVisible();
  await page.getByRole("dialog").getByLabel("Anzeigename").fill("Frau Müller – Kontrolle");
  await page.getByRole("dialog").getByRole("button", { name: "Umbenennen" }).click();
  await expect(page.getByText("Der Name wurde geändert.")).toBeVisible();
  // An unchanged name just closes the editor.
  await page.getByRole("dialog").getByRole("button", { name: "Umbenennen" }).click();
  await expect(page.getByRole("dialog")).toHaveCount(0);
  await row.getByRole("link", { name: "Umbenennen und Tags" }).click();
  await page.getByRole("dialog").getByLabel("Tag hinzufügen").fill("Kardiologie");
  await page.getByRole("dialog").getByRole("button", { name: "Tag hinzufügen" }).click();
  await expect(page.getByText("Die Tags wurden gespeichert.")).toBeVisible();
  await page.getByRole("dialog").getByLabel("Tag hinzufügen").fill("kardiologie");
  await page.getByRole("dialog").getByRole("button", { name: "Tag hinzufügen" }).click();
  await expect(page.getByRole("dialog").getByText("Diesen Tag gibt es bereits")).toBeVisible();
  await page.getByRole("dialog").getByRole("link", { name: "Schließen" }).click();
  await expect(row.locator("[data-recording-name]")).toHaveText("Frau Müller – Kontrolle");
  await expect(row.locator("[data-tags]")).toHaveText("Kardiologie");

  await row.getByRole("link", { name: "Abspielen" }).click();
  let src: string | null;
  if (info.project.name === "js") {
    // The player island: the page hydrates for it and the custom controls work.
    const island = page.locator("[data-player-island]");
    await expect(island).toBeVisible();
    await expect(island.locator("[data-total-time]")).not.toHaveText("0:00");
    await island.locator("[data-play-toggle]").click();
    await expect(island.locator("[data-play-toggle]")).toHaveText("Pause");
    await island.locator("[data-play-toggle]").click();
    await expect(island.locator("[data-play-toggle]")).toHaveText("Abspielen");
    src = await island.locator("audio").getAttribute("src");
  } else {
    await expect(page.locator("[data-player]")).toBeVisible();
    src = await page.locator("[data-player]").getAttribute("src");
  }
  const ranged = await page.request.get(src!, { headers: { Range: "bytes=0-3" } });
  expect(ranged.status()).toBe(206);
  expect((await ranged.body()).toString("latin1")).toBe("RIFF");
  await page.getByRole("dialog").getByRole("link", { name: "Schließen" }).click();

  // Reset: offered because a transcript exists; it removes the transcript and keeps the audio.
  await row.getByRole("link", { name: "Löschen" }).click();
  await expect(page.getByRole("dialog")).toContainText("Transkript, ihren Arztbriefen");
  await page.getByRole("button", { name: "Zurücksetzen" }).click();
  await expect(page.getByText("Transkript und Arztbriefe wurden entfernt")).toBeVisible();
  await expect(row.locator("[data-status]")).toHaveAttribute("data-status", "pending");
  await expect(row.getByRole("button", { name: "Transkribieren" })).toBeEnabled();

  await row.getByRole("link", { name: "Löschen" }).click();
  await expect(page.getByRole("dialog")).not.toContainText("Zurücksetzen");
  await page.getByRole("button", { name: "Löschen" }).click();
  await expect(page.getByText("Die Aufnahme wurde gelöscht.")).toBeVisible();
  await expect(row).toHaveCount(0);
});

test.describe("phone-sized viewport", () => {
  test.use({ viewport: { width: 390, height: 800 } });
  test("recordings are cards", async ({ page }, info) => {
    await signIn(page, account(info.project.name));
    const cards = page.locator("[data-recording]");
    const before = await cards.count();
    await page.locator('[data-upload-form] input[name="audio"]').setInputFiles(wav);
    await page.locator("[data-upload-form]").getByRole("button", { name: "Hochladen" }).click();
    await expect(cards).toHaveCount(before + 1);
    // The newest card is this upload's; from here on it is found by its key.
    const card = page.locator(`[data-recording="${await cards.first().getAttribute("data-recording")}"]`);
    await expect(card.locator("[data-status]")).toHaveAttribute("data-status", "completed", { timeout: 20_000 });
    // The same rows as on a desktop, as cards: one thing below the other, nothing wider than the phone, and the
    // column headers there for a screen reader but not to be seen.
    expect(await layout(card)).toEqual({ sideBySide: false, stacked: true });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    await expect(page.getByRole("columnheader", { name: "Dateiname" })).toHaveCount(1);
    const headers = await page.locator("[data-recordings] thead").boundingBox();
    expect(headers!.width).toBeLessThanOrEqual(1);
    await card.getByRole("link", { name: "Löschen" }).click();
    await page.getByRole("button", { name: "Löschen" }).click();
    await expect(cards).toHaveCount(before);
  });
});
