import fs from "node:fs";
import { expect, expectWorkspace, signIn, test } from "./support";

// The admin dashboard at the hidden path (ADMIN_PATH, default /betrieb; ADR 0014), with JavaScript on and off
// (the page ships no script of its own: plain GET forms and links). The operator's demo account sees the health
// tiles, the usage table with its CSV and the audit trail; a clinician gets SPEC §8's denial with 403. Nothing
// here changes what other specs rely on: reading adds only usage and audit rows.

test("the operator's admin sees health tiles, usage per user with its CSV, and the audit trail", async ({ page }) => {
  await signIn(page, "ops-admin", "/betrieb");
  await expectWorkspace(page, "Betrieb");
  // A call of the admin's own, so today's table has a row to show.
  expect((await page.request.get("/api/files")).status()).toBe(200);

  await page.goto("/betrieb?period=today");
  const tiles = page.locator("[data-health-tile]");
  await expect(tiles).toHaveCount(9);
  // This app writes and transcribes through the (fake) vendors: no local model is needed, and the tile says so.
  await expect(page.locator('[data-health-tile="models"]')).toHaveAttribute("data-status", "healthy");
  await expect(page.locator('[data-health-tile="models"]')).toContainText("Keine lokalen Modelle nötig");
  await expect(page.locator('[data-health-tile="database"]')).toHaveAttribute("data-status", "healthy");
  await expect(page.locator('[data-health-tile="storage"]')).toHaveAttribute("data-status", "healthy");
  const row = page.getByRole("row").filter({ hasText: "admin@skribent.example" });
  await expect(row).toHaveCount(1);
  await expect(row.locator('[data-usage-endpoint="files"]')).toContainText(/\d+ Aufrufe?/);
  await expect(row.locator("[data-usage-total]")).toContainText("$");

  const download = page.waitForEvent("download");
  await page.locator("[data-usage-csv]").click();
  const csv = fs.readFileSync((await (await download).path())!, "utf8");
  expect(csv.replace(/^\uFEFF/, "").split("\r\n")[0]).toBe("Name,E-Mail,Konto,Endpunkt,Aufrufe,Kosten (USD)");
  expect(csv).toMatch(/admin@skribent\.example,Persönlich,files,\d+,0\.0000/);

  // The period filter is a GET form: a custom period without usage says so.
  // (A label that wraps its control also names it by the control's value — "Zeitraum Heute" — so by field name.)
  const filter = page.locator("[data-period-filter]");
  await filter.locator('select[name="period"]').selectOption("custom");
  await filter.locator('input[name="from"]').fill("2001-01-01");
  await filter.locator('input[name="to"]').fill("2001-01-31");
  await page.getByRole("button", { name: "Anzeigen" }).click();
  await expect(page).toHaveURL(/period=custom&from=2001-01-01&to=2001-01-31/);
  await expect(page.locator("[data-empty]")).toHaveText("Keine Nutzungsdaten vorhanden");

  await page.getByRole("link", { name: "Audit-Protokoll" }).click();
  await expect(page.getByRole("heading", { level: 2, name: "Audit-Protokoll" })).toBeVisible();
  await page.getByLabel("Benutzer (Teil der E-Mail-Adresse)", { exact: true }).fill("admin@skribent");
  await page.getByRole("button", { name: "Anzeigen" }).click();
  await expect(page).toHaveURL(/user=admin%40skribent/);
  await expect(page.locator("[data-audit-action]").filter({ hasText: "admin.dashboard" }).first()).toBeVisible();
});

test("the workspace never links to the dashboard", async ({ page }) => {
  await signIn(page, "ops-admin", "/");
  await expectWorkspace(page, "Audio");
  await expect(page.locator('a[href^="/betrieb"]')).toHaveCount(0);
  expect(await page.content()).not.toContain("/betrieb");
});

test("a clinician gets 'Access denied - unauthorized domain' with 403, and nothing of the dashboard", async ({
  page,
}) => {
  await signIn(page, "jonas-keller", "/");
  const response = await page.goto("/betrieb");
  expect(response?.status()).toBe(403);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Zugriff verweigert - nicht autorisierte Domain");
  await expect(page.locator("[data-health-tile]")).toHaveCount(0);
  await expect(page.locator("table")).toHaveCount(0);
  expect((await page.goto("/betrieb/audit"))?.status()).toBe(403);
  await expect(page.locator("[data-admin-denied]")).toBeVisible();

  const csv = await page.request.get("/betrieb/usage.csv");
  expect(csv.status()).toBe(403);
  const api = await page.request.get("/api/usage-dashboard");
  expect(api.status()).toBe(403);
  expect(await api.json()).toEqual({ detail: "Access denied - unauthorized domain" });

  // In English too.
  await page.locator("[data-topbar] button[value='en']").first().click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Access denied - unauthorized domain");
});
