import fs from "node:fs";
import path from "node:path";
import type { Page, TestInfo } from "@playwright/test";
import { makeSpeechWav, makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { expect, letterFromUpload, signIn, test } from "./support";

// Issue 25 end to end, JavaScript on and off: a finished letter leaves Skribent as a German practice sends it. From
// the editor the doctor opens the export dialog, types the recipient and the patient line, and takes the letter as a
// DIN 5008 PDF (read back here with pdf.js), as text for the practice software (shown to copy, without the sections
// that say nothing) and as the print view — a page of its own that the browser prints as the letter alone, with the
// recipient inside the window envelope's address field. Kept details come back the next time. English runs in the
// JavaScript project. Screenshots go to E2E_SHOTS_DIR when it is set (export-<what>-<project>.png).

const account = (project: string) => (project === "js" ? "nora-becker" : "ole-sommer");
const RECORDING = "Export Becker.wav";
const RECIPIENT = "Herrn Dr. med. Jürgen Weiß";
const ADDRESS = ["Hauptstraße 5", "12345 Musterstadt"];
const PATIENT = "Erika Mustermann";
const SUBJECT = "Arztbrief nach Sprechstunde";
const MM = 96 / 25.4; // CSS pixels per millimetre

test.describe.configure({ mode: "serial" });
test.use({ viewport: { width: 1280, height: 900 } });

let dir: string;
let wav: string;
let editorPath = "";

test.beforeAll(async () => {
  dir = await makeTempDir();
  wav = await makeSpeechWav(dir, "Guten Morgen. Was führt Sie zu mir?", RECORDING);
});
test.afterAll(async () => {
  await removeTempDir(dir);
});

async function shot(page: Page, info: TestInfo, what: string) {
  const into = process.env.E2E_SHOTS_DIR;
  if (!into) return;
  fs.mkdirSync(into, { recursive: true });
  await page.screenshot({ path: path.join(into, `export-${what}-${info.project.name}.png`), fullPage: true });
}

async function pdfText(file: string) {
  await import("pdfjs-dist/legacy/build/pdf.worker.mjs" as string);
  const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
  const doc = await pdfjs.getDocument({ data: new Uint8Array(fs.readFileSync(file)), verbosity: 0 }).promise;
  const pages: string[] = [];
  for (let n = 1; n <= doc.numPages; n++) {
    const content = await (await doc.getPage(n)).getTextContent();
    pages.push(content.items.map((item) => ("str" in item ? item.str : "")).join(" "));
  }
  return pages.join("\n").replace(/\s+/g, " ");
}

async function fillDetails(page: Page, keep: boolean) {
  const dialog = page.locator("[data-export-form]");
  await dialog.getByLabel("Name (z. B. Herrn Dr. med. Peter Braun)").fill(RECIPIENT);
  for (const [i, line] of ADDRESS.entries()) await dialog.getByLabel(`Anschrift, Zeile ${i + 1}`).fill(line);
  await dialog.getByLabel("Patient/in").fill(PATIENT);
  await dialog.getByLabel("Geburtsdatum").fill("1964-08-12");
  await dialog.getByLabel("Betreff").fill(SUBJECT);
  await dialog.getByLabel("Datum des Briefs").fill("2026-11-27");
  if (keep) await dialog.getByLabel("Angaben bei diesem Brief speichern").check();
}

test("the letter leaves as a DIN 5008 PDF, as text for the practice software and as a print view, in German", async ({
  page,
  context,
}, info) => {
  test.setTimeout(120_000);
  await signIn(page, account(info.project.name));
  editorPath = await letterFromUpload(page, wav, RECORDING);

  await page.locator('[data-action="export"]').click();
  await expect(page.getByRole("heading", { name: `Brief exportieren: ${RECORDING}` })).toBeVisible();
  await fillDetails(page, false);
  await shot(page, info, "dialog-de");

  // The PDF: a download of the form's answer, read back.
  const [download] = await Promise.all([page.waitForEvent("download"), page.locator('[data-format="pdf"]').click()]);
  expect(download.suggestedFilename()).toMatch(/^Arztbrief-Export_Becker-2026-11-27\.pdf$/);
  const file = path.join(dir, "brief.pdf");
  await download.saveAs(file);
  const text = await pdfText(file);
  for (const expected of [RECIPIENT, ...ADDRESS, PATIENT, "12.08.1964", SUBJECT, "Seite 1 von 1"])
    expect(text).toContain(expected);
  expect(text).toContain("Guten Morgen, Frau Becker.");
  expect(text).not.toContain("Keine Informationen gefunden");

  // The text for the practice software: shown to copy, with what was typed still in the form.
  await page.locator('[data-format="text"]').click();
  const pvs = page.locator("[data-pvs-text] textarea");
  await expect(pvs).toBeVisible();
  await expect(pvs).toHaveValue(/Guten Morgen, Frau Becker\./);
  expect(await pvs.inputValue()).not.toContain("Keine Informationen gefunden");
  await expect(page.locator("[data-export-form]").getByLabel("Patient/in")).toHaveValue(PATIENT);
  // With JavaScript a button copies it; without, the text is there to select.
  await expect(page.locator('[data-pvs-text] [data-action="copy"]')).toBeVisible({
    visible: info.project.name === "js",
  });

  // The print view opens as a page of its own: the letter alone, the recipient inside the address field.
  const [printView] = await Promise.all([context.waitForEvent("page"), page.locator('[data-format="print"]').click()]);
  await printView.waitForLoadState();
  const sheet = printView.locator("[data-print-letter]");
  await expect(sheet).toBeVisible();
  await expect(printView.locator("[data-sidebar], [data-topbar]")).toHaveCount(0);
  await expect(printView.locator("[data-recipient]")).toHaveText([RECIPIENT, ...ADDRESS].join("\n"));
  await expect(printView.locator("[data-info-block]")).toContainText(`${PATIENT}, geb. 12.08.1964`);
  await expect(printView.locator("[data-subject]")).toHaveText(SUBJECT);
  // DIN 5008 form B on the printed sheet: the address field 20 mm from the left edge and 45 mm from the top.
  await printView.emulateMedia({ media: "print" });
  const page1 = (await sheet.boundingBox())!;
  const field = (await printView.locator("[data-address-field]").boundingBox())!;
  const recipient = (await printView.locator("[data-recipient]").boundingBox())!;
  expect(Math.abs(field.y - page1.y - 45 * MM)).toBeLessThan(2);
  expect(recipient.y + recipient.height).toBeLessThanOrEqual(field.y + field.height + 1);
  await shot(printView, info, "print-de");
  await printView.close();

  // Nothing was kept: the dialog starts empty again. Kept, it comes back.
  await page.goto(editorPath.replace("/arztbriefe/", "/arztbriefe/export/"));
  await expect(page.locator("[data-export-form]").getByLabel("Patient/in")).toHaveValue("");
  await fillDetails(page, true);
  await Promise.all([page.waitForEvent("download"), page.locator('[data-format="docx"]').click()]);
  await page.goto(editorPath.replace("/arztbriefe/", "/arztbriefe/export/"));
  await expect(page.locator("[data-export-form]").getByLabel("Patient/in")).toHaveValue(PATIENT);
  await expect(page.locator("[data-export-form]").getByLabel("Anschrift, Zeile 2")).toHaveValue(ADDRESS[1]!);
  // The form itself keeps a birth date in the future from being sent.
  await expect(page.locator("[data-export-form]").getByLabel("Geburtsdatum")).toHaveAttribute(
    "max",
    /^\d{4}-\d{2}-\d{2}$/,
  );
});

test("the export dialog in English, on a phone", async ({ page }, info) => {
  test.skip(info.project.name !== "js", "English runs with JavaScript on");
  expect(editorPath, "the letter made by the first test").not.toBe("");
  await signIn(page, account(info.project.name), "/help");
  await page.locator("[data-topbar] button[value='en']").first().click();
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(editorPath);
  await page.locator('[data-action="export"]').click();
  await expect(page.getByRole("heading", { name: `Export letter: ${RECORDING}` })).toBeVisible();
  const form = page.locator("[data-export-form]");
  await expect(form.getByLabel("Keep these details with this letter")).toBeChecked();
  for (const label of [
    "PDF (DIN 5008)",
    "Word (DOCX)",
    "Text for the practice software",
    "Print view",
    "FHIR document",
  ])
    await expect(form.getByRole("button", { name: label })).toBeVisible();
  // Nothing wider than the phone.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await shot(page, info, "dialog-en-phone");
  // The letter is German, so the letter's own wording stays German in the file.
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    form.getByRole("button", { name: "PDF (DIN 5008)" }).click(),
  ]);
  const file = path.join(dir, "letter-en.pdf");
  await download.saveAs(file);
  expect(await pdfText(file)).toContain("Seite 1 von 1");
});
