import { CHAT_SLOW_MARKER } from "../support/fake-llm-chat-names";
import { expect, signIn, test } from "./support";

// Issue 8 with JavaScript only (the no-js project ignores *live.spec.ts files, playwright.config.ts): the
// "thinking" state while an answer is being written, Send unavailable meanwhile (SPEC §5: no second request in
// flight), and voice input into the question through the live dictation client (the fake microphone plays
// tests/e2e/fixtures/consultation.wav to the tests' Speechmatics realtime server), the field disabled meanwhile.
test("thinks while the answer is written, and takes a dictated question", async ({ page }) => {
  test.setTimeout(90_000);
  await signIn(page, "lena-wagner", "/chat");
  await page.getByRole("button", { name: "Chat leeren" }).click();
  const field = page.getByLabel("Ihre Frage");
  const send = page.getByRole("button", { name: "Senden" });
  await expect(send).toBeDisabled();

  // The tests' model waits a few seconds before it answers a question with this marker.
  await field.fill(`Langsam bitte: ${CHAT_SLOW_MARKER}`);
  await send.click();
  const answer = page.locator('[data-chat-message][data-role="assistant"]').last();
  await expect(answer).toHaveAttribute("data-status", "pending");
  await expect(answer).toContainText("Denkt nach …");
  await expect(send).toBeDisabled();
  await expect(answer).toHaveAttribute("data-status", "done", { timeout: 20_000 });
  await expect(answer).toContainText(`Antwort auf: Langsam bitte: ${CHAT_SLOW_MARKER}`);

  // Voice input fills the question; the field is disabled while dictating.
  const voice = page.locator("[data-voice-input]");
  await expect(voice).toBeEnabled();
  await voice.click();
  await expect(voice).toHaveAttribute("data-state", "connected", { timeout: 20_000 });
  await expect(field).toBeDisabled();
  await expect(field).not.toHaveValue("", { timeout: 30_000 });
  await voice.click();
  await expect(voice).toHaveAttribute("data-state", "disconnected", { timeout: 20_000 });
  await expect(field).toBeEnabled();
  await expect(send).toBeEnabled();
  await send.click();
  await expect(page.locator('[data-chat-message][data-role="assistant"]').last()).toContainText("Antwort auf: ", {
    timeout: 20_000,
  });
});
