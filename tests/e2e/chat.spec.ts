import type { Page } from "@playwright/test";
import { CHAT_FAILURE_MARKER } from "../support/fake-llm-chat-names";
import { GERMAN_LINES, germanTextPdf, htmlNamedPdf } from "../support/pdf-fixtures";
import { expect, signIn, test } from "./support";

// Issue 8 end to end, JavaScript on and off (both projects run this file, one after the other, as the same
// demo account; each test starts by clearing the chat). The app answers with the tests' OpenAI-compatible chat
// server (tests/support/fake-llm-chat.ts): "Antwort auf: <question>", plus " | PDF <name>: <first line>" for each
// PDF whose text reached the model. With JavaScript the answer streams in place; without, the form post waits
// for it and the page shows the conversation.
const ACCOUNT = "lena-wagner";

const messages = (page: Page) => page.locator("[data-chat-messages] [data-chat-message]");
const lastAnswer = (page: Page) => page.locator('[data-chat-message][data-role="assistant"]').last();
const answerText = (page: Page) => lastAnswer(page).locator("[data-chat-text]");

async function openCleared(page: Page) {
  await signIn(page, ACCOUNT, "/chat");
  await page.getByRole("button", { name: "Chat leeren" }).click();
  await expect(page.locator("[data-chat-empty]")).toHaveText(
    "Noch keine Nachrichten. Stellen Sie eine Frage, um zu beginnen.",
  );
}

async function ask(page: Page, question: string) {
  await page.getByLabel("Ihre Frage").fill(question);
  await page.getByRole("button", { name: "Senden" }).click();
}

async function pdfFile() {
  return { name: "Befund.pdf", mimeType: "application/pdf", buffer: Buffer.from(await germanTextPdf()) };
}

test("asks with a PDF as context, asks again, clears, and asks without one", async ({ page, javaScriptEnabled }) => {
  test.setTimeout(60_000);
  await openCleared(page);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Chat");
  // SPEC §2: the message area is 320 px high, at most 70vh, and scrolls.
  const box = await page.locator("[data-chat-messages]").boundingBox();
  expect(Math.round(box!.height)).toBe(320);
  await expect(page.locator("[data-voice-input]")).toBeVisible({ visible: javaScriptEnabled });

  const pdfArea = page.locator("[data-chat-pdf]");
  await expect(pdfArea).toBeVisible();
  await pdfArea.locator('input[name="pdf"]').setInputFiles(await pdfFile());
  await ask(page, "Fasse den Befund zusammen.");
  await expect(answerText(page)).toHaveText(
    `Antwort auf: Fasse den Befund zusammen. | PDF Befund.pdf: ${GERMAN_LINES[0]}`,
    { timeout: 20_000 },
  );
  await expect(lastAnswer(page)).toHaveAttribute("data-status", "done");
  // With JavaScript the answer streamed into the page; without, the post came back to the conversation's end.
  await expect(page).toHaveURL(javaScriptEnabled ? /\/chat$/ : /\/chat#latest$/);
  // After the first answer: the attached file is named, and no more PDFs are taken.
  await expect(page.locator("[data-chat-attached]")).toContainText("Befund.pdf");
  await expect(pdfArea).toHaveCount(0);

  // The context stays with the conversation.
  await ask(page, "Und die Größe?");
  await expect(answerText(page)).toHaveText(`Antwort auf: Und die Größe? | PDF Befund.pdf: ${GERMAN_LINES[0]}`, {
    timeout: 20_000,
  });
  await expect(messages(page)).toHaveCount(4);

  // Clear chat (SPEC §4): messages, context and input go; the PDF area is back.
  await page.getByLabel("Ihre Frage").fill("nicht gesendet");
  await page.getByRole("button", { name: "Chat leeren" }).click();
  await expect(messages(page)).toHaveCount(0);
  await expect(page.locator("[data-chat-attached]")).toHaveCount(0);
  await expect(page.getByLabel("Ihre Frage")).toHaveValue("");
  await expect(pdfArea).toBeVisible();

  await ask(page, "Was bedeutet NYHA II?");
  await expect(answerText(page)).toHaveText("Antwort auf: Was bedeutet NYHA II?", { timeout: 20_000 });
});

test("refuses a file that is not a PDF, and keeps the question", async ({ page }) => {
  await openCleared(page);
  const html = htmlNamedPdf();
  await page
    .locator('[data-chat-pdf] input[name="pdf"]')
    .setInputFiles({ name: html.name, mimeType: "application/pdf", buffer: Buffer.from(html.data) });
  await ask(page, "Was steht im Befund?");
  await expect(page.locator("[data-chat-error]")).toHaveText(
    "„befund.pdf“ ist keine PDF-Datei. Es werden nur PDF-Dateien angenommen.",
  );
  await expect(messages(page)).toHaveCount(0);
  await expect(page.getByLabel("Ihre Frage")).toHaveValue("Was steht im Befund?");
});

test("shows the apology when the model fails", async ({ page }) => {
  test.setTimeout(60_000);
  await openCleared(page);
  await ask(page, `Bitte ${CHAT_FAILURE_MARKER}`);
  await expect(lastAnswer(page)).toHaveAttribute("data-status", "failed", { timeout: 30_000 });
  await expect(answerText(page)).toHaveText(
    "Entschuldigung, es ist ein Fehler aufgetreten. Bitte versuchen Sie es erneut.",
  );
});
