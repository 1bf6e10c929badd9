import { gzipSync } from "node:zlib";
import { expect, signIn, test } from "./support";

// ARCHITECTURE.md: pages without an island ship at most 5 KiB (gzip) of
// progressive-enhancement script. This prints what each route ships.
const BUDGET = 5 * 1024;
const publicPages = ["/login?signedOut=1", "/verify-email"];
const workspacePages = ["/", "/transcriptions", "/arztbriefe", "/chat", "/settings", "/settings/repository", "/help"];

test("JavaScript shipped per route stays within the budget", async ({ page }) => {
  const report: Array<{ route: string; scripts: number; gzipBytes: number }> = [];
  for (const route of [...publicPages, "(sign-in)", ...workspacePages]) {
    if (route === "(sign-in)") {
      await signIn(page);
      continue;
    }
    const scripts: Promise<number>[] = [];
    const listener = (response: import("@playwright/test").Response) => {
      if (response.request().resourceType() === "script")
        scripts.push(response.body().then((body) => gzipSync(body).length));
    };
    page.on("response", listener);
    await page.goto(route);
    await page.waitForLoadState("load");
    page.off("response", listener);
    const sizes = await Promise.all(scripts);
    report.push({ route, scripts: sizes.length, gzipBytes: sizes.reduce((a, b) => a + b, 0) });
  }
  console.log("\nJavaScript per route (gzip):");
  for (const row of report)
    console.log(
      `  ${row.route.padEnd(22)} ${String(row.scripts).padStart(2)} file(s) ${String(row.gzipBytes).padStart(6)} B`,
    );
  for (const row of report) expect(row.gzipBytes, row.route).toBeLessThanOrEqual(BUDGET);
});
