import { makeTempDir, makeTone, removeTempDir } from "../support/audio-fixtures";
import { expect, signIn, test } from "./support";

// What only the upload script does (the JavaScript project runs this file; see playwright.config.ts): the
// template dialog's loading error with retry, and a large file in parts that survives a dropped link.
let dir: string;
let longWav: string;

test.beforeAll(async () => {
  dir = await makeTempDir();
  // About 11 MiB: above 8 MiB the browser uploads in parts.
  longWav = await makeTone(dir, 130, "wav", "Visite lang.wav");
});
test.afterAll(async () => {
  await removeTempDir(dir);
});

test.describe("the upload script", () => {
  // Staged link failures: the browser reports the aborted requests.
  test.use({ expectedConsoleErrors: [/ERR_INTERNET_DISCONNECTED/] });
  test("with JavaScript: the dialog retries loading templates, and a part lost on the way is sent again", async ({
    page,
  }) => {
    await signIn(page, "jonas-keller");
    const form = page.locator("[data-upload-form]");
    let templateCalls = 0;
    await page.route("**/api/structure/templates?*", (route) =>
      ++templateCalls === 1 ? route.fulfill({ status: 503, body: "{}" }) : route.fallback(),
    );
    // Part 2 never arrives four times running (the link is down): the upload pauses, then resumes.
    let partTwo = 0;
    await page.route(/partNumber=2/, (route) =>
      ++partTwo <= 4 ? route.abort("internetdisconnected") : route.fallback(),
    );
    await form.locator('input[name="audio"]').setInputFiles(longWav);
    const dialog = page.locator("[data-template-dialog]");
    await expect(dialog.getByRole("alert")).toHaveText(/Die Vorlagen konnten nicht geladen werden/);
    await dialog.getByRole("button", { name: "Erneut versuchen" }).click();
    await dialog.getByLabel("SOAP-Notiz", { exact: true }).check();
    await dialog.getByRole("button", { name: "Hochladen" }).click();
    await expect(form.locator("[data-upload-paused]")).toContainText("1 von 3 Teilen", { timeout: 15_000 });
    await form.getByRole("button", { name: "Jetzt fortsetzen" }).click();
    await expect(page.getByText("Die Datei wurde hochgeladen; die Transkription läuft.")).toBeVisible({
      timeout: 20_000,
    });
    expect(partTwo).toBe(5);
    const row = page.locator("[data-recording]").filter({ hasText: "Visite lang.wav" });
    await expect(row).toHaveCount(1);
    await row.getByRole("link", { name: "Löschen" }).click();
    await page.getByRole("button", { name: "Löschen" }).click();
    await expect(page.getByText("Die Aufnahme wurde gelöscht.")).toBeVisible();
  });

  test("a page reloaded mid-upload resumes with the parts the store already holds", async ({ page }) => {
    await signIn(page, "jonas-keller");
    const form = page.locator("[data-upload-form]");
    await page.route(/partNumber=2/, (route) => route.abort("internetdisconnected"));
    await form.locator('input[name="audio"]').setInputFiles(longWav);
    await page.locator("[data-template-dialog]").getByRole("button", { name: "Hochladen" }).click();
    await expect(form.locator("[data-upload-paused]")).toContainText("1 von 3 Teilen", { timeout: 15_000 });

    // The tab is reloaded and the same file chosen again: part 1 is not sent a second time.
    await page.unrouteAll();
    await page.reload();
    const parts: string[] = [];
    page.on("request", (r) => {
      const part = /partNumber=(\d+)/.exec(r.url());
      if (r.method() === "PUT" && part) parts.push(part[1]!);
    });
    await form.locator('input[name="audio"]').setInputFiles(longWav);
    await page.locator("[data-template-dialog]").getByRole("button", { name: "Hochladen" }).click();
    await expect(page.getByText("Die Datei wurde hochgeladen; die Transkription läuft.")).toBeVisible({
      timeout: 20_000,
    });
    expect(parts).toEqual(["2", "3"]);
    const row = page.locator("[data-recording]").filter({ hasText: "Visite lang.wav" });
    await expect(row).toHaveCount(1);
    await row.getByRole("link", { name: "Löschen" }).click();
    await page.getByRole("button", { name: "Löschen" }).click();
    await expect(page.locator("[data-recording]").filter({ hasText: "Visite lang.wav" })).toHaveCount(0);
  });
});
