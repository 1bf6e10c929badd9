import { makeSpeechWav, makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { expect, signIn, test } from "./support";

// Issue 6 end to end, JavaScript on and off: the app transcribes with the tests' Speechmatics server (the
// named two-speaker fixture) and writes letters with the tests' OpenAI-compatible chat server
// (tests/support/fake-llm-letters.ts: the first section quotes the transcript, refinements append
// "(überarbeitet)"). Upload → transcript → letter (created on the server) → edit and save → refine a section
// and accept → restore the earlier version → redo with another template → saved prompts up to the limit.
const account = (project: string) => (project === "js" ? "jonas-keller" : "emily-clarke");
let dir: string;
let wav: string;

test.beforeAll(async () => {
  dir = await makeTempDir();
  wav = await makeSpeechWav(dir, "Guten Morgen. Was führt Sie zu mir?", "Brief Becker.wav");
});
test.afterAll(async () => {
  await removeTempDir(dir);
});

test("upload → letter → edit → refine → restore → redo → prompts", async ({ page }, info) => {
  test.setTimeout(90_000);
  await signIn(page, account(info.project.name));
  const form = page.locator("[data-upload-form]");
  await form.locator('input[name="audio"]').setInputFiles(wav);
  await form.getByRole("button", { name: "Hochladen" }).click();
  const recording = page.locator("[data-recording]").filter({ hasText: "Brief Becker.wav" });
  await expect(recording.locator("[data-status]")).toHaveAttribute("data-status", "completed", { timeout: 20_000 });

  // Transcript plus Arztbrief is the default mode: the server writes the letter by itself.
  await page.goto("/arztbriefe");
  const row = page.locator("[data-letter-row]").filter({ hasText: "Brief Becker.wav" });
  await expect(async () => {
    await page.reload();
    await expect(row.locator("[data-letter-status]")).toHaveAttribute("data-letter-status", "completed", {
      timeout: 1_000,
    });
  }).toPass({ timeout: 20_000 });

  // The editor: one box per section; the first quotes the consultation, the others say "no information".
  await row.locator('[data-action="view"]').click();
  const editor = page.locator("[data-letter-editor]");
  await expect(editor).toBeVisible();
  const editorPath = new URL(page.url()).pathname;
  const boxes = editor.locator("textarea[data-section]");
  expect(await boxes.count()).toBeGreaterThan(1);
  const first = boxes.first();
  const firstTitle = (await first.getAttribute("data-section"))!;
  await expect(first).toHaveValue(/Guten Morgen/);
  await expect(boxes.nth(1)).toHaveValue("Keine Informationen gefunden");

  // Edit and save: a new version.
  await first.fill("Vorstellung mit Brustschmerzen seit drei Tagen.");
  await editor.locator('[data-action="save"]').click();
  await expect(page.getByText("Änderungen als Version 2 gespeichert.")).toBeVisible();
  await expect(editor.locator("textarea[data-section]").first()).toHaveValue(
    "Vorstellung mit Brustschmerzen seit drei Tagen.",
  );

  // Refine one section: a proposal with its diff, accepted as version 3.
  const panel = page.locator("[data-refine-panel]");
  await panel.locator("[data-scope]").selectOption({ label: firstTitle });
  await panel.locator("[data-instruction]").fill("Bitte formeller formulieren.");
  await panel.locator('[data-action="refine"]').click();
  const proposal = page.locator("[data-proposal]");
  await expect(proposal).toBeVisible();
  await expect(proposal.locator(`[data-diff-section="${firstTitle}"]`)).toHaveAttribute("data-change", "changed");
  await proposal.locator('[data-action="accept"]').click();
  await expect(page.getByText("Vorschlag übernommen und als Version 3 gespeichert.")).toBeVisible();
  await expect(page.locator("textarea[data-section]").first()).toHaveValue(/\(überarbeitet\)$/);

  // Restore version 2: a new version 4 with the text from before the refinement.
  await page.locator('[data-action="versions"]').click();
  const v2 = page.locator('[data-version="2"]');
  await expect(v2).toHaveAttribute("data-kind", "edited");
  await v2.locator('[data-action="restore"]').click();
  await expect(page.getByText("Version 2 als Version 4 wiederhergestellt.")).toBeVisible();
  await page.goto(editorPath);
  await expect(page.locator("textarea[data-section]").first()).toHaveValue(
    "Vorstellung mit Brustschmerzen seit drei Tagen.",
  );

  // Saved prompts: three, then the limit; use one; delete one.
  for (const n of [1, 2, 3]) {
    await page.locator("[data-instruction]").fill(`Prompt-Text ${n}`);
    await page.locator('[data-action="open-save-prompt"]').click();
    await page.locator("[data-save-prompt] input[name=title]").fill(`Mein Prompt ${n}`);
    await page.locator('[data-action="save-prompt"]').click();
    await expect(page.getByText("Prompt gespeichert.")).toBeVisible();
  }
  await expect(page.locator("[data-saved-prompt]")).toHaveCount(3);
  await expect(page.locator("[data-prompt-limit]")).toHaveText(/Maximal 3 Prompts erlaubt/);
  const second = page.locator("[data-saved-prompt]").nth(1);
  await second.locator('[data-action="use-prompt"]').click();
  await expect(page.locator("[data-instruction]")).toHaveValue("Prompt-Text 2");
  await page.locator("[data-saved-prompt]").first().locator('[data-action="delete-prompt"]').click();
  await expect(page.getByText("Prompt gelöscht.")).toBeVisible();
  await expect(page.locator("[data-saved-prompt]")).toHaveCount(2);
  // The account's prompts as this test found them (none), so it can run again: the other two go as well.
  for (const left of [1, 0]) {
    await page.locator("[data-saved-prompt]").first().locator('[data-action="delete-prompt"]').click();
    await expect(page.locator("[data-saved-prompt]")).toHaveCount(left);
  }

  // Redo with another template: the current one is shown disabled; the letter becomes version 5.
  await page.goto("/arztbriefe");
  await row.locator('[data-action="redo"]').click();
  const dialog = page.locator("[data-redo-dialog]");
  await expect(dialog).toBeVisible();
  const current = dialog.locator("[data-current-template]");
  await expect(current).toBeVisible();
  await dialog.locator("[data-template-choice] input[type=radio]:not([disabled])").first().check();
  await dialog.locator('[data-action="confirm-redo"]').click();
  await expect(async () => {
    await page.goto("/arztbriefe");
    await expect(row.locator("[data-letter-status]")).toHaveAttribute("data-letter-status", "completed", {
      timeout: 1_000,
    });
    await expect(row.locator("[data-processing]")).toHaveCount(0, { timeout: 1_000 });
  }).toPass({ timeout: 20_000 });
  await row.locator('[data-action="view"]').click();
  await page.locator('[data-action="versions"]').click();
  await expect(page.locator('[data-version="5"]')).toHaveAttribute("data-kind", "redo");
  await expect(page.locator('[data-version="4"]')).toHaveAttribute("data-kind", "restored");

  // Clean up: deleting the recording deletes its letter and all versions.
  await page.goto("/");
  await recording.getByRole("link", { name: "Löschen" }).click();
  await page.getByRole("button", { name: "Löschen" }).click();
  await expect(recording).toHaveCount(0);
  await page.goto("/arztbriefe");
  await expect(row).toHaveCount(0);
});
