import fs from "node:fs";
import path from "node:path";
import type { Page, TestInfo } from "@playwright/test";
import { HOSTILE_SVGS, pngLogo } from "../support/letterhead-fixtures";
import { expect, signIn, test } from "./support";

// Settings › "Briefkopf" (issue 25) end to end, JavaScript on and off: reached from the settings page, which says the
// letters use the defaults; a wrong BSNR refused with the typed text kept; saved with a PNG logo that the page then
// shows; a hostile SVG refused with its own message; the logo removed; the page once in English; the letterhead
// deleted again. Each Playwright project has a workspace of its own. Screenshots (desktop and 390 px wide) go to
// E2E_SHOTS_DIR when it is set (letterhead-<what>-<project>.png).

const account = (project: string) => (project === "js" ? "ida-kraus" : "erik-jansen");

async function shot(page: Page, info: TestInfo, what: string) {
  const into = process.env.E2E_SHOTS_DIR;
  if (!into) return;
  fs.mkdirSync(into, { recursive: true });
  await page.screenshot({ path: path.join(into, `letterhead-${what}-${info.project.name}.png`), fullPage: true });
}

test("the doctor sets up a letterhead with a logo, is refused bad input, and removes it again", async ({
  page,
}, info) => {
  test.setTimeout(60_000);
  await signIn(page, account(info.project.name), "/settings");
  await page.getByRole("link", { name: "Briefkopf bearbeiten …" }).click();
  await expect(page).toHaveURL(/\/settings\/letterhead$/);
  const dialog = page.getByRole("dialog", { name: "Briefkopf" });
  await expect(dialog.locator("[data-letterhead-source]")).toHaveText(/Es gibt noch keinen Briefkopf/);
  const form = dialog.locator("[data-letterhead-form]");

  // A BSNR of four digits: refused, with everything typed still there.
  await form.getByLabel("Name der Praxis").fill("Hausarztpraxis Am Rosengarten");
  await form
    .getByLabel(/Ärztinnen und Ärzte/)
    .fill("Dr. med. Ida Kraus, Fachärztin für Innere Medizin\nDr. med. Jörg Maaß");
  await form.getByLabel("Straße und Hausnummer").fill("Rosengartenweg 3");
  await form.getByLabel("Postleitzahl").fill("79098");
  await form.getByLabel("Ort", { exact: true }).fill("Freiburg im Breisgau");
  await form.getByLabel(/^BSNR/).fill("1234");
  await form.getByRole("button", { name: "Briefkopf speichern" }).click();
  const bsnr = form.getByLabel(/^BSNR/);
  await expect(bsnr).toHaveAttribute("aria-invalid", "true");
  await expect(form.locator('[data-letterhead-error="bsnr"]')).toHaveText("Genau neun Ziffern, oder leer lassen.");
  await expect(bsnr).toHaveAccessibleDescription(/Genau neun Ziffern, oder leer lassen\./);
  await expect(form.getByLabel("Name der Praxis")).toHaveValue("Hausarztpraxis Am Rosengarten");
  await expect(form.getByLabel("Ort", { exact: true })).toHaveValue("Freiburg im Breisgau");
  await shot(page, info, "refused");

  // Corrected, with a PNG logo: saved, the page says the letters use it, and shows the logo.
  await bsnr.fill("123456789");
  await form.getByLabel(/Logo auswählen/).setInputFiles({
    name: "praxis-logo.png",
    mimeType: "image/png",
    buffer: Buffer.from(pngLogo(240, 80)),
  });
  await form.getByRole("button", { name: "Briefkopf speichern" }).click();
  await expect(dialog.locator("[data-toast]")).toContainText("Der Briefkopf wurde gespeichert.");
  await expect(dialog.locator('[data-letterhead-source="own"]')).toBeVisible();
  const logo = dialog.getByRole("img", { name: "Aktuelles Logo des Briefkopfs" });
  await expect(logo).toBeVisible();
  expect(await logo.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(240);
  await expect(form.getByLabel(/Ärztinnen und Ärzte/)).toHaveValue(
    "Dr. med. Ida Kraus, Fachärztin für Innere Medizin\nDr. med. Jörg Maaß",
  );
  for (const [width, what] of [
    [1280, "desktop"],
    [390, "phone"],
  ] as const) {
    await page.setViewportSize({ width, height: 900 });
    await shot(page, info, what);
  }
  await page.setViewportSize({ width: 1280, height: 900 });

  // A hostile SVG: refused with its reason, the stored logo stays.
  const script = HOSTILE_SVGS.find((c) => c.reason === "svgScript")!;
  await form.getByLabel(/Anderes Logo auswählen/).setInputFiles({
    name: "logo.svg",
    mimeType: "image/svg+xml",
    buffer: Buffer.from(script.svg),
  });
  await form.getByRole("button", { name: "Briefkopf speichern" }).click();
  await expect(form.locator('[data-letterhead-error="logo"]')).toHaveText(
    "Das SVG enthält ein Skript oder eingebettete Inhalte; solche SVGs werden nicht angenommen.",
  );
  await expect(form.getByLabel("Name der Praxis")).toHaveValue("Hausarztpraxis Am Rosengarten");
  await expect(dialog.getByRole("img", { name: "Aktuelles Logo des Briefkopfs" })).toBeVisible();

  // The logo removed with its own button.
  await dialog.getByRole("button", { name: "Logo entfernen" }).click();
  await expect(dialog.locator("[data-toast]")).toContainText("Das Logo wurde entfernt.");
  await expect(dialog.locator("[data-logo-none]")).toHaveText("Kein Logo hinterlegt.");

  // In English: the same letterhead, the page's words in English.
  // The language switch sits in the top bar, under the dialog's backdrop: switched on another page.
  await page.goto("/help");
  await page.locator("[data-topbar] button[value='en']").first().click();
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  await page.goto("/settings/letterhead");
  const english = page.getByRole("dialog", { name: "Letterhead" });
  await expect(english.locator("[data-letterhead-source]")).toHaveText("Your letters use this letterhead, your own.");
  await expect(english.getByLabel("Practice name")).toHaveValue("Hausarztpraxis Am Rosengarten");
  await english.getByLabel(/^E-mail/).fill("not-an-address");
  await english.getByRole("button", { name: "Save letterhead" }).click();
  await expect(english.locator('[data-letterhead-error="email"]')).toHaveText(
    "Please enter an e-mail address like practice@example.org.",
  );

  // Deleted: the letters use the defaults again.
  await english.getByRole("button", { name: "Delete my own letterhead" }).click();
  await expect(english.locator("[data-toast]")).toContainText("Your own letterhead has been deleted.");
  await expect(english.locator("[data-letterhead-source]")).toHaveText(/There is no letterhead yet/);
  await page.goto("/help");
  await page.locator("[data-topbar] button[value='de']").first().click();
  await expect(page.locator("html")).toHaveAttribute("lang", "de");
});
