import { expect, expectWorkspace, signIn, test } from "./support";

test("the German shell: sidebar with counts, top bar links, help with support address", async ({ page }) => {
  await signIn(page, "jonas-keller");
  await expectWorkspace(page, "Audio");
  const sidebar = page.locator("[data-sidebar]");
  for (const label of ["Audio", "Transkriptionen", "Arztbriefe", "Chat", "Einstellungen", "Hilfe"]) {
    await expect(sidebar.getByRole("link", { name: new RegExp(label) })).toBeVisible();
  }
  await expect(sidebar.locator("[data-count]")).toHaveText(["0", "0", "0"]);
  await expect(page.getByRole("link", { name: /Preise/ }).first()).toHaveAttribute("href", /preise/);
  await expect(page.locator("[data-empty]")).toHaveText("Noch keine Aufnahmen.");

  await sidebar.getByRole("link", { name: /Hilfe/ }).click();
  await expect(page.getByRole("link", { name: "support@skribent.example" })).toHaveAttribute(
    "href",
    /^mailto:support@skribent\.example(\?|$)/,
  );
});

test("switching the language re-renders in English and shows the dismissible notice", async ({ page }) => {
  await signIn(page);
  await page.locator("[data-topbar] button[value='en']").first().click();
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  await expectWorkspace(page, "Audio");
  const notice = page.getByText("The default transcription language is now English.");
  await expect(notice).toBeVisible();
  await expect(page.locator("[data-sidebar]").getByRole("link", { name: /Medical letters/ })).toBeVisible();
  await page.getByTitle("Dismiss message").click();
  await expect(notice).toBeHidden();
  // The choice is remembered; the notice was one-time.
  await page.reload();
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  await expect(page.getByText("The default transcription language is now English.")).toHaveCount(0);

  await page.locator("[data-topbar] button[value='de']").first().click();
  await expect(page.getByText("Die Standardsprache für Transkriptionen ist jetzt Deutsch.")).toBeVisible();
});

test.describe("phone-sized viewport", () => {
  test.use({ viewport: { width: 390, height: 800 } });

  test("shows the bottom bar with four sections and a hamburger menu", async ({ page }) => {
    await signIn(page);
    const bottom = page.locator("[data-bottombar]");
    await expect(bottom).toBeVisible();
    await expect(bottom.getByRole("link")).toHaveText(["Audio", "Transkriptionen", "Arztbriefe", "Chat"]);
    await expect(page.locator("[data-sidebar]")).toBeHidden();
    const menu = page.locator("[data-hamburger]");
    await menu.locator("summary").click();
    await expect(menu.getByRole("button", { name: "Abmelden" })).toBeVisible();
    await expect(menu.getByRole("link", { name: /Impressum/ })).toBeVisible();
    await menu.getByRole("link", { name: "Hilfe" }).click();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(/Hilfe/);
  });
});

test("methods the app does not answer get 405, not a server error", async ({ request }) => {
  for (const method of ["TRACE", "PROPFIND"]) {
    const response = await request.fetch("/", { method });
    expect(response.status(), method).toBe(405);
    expect(response.headers()["allow"]).toContain("GET");
  }
  expect((await request.fetch("/resources/healthz", { method: "OPTIONS" })).status()).toBeLessThan(500);
});
