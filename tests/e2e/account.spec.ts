import { chooseAccountIfAsked, expect, expectWorkspace, signIn, test } from "./support";

// Issue 9 "Data lifecycle" end to end, JavaScript on and off (both projects run this file, one after the other,
// as the same demo account, which only js-budget.spec.ts also uses, for a recording): a clinician deletes their
// account from Settings after a confirmation that says what goes, lands on the sign-in page that says it
// happened, and signing in again opens a fresh, empty workspace.
const ACCOUNT = "tim-schroeder";

test("a clinician deletes their account from Settings and starts again with an empty one", async ({ page }) => {
  test.setTimeout(60_000);
  await signIn(page, ACCOUNT, "/chat");
  await page.getByLabel("Ihre Frage").fill("Was bedeutet NYHA II?");
  await page.getByRole("button", { name: "Senden" }).click();
  await expect(page.locator('[data-chat-message][data-role="assistant"][data-status="done"]')).toHaveCount(1);

  await page.goto("/settings");
  await page.getByRole("link", { name: "Konto löschen …" }).click();
  const dialog = page.getByRole("dialog", { name: "Konto endgültig löschen" });
  await expect(dialog).toBeVisible();
  await expect(dialog.locator("[data-account-owned]")).toContainText("2 Chat-Nachrichten");

  // Cancelling keeps everything.
  await dialog.getByRole("link", { name: "Abbrechen" }).first().click();
  await expect(page.getByRole("dialog")).toHaveCount(0);
  await page.getByRole("link", { name: "Konto löschen …" }).click();
  await page.getByLabel("Ich verstehe, dass alle meine Daten endgültig gelöscht werden.").check();
  await page.getByRole("button", { name: "Konto und alle Daten löschen" }).click();

  await expect(page).toHaveURL(/\/login\?deleted=1$/);
  await expect(page.locator("[data-login-reason]")).toHaveText("Ihr Konto und alle Ihre Daten wurden gelöscht.");

  await page.getByRole("link", { name: "Anmelden" }).click();
  await chooseAccountIfAsked(page, ACCOUNT);
  await page.goto("/chat");
  await expectWorkspace(page, "Chat");
  await expect(page.locator("[data-chat-empty]")).toHaveText(
    "Noch keine Nachrichten. Stellen Sie eine Frage, um zu beginnen.",
  );
});
