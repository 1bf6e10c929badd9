import type { Page, Request } from "@playwright/test";
import { makeSpeechWav, makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { expect, letterFromUpload, signIn, test } from "./support";

// Issue 24 end to end, JavaScript on and off: the letter written again from the corrected transcript (ADR 0032), as a
// clinician notices it. The letter is made as in letters.spec.ts: the tests' Speechmatics answers the named
// two-speaker consultation and the tests' chat server quotes the transcript's first line into the first section and
// writes "no information" into the others (tests/support/fake-llm-letters.ts). That first line has no uncertain word
// the review could ask about, so what reaches the regenerated letter is the doctor's naming of its speaker: "Sprecher
// 1" becomes "Ärztin/Arzt". A word the review asks about is corrected too, and the last test shows that such a word
// reaches the model: corrected to the chat server's marker of a recording that is no consultation (KEIN-PATIENT), it
// makes the regeneration fail, and the letter stays as it was. The result of a regeneration is a proposal with a
// per-section diff: the letter changes only when the doctor accepts it, and a section the doctor wrote stays theirs
// when one other section is regenerated. English runs in the JavaScript project.

const account = (project: string) => (project === "js" ? "greta-hahn" : "jan-wolf");
const RECORDING = "Neuerstellung Becker.wav";
const FIRST_LINE = "Guten Morgen, Frau Becker. Was führt Sie heute zu mir?";
/** The first section as the letter was written, and as it is written again once the doctor named the speaker. */
const QUOTED = `Sprecher 1: ${FIRST_LINE}`;
const CORRECTED = `Ärztin/Arzt: ${FIRST_LINE}`;
/** The doctor's own text in another section, saved before the transcript was corrected. */
const OTHER = "Therapie";
const OWN = "Paracetamol 500 mg bei Bedarf, Wiedervorstellung in drei Tagen.";
/** The tests' chat server takes a transcript holding this for one that is no consultation (fake-llm-letters.ts). */
const NOT_CLINICAL = "KEIN-PATIENT";

test.describe.configure({ mode: "serial" });

let dir: string;
let wav: string;
/** The letter's editor and its transcript's viewer, made by the first test of the project that runs. */
let editorPath = "";
let viewerPath = "";

test.beforeAll(async () => {
  dir = await makeTempDir();
  wav = await makeSpeechWav(dir, "Guten Morgen. Was führt Sie zu mir?", RECORDING);
});
test.afterAll(async () => {
  await removeTempDir(dir);
});

function escaped(text: string) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The section's field in the editor. */
function section(page: Page, title: string) {
  return page.locator(`[data-letter-editor] textarea[data-section="${title}"]`);
}

/** The proposal's diff of one section. */
function diffOf(page: Page, title: string) {
  return page.locator(`[data-proposal] [data-diff-section="${title}"]`);
}

async function switchLanguage(page: Page, language: "de" | "en") {
  await page.goto("/help");
  await page.locator(`[data-topbar] button[value='${language}']`).first().click();
  await expect(page.locator("html")).toHaveAttribute("lang", language);
}

/**
 * Starts a regeneration of the whole letter or one section from the editor and waits, on the page that refreshes
 * itself (?regeneration=1), for where it leads: the proposal. Whether that page is seen saying that the letter is
 * being written depends on how soon the worker takes the job, so only the way through it is checked.
 */
async function regenerate(page: Page, scope: string | "all") {
  const form = page.locator("[data-regenerate-form]");
  if (scope === "all") await form.locator("[data-regenerate-scope]").selectOption({ index: 0 });
  else await form.locator("[data-regenerate-scope]").selectOption({ label: scope });
  const waiting: string[] = [];
  const seen = (request: Request) => {
    if (new URL(request.url()).searchParams.has("regeneration")) waiting.push(request.url());
  };
  page.on("request", seen);
  await form.locator('[data-action="regenerate"]').click();
  await page.waitForURL(new RegExp(`${escaped(editorPath)}\\?proposal=`), { timeout: 30_000 });
  page.off("request", seen);
  expect(waiting, "the way through the page that waits for the job").not.toEqual([]);
  await expect(page.locator('[data-proposal][data-proposal-status="open"]')).toBeVisible();
}

test("a regeneration from the corrected transcript is a proposal: the letter changes only when accepted, the doctor's own section stays", async ({
  page,
}, info) => {
  test.setTimeout(150_000);
  await signIn(page, account(info.project.name));
  // The letter as the model wrote it from the recognised transcript.
  editorPath = await letterFromUpload(page, wav, RECORDING);
  const editor = page.locator("[data-letter-editor]");
  const first = editor.locator("textarea[data-section]").first();
  await expect(first).toHaveValue(QUOTED);
  const firstTitle = (await first.getAttribute("data-section"))!;
  expect(firstTitle).not.toBe(OTHER);

  // The doctor writes a section of their own.
  await section(page, OTHER).fill(OWN);
  await editor.locator('[data-action="save"]').click();
  await expect(page.getByText("Änderungen als Version 2 gespeichert.")).toBeVisible();

  // Then corrects the transcript: a misheard word in the review, and who the first speaker is.
  await page.goto("/transcriptions");
  const entry = page.locator("tbody tr").filter({ has: page.locator("[data-transcript-row]"), hasText: RECORDING });
  await entry.getByRole("link", { name: "Transkript ansehen" }).click();
  const viewer = page.locator("[data-transcript-viewer]");
  await expect(viewer.locator('[data-turn="2"]').first()).toContainText("Seit drei Tagen");
  viewerPath = new URL(page.url()).pathname;
  await page.goto(`${viewerPath}?review=1`);
  const review = page.locator("[data-review]");
  await expect(review.locator("[data-review-word]")).toHaveText("drei");
  await review.getByLabel("Korrektur").fill("vier");
  await review.getByRole("button", { name: "Korrektur speichern" }).click();
  await expect(page.getByText(/^Die Korrektur ist gespeichert/)).toBeVisible();
  await page.goto(viewerPath);
  await expect(viewer.locator('[data-turn="2"]').first()).toContainText("Seit vier Tagen");
  const speaker = viewer.locator('[data-speaker-card="1"]');
  await speaker.locator("[data-name-speaker] summary").click();
  await speaker.getByLabel("Rolle").selectOption({ label: "Ärztin/Arzt" });
  await speaker.getByRole("button", { name: "Speichern" }).click();
  await expect(page.getByText("Der Sprecher ist benannt.")).toBeVisible();
  await expect(viewer.locator('[data-turn="1"] h4').first()).toContainText("Ärztin/Arzt");

  // The whole letter written again: a proposal, section by section. It has the corrected first section — and
  // "no information" where the doctor wrote their own, which the doctor does not want: rejected, nothing changes.
  await page.goto(editorPath);
  const form = page.locator("[data-regenerate-form]");
  await expect(page.locator("#regenerate-title")).toHaveText("Aus korrigiertem Transkript neu erstellen");
  await expect(form.locator("[data-regenerate-scope] option").first()).toHaveText("Ganzer Brief");
  await expect(form.locator('[data-action="regenerate"]')).toHaveText("Aus korrigiertem Transkript neu erstellen");
  await regenerate(page, "all");
  const proposal = page.locator("[data-proposal]");
  await expect(proposal.getByRole("heading", { name: "Vorgeschlagene Änderungen" })).toBeVisible();
  await expect(proposal).toContainText("Neu erstellt aus dem korrigierten Transkript (ganzer Brief)");
  const firstDiff = diffOf(page, firstTitle);
  await expect(firstDiff).toHaveAttribute("data-change", "changed");
  await expect(firstDiff.locator("del").first()).toContainText("Sprecher");
  await expect(firstDiff.locator("ins").first()).toContainText("Ärztin/Arzt");
  await expect(diffOf(page, OTHER)).toHaveAttribute("data-change", "changed");
  await expect(diffOf(page, OTHER).locator("del").first()).toContainText("Paracetamol 500 mg");
  await proposal.locator('[data-action="reject"]').click();
  await expect(page).toHaveURL(editorPath);
  await expect(page.getByText("Vorschlag verworfen. Der Brief ist unverändert.")).toBeVisible();
  await expect(first).toHaveValue(QUOTED);
  await expect(section(page, OTHER)).toHaveValue(OWN);

  // Only the first section written again: the proposal changes that one alone.
  await regenerate(page, firstTitle);
  await expect(proposal).toContainText(`Neu erstellt aus dem korrigierten Transkript (Abschnitt „${firstTitle}“)`);
  await expect(proposal.locator('[data-change="changed"]')).toHaveCount(1);
  await expect(firstDiff).toHaveAttribute("data-change", "changed");
  await expect(firstDiff.locator("ins").first()).toContainText("Ärztin/Arzt");
  await expect(diffOf(page, OTHER)).toHaveAttribute("data-change", "unchanged");
  const proposalUrl = page.url();

  // Until the doctor accepts, the letter is as it was; the editor leads back to the open proposal.
  await page.goto(editorPath);
  await expect(first).toHaveValue(QUOTED);
  const ready = page.locator('[data-regeneration="ready"]');
  await expect(ready).toContainText("Die Neuerstellung aus dem korrigierten Transkript ist fertig.");
  await ready.getByRole("link", { name: "Vorschlag ansehen" }).click();
  await expect(page).toHaveURL(proposalUrl);

  // Accepted: the corrected wording is in the letter, and the doctor's own section is still theirs.
  await proposal.locator('[data-action="accept"]').click();
  await expect(page).toHaveURL(editorPath);
  await expect(page.getByText("Vorschlag übernommen und als Version 3 gespeichert.")).toBeVisible();
  await expect(first).toHaveValue(CORRECTED);
  await expect(section(page, OTHER)).toHaveValue(OWN);
  await expect(page.locator("[data-regeneration]")).toHaveCount(0);
});

test("regeneration, in English", async ({ page }, info) => {
  test.skip(info.project.name !== "js", "English runs with JavaScript on");
  expect(editorPath, "the letter made by the first test").not.toBe("");
  await signIn(page, account(info.project.name));
  await switchLanguage(page, "en");
  await page.goto(editorPath);
  const form = page.locator("[data-regenerate-form]");
  await expect(page.locator("#regenerate-title")).toHaveText("Regenerate from corrected transcript");
  await expect(form.getByLabel("Scope")).toBeVisible();
  await expect(form.locator("[data-regenerate-scope] option").first()).toHaveText("Whole letter");
  await regenerate(page, "all");
  const proposal = page.locator("[data-proposal]");
  await expect(proposal.getByRole("heading", { name: "Suggested changes" })).toBeVisible();
  await expect(proposal).toContainText("Regenerated from the corrected transcript (whole letter)");
  // The first section is already as the corrected transcript has it; the doctor's own would be lost.
  await expect(proposal.locator(`[data-change="changed"]`)).toHaveCount(1);
  await expect(diffOf(page, OTHER)).toHaveAttribute("data-change", "changed");
  await expect(diffOf(page, OTHER)).toContainText("changed");
  await proposal.locator('[data-action="reject"]').click();
  await expect(page.getByText("Suggestion rejected. The letter is unchanged.")).toBeVisible();
  await expect(page.locator("[data-letter-editor] textarea[data-section]").first()).toHaveValue(CORRECTED);
  await expect(section(page, OTHER)).toHaveValue(OWN);
  // The account's language back, for the test after this one.
  await switchLanguage(page, "de");
});

test("a regeneration that fails says why, and the letter stays as it was", async ({ page }, info) => {
  test.setTimeout(90_000);
  expect(editorPath, "the letter made by the first test").not.toBe("");
  await signIn(page, account(info.project.name));
  // A word of the transcript corrected to what the tests' model takes for no consultation.
  await page.goto(`${viewerPath}?review=1`);
  const review = page.locator("[data-review]");
  await review.getByLabel("Korrektur").fill(NOT_CLINICAL);
  await review.getByLabel("Begriff in mein Vokabular aufnehmen").uncheck();
  await review.getByRole("button", { name: "Korrektur speichern" }).click();
  await expect(page.getByText("Die Korrektur ist gespeichert.")).toBeVisible();

  await page.goto(editorPath);
  const form = page.locator("[data-regenerate-form]");
  await form.locator("[data-regenerate-scope]").selectOption({ index: 0 });
  await form.locator('[data-action="regenerate"]').click();
  await expect(page).toHaveURL(`${editorPath}?regeneration=1`);
  // The page refreshes itself while the letter is written again, and then says why it could not be.
  const failed = page.locator('[data-regeneration="failed"]');
  await expect(failed).toHaveText(
    "Die Neuerstellung aus dem korrigierten Transkript ist fehlgeschlagen: Diese Aufnahme enthält weder ein Patientengespräch noch ein ärztliches Diktat",
    { timeout: 30_000 },
  );
  await expect(failed).toHaveAttribute("role", "alert");
  await expect(page.locator("[data-proposal]")).toHaveCount(0);
  await expect(page.locator("[data-letter-editor]")).not.toHaveAttribute("data-letter-busy", "");
  await expect(page.locator("[data-letter-editor] textarea[data-section]").first()).toHaveValue(CORRECTED);
  await expect(section(page, OTHER)).toHaveValue(OWN);
  await expect(page.getByText(/· Version 3$/)).toBeVisible();
  await expect(form.locator('[data-action="regenerate"]')).toBeEnabled();
});
