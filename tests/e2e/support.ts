import fs from "node:fs";
import path from "node:path";
import { test as base, expect, type Page } from "@playwright/test";
import pg from "pg";
import { storageProblems } from "../support/browser-storage";

export const dataDir = path.resolve(`./data/e2e-${process.env.E2E_PORT ?? 3100}`);

/** Signs in through the development provider exactly as a user does (works with JS off). */
export async function signIn(page: Page, accountId = "anna-berger", startAt = "/") {
  await page.goto(startAt);
  await chooseAccountIfAsked(page, accountId);
}

/** The provider asks only when it has no session of its own (single sign-on otherwise). */
export async function chooseAccountIfAsked(page: Page, accountId: string) {
  const settled = (url: URL) => !/^\/(interaction|auth|login)/.test(url.pathname);
  await page.waitForURL((url) => url.pathname.startsWith("/interaction") || settled(url));
  if (new URL(page.url()).pathname.startsWith("/interaction")) {
    await page.locator(`button[name="accountId"][value="${accountId}"]`).click();
  }
  await page.waitForURL(settled);
}

/**
 * Direct access to the app's embedded database, for arranging time (no sleeping). Its socket is in a private folder
 * of its own, which the app names in DATA_DIR/pglite-socket-dir (app/models/db.server.ts, embeddedSocketDir).
 */
export async function withDatabase<T>(fn: (client: pg.Client) => Promise<T>) {
  const note = path.join(dataDir, "pglite-socket-dir");
  const socketDir = fs.existsSync(note) ? fs.readFileSync(note, "utf8").trim() : undefined;
  const client = new pg.Client(
    socketDir
      ? { host: socketDir, port: 5432, user: "postgres", database: "postgres" }
      : { connectionString: process.env.DATABASE_URL },
  );
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function expectWorkspace(page: Page, heading: RegExp | string) {
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(heading);
  await expect(page.locator("[data-topbar]")).toBeVisible();
}

/**
 * The tests' `test`: like Playwright's, and any console error or uncaught
 * exception in the page (a CSP violation, a hydration mismatch) fails the test.
 */
export const test = base.extend<{ consoleGuard: void; storageGuard: void; expectedConsoleErrors: RegExp[] }>({
  // Browser reports a test provokes on purpose (a network failure it stages), set with test.use().
  expectedConsoleErrors: [[], { option: true }],
  consoleGuard: [
    async ({ page, expectedConsoleErrors }, use) => {
      const problems: string[] = [];
      page.on("console", (message) => {
        // The browser's own report of an HTTP error status is expected where a test asks for one.
        const expected = [/status of (4|5)\d\d/, ...expectedConsoleErrors].some((re) => re.test(message.text()));
        if (message.type() === "error" && !expected) problems.push(message.text());
      });
      page.on("pageerror", (error) => problems.push(error.message));
      await use();
      expect(problems, "console errors in the page").toEqual([]);
    },
    { auto: true },
  ],
  // After every test, whatever it did: the browser's storage holds only what ALLOWED_STORAGE names.
  storageGuard: [
    async ({ context }, use) => {
      await use();
      const problems: string[] = [];
      for (const open of context.pages()) {
        if (open.isClosed() || !/^https?:/.test(open.url())) continue;
        const stored = await open
          .evaluate(() => ({
            local: Object.entries(localStorage),
            session: Object.entries(sessionStorage),
          }))
          .catch(() => null); // a page navigating away at the very end has nothing to read
        if (stored) problems.push(...storageProblems(stored).map((p) => `${new URL(open.url()).host}: ${p}`));
      }
      expect(problems, "browser storage").toEqual([]);
    },
    { auto: true },
  ],
});
export { expect };

/**
 * Uploads a WAV on the workspace, waits for its transcript and its letter (the tests' engines write both) and opens
 * the letter's editor; the editor's path. The letter specs start from here.
 */
export async function letterFromUpload(page: Page, wav: string, recordingName: string) {
  const upload = page.locator("[data-upload-form]");
  await upload.locator('input[name="audio"]').setInputFiles(wav);
  await upload.getByRole("button", { name: "Hochladen" }).click();
  const recording = page.locator("[data-recording]").filter({ hasText: recordingName });
  await expect(recording.locator("[data-status]")).toHaveAttribute("data-status", "completed", { timeout: 20_000 });
  await page.goto("/arztbriefe");
  const row = page.locator("[data-letter-row]").filter({ hasText: recordingName });
  await expect(async () => {
    await page.reload();
    await expect(row.locator("[data-letter-status]")).toHaveAttribute("data-letter-status", "completed", {
      timeout: 1_000,
    });
  }).toPass({ timeout: 20_000 });
  await row.locator('[data-action="view"]').click();
  await expect(page.locator("[data-letter-editor]")).toBeVisible();
  return new URL(page.url()).pathname;
}
