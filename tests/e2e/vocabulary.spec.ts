import { expect, signIn, test } from "./support";

// Settings › "Mein Vokabular" (issue 24) end to end, JavaScript on and off: the dialog opens from the settings page,
// a term is added by hand and shows up with its date, a built-in term is refused with the typed text kept, and a
// term is removed with the button of its row. Each Playwright project has a workspace of its own.

const account = (project: string) => (project === "js" ? "lena-krause" : "moritz-schulz");

test("the doctor adds a term by hand, is told a built-in one is known already, and removes a term", async ({
  page,
}, info) => {
  await signIn(page, account(info.project.name), "/settings");
  await page.getByRole("link", { name: "Vokabular anzeigen …" }).click();
  await expect(page).toHaveURL(/\/settings\/vocabulary$/);
  const dialog = page.getByRole("dialog", { name: "Mein Vokabular" });
  const add = dialog.locator("[data-vocabulary-add]");
  const german = dialog.locator('[data-vocabulary-language="de"]');

  // Added by hand: back in the dialog with a toast, the term in the German list.
  await add.getByLabel("Begriff", { exact: true }).fill("Sacubitril-Valsartan");
  await add.getByLabel("Sprache").selectOption("de");
  await add.getByRole("button", { name: "Hinzufügen" }).click();
  await expect(dialog.locator("[data-toast]")).toContainText(
    "„Sacubitril-Valsartan“ wurde Ihrem Vokabular hinzugefügt.",
  );
  const row = german.locator("[data-term]").filter({ hasText: "Sacubitril-Valsartan" });
  await expect(row.locator("time")).toBeVisible();
  await expect(dialog.locator("[data-vocabulary-count]")).toHaveText("1 von 500 Begriffen");

  // A built-in term: refused, what was typed stays in the field.
  await add.getByLabel("Begriff", { exact: true }).fill("Ramipril");
  await add.getByRole("button", { name: "Hinzufügen" }).click();
  await expect(add.getByRole("alert")).toHaveText(
    "„Ramipril“ kennt die Spracherkennung schon: Der Begriff steht in der eingebauten Liste.",
  );
  await expect(add.getByLabel("Begriff", { exact: true })).toHaveValue("Ramipril");

  // Removed with the button of its row, which names the term as its description.
  const remove = row.getByRole("button", { name: "Entfernen" });
  await expect(remove).toHaveAccessibleDescription("Sacubitril-Valsartan");
  await remove.click();
  await expect(dialog.locator("[data-toast]")).toContainText(
    "„Sacubitril-Valsartan“ wurde aus Ihrem Vokabular entfernt.",
  );
  await expect(german.locator("[data-term]")).toHaveCount(0);
  await expect(dialog.locator("[data-vocabulary-count]")).toHaveText("0 von 500 Begriffen");
});
