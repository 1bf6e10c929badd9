import { type Page } from "@playwright/test";
import { FLAG_PORT } from "../../playwright.config";
import { expect, signIn, test } from "./support";

// Accounts per project, so the JavaScript-on and -off runs never share templates.
function account(projectName: string) {
  return projectName === "js" ? "jonas-keller" : "emily-clarke";
}

async function ensureAdded(page: Page, templateId: string) {
  await page.goto("/settings/repository?q=");
  const entry = page.locator(`[data-repository-template="${templateId}"]`);
  const add = entry.locator('[data-state="not-added"]');
  if (await add.count()) await add.click();
  await expect(page.locator(`[data-repository-template="${templateId}"] [data-state="added"]`)).toBeVisible();
}

test("the repository: search, results count, groups, add a template", async ({ page }, info) => {
  await signIn(page, account(info.project.name), "/settings");
  await page.getByRole("link", { name: "Vorlagenbibliothek" }).click();
  await expect(page.getByRole("dialog")).toBeVisible();
  await expect(page.locator("[data-organization]")).toHaveCount(5);
  await page.getByRole("searchbox").fill("Verlegung");
  await page.getByRole("button", { name: "Suchen" }).click();
  await expect(page.locator("[data-results-count]")).toHaveText("1 Vorlage");
  const entry = page.locator('[data-repository-template="verlegungsbrief"]');
  await entry.getByRole("button", { name: "Hinzufügen" }).click();
  await expect(entry.locator('[data-state="added"]')).toHaveText(/Hinzugefügt/);
  await expect(page.locator("[data-results-count]")).toHaveText("1 Vorlage"); // the search is kept
  await page.getByRole("link", { name: "← Zurück" }).click();
  await expect(page.locator('[data-template="verlegungsbrief"]')).toBeVisible();

  // Removing it only takes it out of this collection; the repository offers it again.
  await page.goto("/settings/remove/verlegungsbrief?language=de-DE");
  await page.getByRole("button", { name: "Entfernen" }).click();
  await expect(page.getByText("Die Vorlage wurde aus Ihrer Sammlung entfernt.")).toBeVisible();
  await expect(page.locator('[data-template="verlegungsbrief"]')).toHaveCount(0);
});

test("customise a system template through every limit, then reset it", async ({ page }, info) => {
  const js = info.project.name === "js";
  await signIn(page, account(info.project.name), "/settings");
  await ensureAdded(page, "entlassbrief");
  await page.goto("/settings?language=de-DE&open=entlassbrief");
  const card = page.locator('[data-template="entlassbrief"]');
  const rows = card.locator("[data-element-row]");
  await expect(rows).toHaveCount(8);
  // Protected sections cannot be removed.
  await expect(rows.nth(0).getByRole("button", { name: "Standardelement kann nicht entfernt werden" })).toBeDisabled();

  await card.getByRole("button", { name: "+ Element hinzufügen" }).click();
  await expect(rows).toHaveCount(9);
  await expect(card.locator("[data-dirty-indicator]")).toBeVisible();

  const name = rows.nth(8).locator("[data-element-name]");
  const description = rows.nth(8).locator("[data-element-description]");
  if (js) {
    // Stripped while typing, with a note (progressive enhancement).
    await name.pressSequentially("Labor2");
    await expect(name).toHaveValue("Labor");
    await expect(card.getByText("Dieses Zeichen ist nicht erlaubt")).toBeVisible();
  } else {
    await name.fill("Labor2");
    await description.fill("Laborwerte");
    await card.getByRole("button", { name: "Speichern" }).click();
    await expect(card.getByText("Nur Buchstaben, Bindestriche und Leerzeichen sind erlaubt")).toBeVisible();
  }

  await name.fill("diagnosen");
  await description.fill("Doppelt");
  await card.getByRole("button", { name: "Speichern" }).click();
  await expect(card.getByText("Ein Element mit diesem Namen existiert bereits")).toBeVisible();

  await name.fill("Sozialanamnese");
  await description.fill("");
  await card.getByRole("button", { name: "Speichern" }).click();
  await expect(card.getByText("Eine Beschreibung ist erforderlich")).toBeVisible();

  await description.fill("x".repeat(101));
  if (js) await expect(rows.nth(8).locator("[data-counter]")).toHaveClass(/text-red-700/);
  await card.getByRole("button", { name: "Speichern" }).click();
  await expect(card.getByText("Die Beschreibung darf höchstens 100 Zeichen lang sein")).toBeVisible();

  await description.fill("Wohnsituation, häusliche Versorgung");
  const prompt = card.locator("textarea");
  const original = await prompt.inputValue();
  await prompt.fill("p".repeat(1001));
  await card.getByRole("button", { name: "Speichern" }).click();
  await expect(card.getByText("Der Prompt darf höchstens 1000 Zeichen lang sein")).toBeVisible();
  await prompt.fill(original);
  await card.getByRole("button", { name: "+ Element hinzufügen" }).click();
  await expect(rows).toHaveCount(10);
  await expect(card.getByRole("button", { name: "+ Element hinzufügen" })).toHaveCount(0);
  await expect(card.getByText("Maximal 10 Elemente erlaubt")).toBeVisible();
  await rows.nth(9).locator("[data-element-name]").fill("Hilfsmittel");
  await rows.nth(9).locator("[data-element-description]").fill("Verordnete Hilfsmittel");
  await card.getByRole("button", { name: "Speichern" }).click();
  await expect(page.getByText("Die Struktur wurde gespeichert.")).toBeVisible();
  await expect(card.getByText("Angepasst")).toBeVisible();
  await expect(card.getByText("10 Elemente", { exact: true })).toBeVisible();

  // Rename and remove, then save again.
  await rows.nth(8).locator("[data-element-name]").fill("Soziales Umfeld");
  await rows.nth(9).getByRole("button", { name: "Element entfernen" }).click();
  await expect(rows).toHaveCount(9);
  await card.getByRole("button", { name: "Speichern" }).click();
  await expect(page.getByText("Die Struktur wurde gespeichert.")).toBeVisible();
  await expect(card.locator("[data-element-name]").nth(8)).toHaveValue("Soziales Umfeld");

  await card.getByRole("button", { name: "Auf Standard zurücksetzen" }).click();
  await expect(page.getByText("Die Vorlage wurde auf den Standard zurückgesetzt.")).toBeVisible();
  await expect(card.getByText("8 Elemente", { exact: true })).toBeVisible();
  await expect(card.getByText("Angepasst")).toHaveCount(0);
});

test("create and delete a custom template", async ({ page }, info) => {
  await signIn(page, account(info.project.name), "/settings");
  await page.getByRole("link", { name: "Neue Vorlage erstellen" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByText("Nicht gespeichert")).toBeVisible();
  await dialog.getByRole("button", { name: "Vorlage erstellen" }).click();
  await expect(dialog.getByText("Der Vorlagenname ist erforderlich")).toBeVisible();
  await expect(dialog.getByText("Der Elementname darf nicht leer sein")).toBeVisible();

  await dialog.getByLabel("Name der Vorlage").fill("Mein Kurzbefund");
  await dialog.locator("[data-element-name]").first().fill("Befund");
  await dialog.locator("[data-element-description]").first().fill("Kurzer Befund mit Wertung");
  await dialog.getByRole("button", { name: "Vorlage erstellen" }).click();
  await expect(page.getByText("Die Vorlage wurde erstellt.")).toBeVisible();
  const card = page.locator("[data-template]", { hasText: "Mein Kurzbefund" });
  await expect(card).toBeVisible();

  // A second one with the same name (other case) is refused.
  await page.getByRole("link", { name: "Neue Vorlage erstellen" }).click();
  await dialog.getByLabel("Name der Vorlage").fill("mein kurzbefund");
  await dialog.locator("[data-element-name]").first().fill("Befund");
  await dialog.locator("[data-element-description]").first().fill("x");
  await dialog.getByRole("button", { name: "Vorlage erstellen" }).click();
  await expect(dialog.getByText("Eine Vorlage mit diesem Namen existiert bereits")).toBeVisible();
  await dialog.getByText("Abbrechen", { exact: true }).click();

  await card.locator("summary").click(); // collapsed again after the cancelled dialog
  await card.getByRole("link", { name: "Vorlage löschen" }).click();
  await expect(page.getByRole("dialog")).toContainText("Mein Kurzbefund");
  await page.getByRole("button", { name: "Löschen" }).click();
  await expect(page.getByText("Die Vorlage wurde gelöscht.")).toBeVisible();
  await expect(page.locator("[data-template]", { hasText: "Mein Kurzbefund" })).toHaveCount(0);
});

test("the AI Learning toggle gives and withdraws consent", async ({ page }, info) => {
  await signIn(page, account(info.project.name), "/settings");
  const section = page.locator("#ai-learning");
  await expect(section).toContainText("Ihre eigenen fertigen Arztbriefe");
  await section.getByRole("switch").click();
  await expect(page.locator("[data-rag-state]")).toHaveAttribute("data-rag-state", "on");
  await page.locator("#ai-learning").getByRole("switch").click();
  await expect(page.locator("[data-rag-state]")).toHaveAttribute("data-rag-state", "off");
});

test.describe("with disable_user_templates=1", () => {
  test.use({ baseURL: `http://localhost:${FLAG_PORT}` });

  test("the repository and creation are hidden and refused by the server", async ({ page }, info) => {
    await signIn(page, account(info.project.name), "/settings");
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Einstellungen");
    await expect(page.getByRole("link", { name: "Vorlagenbibliothek" })).toHaveCount(0);
    await expect(page.getByRole("link", { name: "Neue Vorlage erstellen" })).toHaveCount(0);
    const repository = await page.goto("/settings/repository");
    expect(repository?.status()).toBe(404);
    const create = await page.request.post("/settings/new", {
      form: { name: "Heimlich", "elements[0].name": "Befund", "elements[0].description": "x" },
      headers: { Origin: `http://localhost:${FLAG_PORT}` },
    });
    expect(create.status()).toBe(404);
  });
});

test("the element-description dialog and the editor dialog", async ({ page }, info) => {
  await signIn(page, account(info.project.name), "/settings?language=de-DE&open=soap");
  const card = page.locator('[data-template="soap"]');
  await card.locator("[data-describe-link]").first().click();
  const dialog = page.getByRole("dialog");
  await expect(dialog).toContainText("Beschreibung von „Subjektiv“");
  await dialog.locator("textarea").fill("y".repeat(101));
  await dialog.getByRole("button", { name: "Beschreibung speichern" }).click();
  await expect(dialog.getByText("Die Beschreibung darf höchstens 100 Zeichen lang sein")).toBeVisible();
  await dialog.locator("textarea").fill("Beschwerden in den Worten der Patientin");
  await dialog.getByRole("button", { name: "Beschreibung speichern" }).click();
  await expect(page.getByText("Die Struktur wurde gespeichert.")).toBeVisible();
  await expect(card.locator("[data-element-description]").first()).toHaveValue(
    "Beschwerden in den Worten der Patientin",
  );

  await card.getByRole("link", { name: "Im Editor öffnen" }).click();
  const editor = page.getByRole("dialog");
  await expect(editor).toContainText("Vorlage bearbeiten: SOAP-Notiz");
  await editor.getByRole("button", { name: "Nach unten" }).first().click();
  await expect(editor.getByText("Ungespeicherte Änderungen")).toBeVisible();
  await expect(editor.locator("[data-element-name]").first()).toHaveValue("Objektiv");
  await editor.getByRole("button", { name: "Speichern" }).click();
  await expect(page.getByText("Die Struktur wurde gespeichert.")).toBeVisible();
  await expect(card.locator("[data-element-name]").first()).toHaveValue("Objektiv");

  await card.getByRole("button", { name: "Auf Standard zurücksetzen" }).click();
  await expect(card.locator("[data-element-name]").first()).toHaveValue("Subjektiv");
});
