import fs from "node:fs";
import path from "node:path";
import type { Locator, Page, TestInfo } from "@playwright/test";
import { makeSpeechWav, makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { expect, letterFromUpload, signIn, test } from "./support";

// Issue 24 end to end, JavaScript on and off: the letter editor's check ("Prüfung") as a clinician sees it. The
// letter is made as in letters.spec.ts (the tests' Speechmatics answers the named two-speaker consultation; the
// tests' chat server quotes its first line into the first section). The model writes nothing the transcript does
// not hold, so the doctor has the model add two sentences in a refinement — one the consultation has, one it does
// not ("Ramipril 10 mg täglich."; the tests' model adds what an instruction's „ergänze „…““ names): that wording
// is the model's, so the check holds it to account, while a sentence the doctor types is shown as theirs, not
// checked — also after a later accepted proposal. The consultation's Ibuprofen is in no section: an omission, which becomes a proposal. English runs in the
// JavaScript project, where hydration in the other language is exercised too; the phone-sized check runs in both.
//
// Screenshots of the check go to E2E_SHOTS_DIR when it is set (check-<what>-<project>.png).

const account = (project: string) => (project === "js" ? "clara-schmidt" : "felix-braun");
const RECORDING = "Prüfung Becker.wav";
/** The first line of the consultation, as the tests' chat server quotes it into the first section. */
const QUOTED = "Sprecher 1: Guten Morgen, Frau Becker. Was führt Sie heute zu mir?";
const SAID = "Dazu kommt leichtes Fieber am Abend.";
const INVENTED = "Ramipril 10 mg täglich.";
const OWN = "Patientin wirkt erschöpft.";
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

test.describe.configure({ mode: "serial" });
test.use({ viewport: DESKTOP });

let dir: string;
let wav: string;
/** The letter's editor, made by the first test of the project that runs. */
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
  // The editor is a dialog that scrolls inside a fixed overlay, which a full-page screenshot does not unroll: the
  // window is made as tall as the overlay's content for the picture, then given back its height.
  const viewport = page.viewportSize()!;
  const height = await page
    .locator("[data-evidence], [data-letter-editor]")
    .first()
    .evaluate((el) => {
      let box: HTMLElement | null = el.parentElement;
      while (box && box.scrollHeight <= box.clientHeight) box = box.parentElement;
      return box ? box.scrollHeight : document.documentElement.scrollHeight;
    });
  await page.setViewportSize({ width: viewport.width, height: Math.max(viewport.height, height) });
  await page.screenshot({ path: path.join(into, `check-${what}-${info.project.name}.png`), fullPage: true });
  await page.setViewportSize(viewport);
}

/** The check's item of the sentence with this text (its own line: the sources below quote the transcript). */
function sentence(page: Page, text: string) {
  return page.locator("[data-sentence]").filter({ has: page.locator("xpath=./p[1]", { hasText: text }) });
}

/** The sentence's status badge. */
function badgeOf(page: Page, text: string) {
  return sentence(page, text).locator("xpath=./p[1]/span");
}

function escaped(text: string) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

async function saveSections(page: Page, texts: Record<string, string>, version: number) {
  const editor = page.locator("[data-letter-editor]");
  for (const [title, text] of Object.entries(texts))
    await editor.locator(`textarea[data-section="${title}"]`).fill(text);
  await editor.locator('[data-action="save"]').click();
  await expect(page.getByText(`Änderungen als Version ${version} gespeichert.`)).toBeVisible();
}

test("the check, in German: the header's summary, every sentence with its evidence, a flag to confirm, an omission to propose", async ({
  page,
}, info) => {
  test.setTimeout(120_000);
  await signIn(page, account(info.project.name));
  editorPath = await letterFromUpload(page, wav, RECORDING);
  const editor = page.locator("[data-letter-editor]");
  const first = editor.locator("textarea[data-section]").first();
  await expect(first).toHaveValue(QUOTED);
  const firstTitle = (await first.getAttribute("data-section"))!;

  // The model's letter quotes the consultation, but leaves the Ibuprofen out: the header says so.
  const summary = page.locator("[data-evidence-summary]");
  await expect(summary).toHaveAttribute("data-evidence-summary", "open");
  await expect(summary).toHaveText(/mögliche Auslassung/);
  await expect(summary).not.toHaveText(/ohne Beleg/);

  // The doctor has the model add a sentence the consultation has and one it does not: the model's wording.
  const panel = page.locator("[data-refine-panel]");
  await panel.locator("[data-scope]").selectOption({ label: firstTitle });
  await panel.locator("[data-instruction]").fill(`Bitte ergänze „${SAID} ${INVENTED}“`);
  await panel.locator('[data-action="refine"]').click();
  await page.locator('[data-proposal] [data-action="accept"]').click();
  await expect(page.getByText("Vorschlag übernommen und als Version 2 gespeichert.")).toBeVisible();
  // Then the doctor drops the model's note.
  await saveSections(page, { [firstTitle]: `${QUOTED} ${SAID} ${INVENTED}` }, 3);

  // The header: one statement without evidence and the omission, a link to the check.
  await expect(summary).toHaveAttribute("data-evidence-summary", "open");
  await expect(summary).toHaveText(/^1 Aussage ohne Beleg · \d+ mögliche Auslassung(en)?$/);
  await summary.getByRole("link", { name: "Prüfung des Briefs gegen das Transkript" }).click();
  await expect(page).toHaveURL(`${editorPath}?check=1`);
  const tab = page.locator('[data-action="check"]');
  await expect(tab).toHaveText("Prüfung");
  await expect(tab).toHaveAttribute("aria-current", "page");

  // Every sentence with its status.
  const check = page.locator("[data-evidence]");
  await expect(check).toBeVisible();
  await expect(sentence(page, "Guten Morgen, Frau Becker.")).toHaveAttribute("data-status", "supported");
  await expect(badgeOf(page, "Was führt Sie heute zu mir?")).toHaveText("Belegt");
  await expect(badgeOf(page, SAID)).toHaveText("Belegt");
  await expect(badgeOf(page, INVENTED)).toHaveText("Ohne Beleg");
  await expect(sentence(page, "Keine Informationen gefunden").first()).toHaveAttribute("data-status", "neutral");

  // A supported sentence's evidence: where the patient said it, with the audio from that second.
  const said = sentence(page, SAID);
  await said.locator("summary").click();
  const source = said.locator("[data-source]").first();
  await expect(source).toContainText("Seit drei Tagen habe ich starke Kopfschmerzen. Dazu kommt leichtes Fieber");
  const link = source.getByRole("link");
  await expect(link).toHaveText(/^Sprecher 2 · 0:\d\d$/);
  await expect(link).toHaveAttribute("title", "Im Transkript zeigen");
  const seconds = Number((await link.textContent())!.split(":").at(-1));
  const audio = source.locator("audio");
  await expect(audio).toHaveAttribute("src", new RegExp(`#t=${seconds}$`));
  await expect(audio).toHaveAttribute("aria-label", `Ab 0:${String(seconds).padStart(2, "0")} anhören`);
  // One player per source, all starting where their segment does.
  const players = check.locator("[data-source] audio");
  expect(await players.count()).toBe(await check.locator("[data-source]").count());
  for (const src of await players.evaluateAll((all) => all.map((a) => a.getAttribute("src") ?? "")))
    expect(src).toMatch(/#t=\d+$/);

  // The model named the line it quoted as its source, and the checker found that it holds: marked as such.
  const greeting = sentence(page, "Guten Morgen, Frau Becker.");
  await greeting.locator("summary").click();
  await expect(greeting.locator("[data-source]").first().locator("[data-cited]")).toHaveText(
    "vom Modell genannt · geprüft",
  );
  await expect(greeting.locator('[data-flag="citation"], [data-citation-rejected]')).toHaveCount(0);

  // The flag of the unsupported sentence, and the omission: what the desktop screenshot shows.
  const invented = sentence(page, INVENTED);
  await expect(invented.locator('[data-flag="unsupported"]')).toContainText("Im Transkript nicht gefunden");
  const omission = page.locator('[data-omission="medication"]');
  await expect(omission).toContainText("Medikation: Ibuprofen, vierhundert Milligramm, zweimal täglich");
  await expect(omission).toContainText(/gehört in: \S+/);
  await shot(page, info, "desktop-de");

  // The source link opens the transcript at that paragraph: the URL's target, on screen.
  const href = (await link.getAttribute("href"))!;
  const segment = href.split("#")[1]!;
  expect(segment).toMatch(/^seg-t\d+p\d+$/);
  await link.click();
  await expect(page).toHaveURL(new RegExp(`#${segment}$`));
  const paragraph = page.locator(`[id="${segment}"]`);
  await expect(paragraph).toContainText(SAID);
  await expect(paragraph).toBeInViewport();
  expect(await paragraph.evaluate((p) => p.matches(":target"))).toBe(true);

  // Confirming the flag: back to the check, with a message; the flag stays, confirmed, and is no longer counted.
  await page.goto(`${editorPath}?check=1`);
  await expect(invented.locator('[data-action="confirm-flag"]')).toHaveText("Ist richtig – bestätigen");
  await invented.locator('[data-action="confirm-flag"]').click();
  await expect(page).toHaveURL(`${editorPath}?check=1`);
  await expect(page.getByText("Bestätigung gespeichert")).toBeVisible();
  await expect(invented.locator('[data-flag="unsupported"] [data-confirmed]')).toHaveText("✓ Von Ihnen bestätigt");
  await expect(invented.locator('[data-action="confirm-flag"]')).toHaveCount(0);
  await expect(summary).not.toHaveText(/ohne Beleg/);

  // The omission becomes a proposal for its section; accepted, it is in the letter.
  await expect(omission.locator('[data-action="propose-omission"]')).toHaveText("Als Vorschlag übernehmen");
  await omission.locator('[data-action="propose-omission"]').click();
  await expect(page).toHaveURL(new RegExp(`${escaped(editorPath)}\\?proposal=`));
  await expect(page.getByText("Vorschlag erstellt – bitte prüfen und übernehmen")).toBeVisible();
  const proposal = page.locator("[data-proposal]");
  await expect(proposal).toContainText("Auslassung ergänzen (Medikation): Ibuprofen");
  await expect(proposal.locator('[data-change="changed"]')).toHaveCount(1);
  await proposal.locator('[data-action="accept"]').click();
  await expect(page.getByText("Vorschlag übernommen und als Version 4 gespeichert.")).toBeVisible();

  // The doctor writes the medication into the therapy too, and a sentence of their own: nothing is left to look
  // at, and the doctor's wording is shown as theirs, not checked.
  await saveSections(
    page,
    { [firstTitle]: `${QUOTED} ${SAID} ${INVENTED} ${OWN}`, Therapie: "Ibuprofen 400 mg zweimal täglich." },
    5,
  );
  await expect(summary).toHaveAttribute("data-evidence-summary", "clear");
  await expect(summary).toHaveText("Alle Aussagen im Transkript belegt");
  await summary.getByRole("link").click();
  await expect(badgeOf(page, OWN)).toHaveText("Von Ihnen formuliert – nicht geprüft");
  await expect(sentence(page, OWN).locator("[data-source], [data-flag]")).toHaveCount(0);
  await expect(badgeOf(page, "Ibuprofen 400 mg zweimal täglich.")).toHaveText("Von Ihnen formuliert – nicht geprüft");
  await expect(badgeOf(page, "Ibuprofen, vierhundert Milligramm, zweimal täglich.")).toHaveText("Belegt");
  await expect(page.locator("[data-omissions]")).toContainText("Keine Auslassungen gefunden.");
  await expect(page.locator("[data-omission], [data-empty-section]")).toHaveCount(0);
  await shot(page, info, "desktop-de-clear");
});

test("the check, in English", async ({ page }, info) => {
  test.skip(info.project.name !== "js", "English runs with JavaScript on (hydration in the other language)");
  expect(editorPath, "the letter made by the first test").not.toBe("");
  await signIn(page, account(info.project.name), "/help");
  await page.locator("[data-topbar] button[value='en']").first().click();
  await expect(page.locator("html")).toHaveAttribute("lang", "en");

  await page.goto(editorPath);
  const summary = page.locator("[data-evidence-summary]");
  await expect(summary).toHaveText("Every statement found in the transcript");
  await summary.getByRole("link", { name: "Check of the letter against the transcript" }).click();
  await expect(page).toHaveURL(`${editorPath}?check=1`);
  await expect(page.locator('[data-action="check"]')).toHaveText("Check");
  await expect(page.locator('[data-action="check"]')).toHaveAttribute("aria-current", "page");
  await expect(badgeOf(page, SAID)).toHaveText("Supported");
  await expect(badgeOf(page, INVENTED)).toHaveText("No evidence");
  await expect(badgeOf(page, OWN)).toHaveText("Your wording – not checked");
  await expect(sentence(page, INVENTED).locator('[data-flag="unsupported"]')).toContainText(
    "Not found in the transcript",
  );
  await expect(sentence(page, INVENTED).locator("[data-confirmed]")).toHaveText("✓ Confirmed by you");
  const said = sentence(page, SAID);
  await said.locator("summary").click();
  await expect(said.locator("summary")).toHaveText(/^Evidence \(\d\)$/);
  // The speaker is named in the transcript's language (German), the rest in English.
  const link = said.locator("[data-source] a").first();
  await expect(link).toHaveText(/^Sprecher 2 · 0:\d\d$/);
  await expect(link).toHaveAttribute("title", "Show in transcript");
  await expect(said.locator("[data-source] audio").first()).toHaveAttribute("aria-label", /^Listen from 0:\d\d$/);
  const greeting = sentence(page, "Guten Morgen, Frau Becker.");
  await greeting.locator("summary").click();
  await expect(greeting.locator("[data-cited]").first()).toHaveText("named by the model · checked");
  await expect(page.locator("[data-omissions]")).toContainText("No omissions found.");
});

/** Puts the caret a few characters into `text` in the textarea, as a click there would. */
async function caretInto(area: Locator, text: string) {
  await area.evaluate((element, words) => {
    const field = element as HTMLTextAreaElement;
    const at = field.value.indexOf(words) + 3;
    field.focus();
    field.setSelectionRange(at, at);
  }, text);
  // A key the text ignores: the script follows the caret on key-up.
  await area.press("Shift");
}

test("in the editor, the caret in a sentence shows its evidence; a rewritten sentence loses it visibly", async ({
  page,
}, info) => {
  expect(editorPath, "the letter made by the first test").not.toBe("");
  await signIn(page, account(info.project.name));
  await page.goto(editorPath);
  const panel = page.locator("[data-sentence-panel]");
  const first = page.locator("textarea[data-section]").first();
  await expect(first).toHaveValue(new RegExp(escaped(SAID)));
  if (info.project.name !== "js") {
    // Without JavaScript the check shows the evidence, with links; the editor's panel never appears.
    await first.click();
    await expect(panel).toBeHidden();
    return;
  }

  await caretInto(first, SAID);
  await expect(panel).toBeVisible();
  await expect(panel.locator("[data-panel-status]")).toHaveText("Belegt");
  const source = panel.locator("[data-panel-source]").first();
  await expect(source).toContainText("Dazu kommt leichtes Fieber");
  await expect(source.getByRole("link")).toHaveText(/^Sprecher 2 · 0:\d\d$/);
  await expect(source.getByRole("link")).toHaveAttribute("href", /^\/transcriptions\/.+#seg-t\d+p\d+$/);
  const play = source.locator('[data-action="play-source"]');
  await expect(play).toHaveText(/^Ab 0:\d\d anhören$/);
  await play.click();
  const seconds = (await play.textContent())!.match(/0:(\d\d)/)![1]!;
  await expect(panel.locator("audio")).toHaveAttribute("src", new RegExp(`#t=${Number(seconds)}$`));
  await shot(page, info, "editor-caret");

  await caretInto(first, INVENTED);
  await expect(panel.locator("[data-panel-status]")).toHaveText("Ohne Beleg");
  await expect(panel.locator("[data-panel-sources]")).toContainText("Keine Stelle im Transkript gefunden.");
  await caretInto(first, OWN);
  await expect(panel.locator("[data-panel-status]")).toHaveText("Von Ihnen formuliert – nicht geprüft");

  // The doctor rewrites one sentence: its evidence is dropped, visibly; the others keep theirs.
  await first.fill((await first.inputValue()).replace(INVENTED, "Ramipril 5 mg täglich."));
  await caretInto(first, "Ramipril 5 mg");
  await expect(panel.locator("[data-panel-status]")).toHaveText(/^Von Ihnen geändert – der bisherige Beleg/);
  await expect(panel.locator("[data-panel-source]")).toHaveCount(0);
  await caretInto(first, SAID);
  await expect(panel.locator("[data-panel-status]")).toHaveText("Belegt");
  await expect(panel.locator("[data-panel-source]").first()).toContainText("Dazu kommt leichtes Fieber");
});

test("the check on a phone: readable without scrolling sideways", async ({ page }, info) => {
  expect(editorPath, "the letter made by the first test").not.toBe("");
  await page.setViewportSize(PHONE);
  await signIn(page, account(info.project.name));
  await page.goto(`${editorPath}?check=1`);
  await expect(page.locator("[data-evidence]")).toBeVisible();
  // The evidence of every sentence open, as a doctor checking them one by one would have it.
  const closed = page.locator("[data-evidence] details:not([open]) > summary");
  for (let left = await closed.count(); left > 0; left--) await closed.first().click();
  await expect(closed).toHaveCount(0);
  const { scrollWidth, clientWidth } = await page.evaluate(() => {
    const root = document.scrollingElement!;
    return { scrollWidth: root.scrollWidth, clientWidth: root.clientWidth };
  });
  expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
  // Nor is anything of the check cut off at the right edge of a box that scrolls or clips.
  const beyond = await page
    .locator("[data-evidence] *")
    .evaluateAll((all) =>
      all
        .filter(
          (el) => el.getBoundingClientRect().width > 0 && el.getBoundingClientRect().right > window.innerWidth + 0.5,
        )
        .map((el) => `${el.tagName.toLowerCase()}: ${(el.textContent ?? "").slice(0, 40)}`),
    );
  expect(beyond).toEqual([]);
  await shot(page, info, "phone");
});

// An accepted proposal is stored as a whole-letter version of kind "refined"; only what it brought in is the model's
// wording, so the doctor's own sentence elsewhere in the letter stays "Von Ihnen formuliert – nicht geprüft".
test("the doctor's own wording stays theirs when an omission proposal is accepted", async ({ page }, info) => {
  expect(editorPath, "the letter made by the first test").not.toBe("");
  await signIn(page, account(info.project.name));
  await page.goto(editorPath);
  // Both medication sections emptied again: the Ibuprofen is an omission once more.
  const none = "Keine Informationen gefunden";
  await saveSections(page, { Therapie: none, Medikation: none }, 6);
  await page.goto(`${editorPath}?check=1`);
  await expect(badgeOf(page, OWN)).toHaveText("Von Ihnen formuliert – nicht geprüft");
  await page.locator('[data-omission="medication"] [data-action="propose-omission"]').click();
  await page.locator('[data-proposal] [data-action="accept"]').click();
  await expect(page.getByText("Vorschlag übernommen und als Version 7 gespeichert.")).toBeVisible();
  await page.goto(`${editorPath}?check=1`);
  await expect(badgeOf(page, OWN)).toHaveText("Von Ihnen formuliert – nicht geprüft");
});
