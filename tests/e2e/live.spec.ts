import type { Page } from "@playwright/test";
import { FLAG_PORT, RT_PORT } from "../../playwright.config";
import { expect, signIn, test } from "./support";

// Issue 7 end to end in Chromium: the fake microphone plays tests/e2e/fixtures/consultation.wav (two speakers,
// espeak-ng), the app relays it to the tests' protocol-faithful Speechmatics realtime server, which gives each
// stretch of speech the next line of its script (tests/support/fake-speechmatics-rt-recognition.ts). What a
// clinician sees: the words appear while they speak, stopping pauses the session, it can be continued, saved
// as a recording with a transcript (speakers, highlights) and audio, and a letter is written — over a
// WebSocket, and over plain HTTP when a proxy blocks WebSockets; a reload mid-recording loses nothing.

const recorder = (page: Page) => page.locator("[data-live-recorder]");
const segments = (page: Page) => page.locator("[data-live-transcript] [data-speaker]");

async function openRecorder(page: Page, account: string) {
  await signIn(page, account, "/?tab=record");
  await expect(recorder(page)).toHaveAttribute("data-state", "ready", { timeout: 20_000 });
}

async function recordUntil(page: Page, count: number) {
  await page.locator('[data-live-action="start"]').click();
  await expect(recorder(page)).toHaveAttribute("data-state", "listening", { timeout: 20_000 });
  await expect(async () => expect(await segments(page).count()).toBeGreaterThanOrEqual(count)).toPass({
    timeout: 30_000,
  });
}

async function stop(page: Page) {
  await page.locator('[data-live-action="stop"]').click();
  await expect(recorder(page)).toHaveAttribute("data-state", "paused", { timeout: 20_000 });
  await expect(page.locator("[data-live-paused]")).toBeVisible();
}

// Live audio needs JavaScript: the no-JS project ignores this file (playwright.config.ts); its view without
// JavaScript is tested in live-nojs.spec.ts.
test.describe("live recording", () => {
  test("record → pause → continue → save: transcript with speakers, audio, and a letter", async ({ page }) => {
    test.setTimeout(150_000);
    await openRecorder(page, "max-hoffmann");
    // Both speakers of the fixture: the doctor's question, then the patient's answer.
    await recordUntil(page, 2);
    await expect(recorder(page)).toHaveAttribute("data-transport", "websocket");
    await expect(page.locator("[data-live-transcript]")).toContainText("Kopfschmerzen", { timeout: 30_000 });
    await expect(page.locator("[data-live-transcript]")).toContainText("Guten Tag", { timeout: 30_000 });
    await stop(page);

    // Continue the same session: more speech is added to the same transcript.
    const before = await segments(page).count();
    await page.locator('[data-live-action="continue"]').click();
    await expect(recorder(page)).toHaveAttribute("data-state", "listening", { timeout: 20_000 });
    await expect(async () => expect(await segments(page).count()).toBeGreaterThan(before)).toPass({ timeout: 30_000 });
    await stop(page);

    await page.locator('input[name="transcription_mode"][value="transcript_and_letter"]').check();
    await page.locator('[data-live-action="save"]').click();
    await page.waitForURL(/\/\?saved=/, { timeout: 30_000 });

    // The new recording: completed, its transcript has both speakers, its audio plays.
    const row = page.locator("[data-recording]").first();
    await expect(row.locator("[data-status]")).toHaveAttribute("data-status", "completed");
    // Its audio plays in the player island, with a duration.
    await row.getByRole("link", { name: "Abspielen" }).click();
    const island = page.locator("[data-player-island]");
    await expect(island.locator("[data-total-time]")).not.toHaveText("0:00", { timeout: 20_000 });
    const src = await island.locator("audio").getAttribute("src");
    const audio = await page.request.get(src!);
    expect(audio.headers()["content-type"]).toMatch(/^audio\//);
    await page.getByRole("dialog").getByRole("link", { name: "Schließen" }).click();

    await page.goto("/transcriptions");
    await page.getByRole("link", { name: "Transkript ansehen" }).first().click();
    const viewer = page.locator("[data-transcript-viewer]");
    await expect(viewer).toContainText("Kopfschmerzen");
    await expect(viewer.locator("[data-speaker-card]")).toHaveCount(2);

    // Transcript plus Arztbrief: the server writes the letter.
    await page.goto("/arztbriefe");
    await expect(async () => {
      await page.reload();
      await expect(page.locator("[data-letter-status]").first()).toHaveAttribute("data-letter-status", "completed", {
        timeout: 1_000,
      });
    }).toPass({ timeout: 30_000 });

    // Dictation in the refinement panel fills the instruction.
    await page.locator('[data-letter-row] [data-action="view"]').first().click();
    const voice = page.locator("[data-voice-input]");
    await expect(voice).toBeEnabled();
    await voice.click();
    await expect(voice).toHaveAttribute("data-state", "connected", { timeout: 20_000 });
    await expect(page.locator("[data-instruction]")).toBeDisabled();
    await expect(page.locator("[data-instruction]")).not.toHaveValue("", { timeout: 30_000 });
    await voice.click();
    await expect(voice).toHaveAttribute("data-state", "disconnected", { timeout: 20_000 });
    await expect(page.locator("[data-instruction]")).toBeEnabled();
  });

  test("falls back to HTTP by itself when a proxy swallows the WebSocket", async ({ page }) => {
    test.setTimeout(90_000);
    // The socket "opens" but nothing ever answers, as behind a proxy that accepts and then stalls upgrades.
    await page.routeWebSocket(/\/live\/ws/, () => {});
    await openRecorder(page, "sara-yilmaz");
    await recordUntil(page, 1);
    await expect(recorder(page)).toHaveAttribute("data-transport", "http");
    await stop(page);
    // Discarding asks first: one click only changes the button, a second one discards.
    const discard = page.locator('[data-live-action="discard"]');
    await discard.click();
    await expect(discard).toHaveText("Wirklich verwerfen? Das Aufgenommene geht verloren.");
    await expect(recorder(page)).toHaveAttribute("data-state", "paused");
    await discard.click();
    await expect(recorder(page)).toHaveAttribute("data-state", "ready");
  });

  test("a reload mid-recording loses nothing: the session is offered again and saves", async ({ page }) => {
    test.setTimeout(90_000);
    await openRecorder(page, "sara-yilmaz");
    await recordUntil(page, 1);
    const spoken = await segments(page).first().textContent();
    await page.reload();
    await expect(recorder(page)).toHaveAttribute("data-state", "paused", { timeout: 20_000 });
    await expect(page.locator("[data-live-transcript]")).toContainText(spoken!.trim());
    await page.locator('input[name="transcription_mode"][value="transcript"]').check();
    await page.locator('[data-live-action="save"]').click();
    await page.waitForURL(/\/\?saved=/, { timeout: 30_000 });
    await expect(page.locator("[data-recording]").first().locator("[data-status]")).toHaveAttribute(
      "data-status",
      "completed",
    );
  });

  test("a denied microphone shows the spec's message", async ({ page }) => {
    await page.addInitScript(() => {
      navigator.mediaDevices.getUserMedia = () => Promise.reject(new DOMException("denied", "NotAllowedError"));
    });
    await openRecorder(page, "ops-admin");
    await page.locator('[data-live-action="start"]').click();
    await expect(recorder(page)).toHaveAttribute("data-state", "error");
    await expect(page.locator("[data-live-error]")).toContainText(
      "Der Zugriff auf das Mikrofon wurde verweigert. Bitte erlauben Sie den Mikrofonzugriff und versuchen Sie es erneut.",
    );
  });
});

// The second server runs SPEECH_LIVE_MODE=direct (playwright.config.ts): the page asks Skribent for a temporary
// key and opens the realtime server's socket itself, keeps what is recognised, and saves it through
// POST /api/save-realtime-transcript with its own copy of the audio.
test.describe("live recording in direct mode", () => {
  test.use({ baseURL: `http://localhost:${FLAG_PORT}` });

  test("the browser talks to the provider: record → pause → continue → save, with audio", async ({ page }) => {
    test.setTimeout(150_000);
    const sockets: string[] = [];
    page.on("websocket", (socket) => sockets.push(socket.url()));
    await openRecorder(page, "max-hoffmann");
    await recordUntil(page, 2);
    await expect(recorder(page)).toHaveAttribute("data-transport", "direct");
    // The provider's socket, with a temporary key in its URL; Skribent's own live door is not used.
    expect(sockets.some((url) => url.startsWith(`ws://127.0.0.1:${RT_PORT}/v2?jwt=`))).toBe(true);
    expect(sockets.some((url) => url.includes("/live/ws"))).toBe(false);
    await expect(page.locator("[data-live-transcript]")).toContainText("Kopfschmerzen", { timeout: 30_000 });
    await stop(page);

    const before = await segments(page).count();
    await page.locator('[data-live-action="continue"]').click();
    await expect(recorder(page)).toHaveAttribute("data-state", "listening", { timeout: 20_000 });
    await expect(async () => expect(await segments(page).count()).toBeGreaterThan(before)).toPass({ timeout: 30_000 });
    await stop(page);

    await page.locator('input[name="transcription_mode"][value="transcript"]').check();
    await page.locator('[data-live-action="save"]').click();
    await page.waitForURL(/\/\?saved=/, { timeout: 60_000 });
    const row = page.locator("[data-recording]").first();
    await expect(row.locator("[data-status]")).toHaveAttribute("data-status", "completed");
    // Two runs: no single compressed copy, so the page sent the audio it heard as WAV; it plays.
    await row.getByRole("link", { name: "Abspielen" }).click();
    const island = page.locator("[data-player-island]");
    await expect(island.locator("[data-total-time]")).not.toHaveText("0:00", { timeout: 20_000 });
    await page.getByRole("dialog").getByRole("link", { name: "Schließen" }).click();

    await page.goto("/transcriptions");
    await page.getByRole("link", { name: "Transkript ansehen" }).first().click();
    const viewer = page.locator("[data-transcript-viewer]");
    await expect(viewer).toContainText("Kopfschmerzen");
    await expect(viewer.locator("[data-speaker-card]")).toHaveCount(2);
  });
});
