import { expect, signIn, test } from "./support";

// Issue 7 without JavaScript (only the no-js project runs this file, playwright.config.ts): live recording
// cannot work, so the record tab says so and offers the upload form.
test("without JavaScript the record tab explains itself and offers the upload form", async ({ page }) => {
  await signIn(page, "anna-berger", "/?tab=record");
  const note = page.locator("[data-live-nojs]");
  await expect(note).toBeVisible();
  await note.getByRole("link").click();
  await expect(page.locator("[data-upload-form]")).toBeVisible();
});
