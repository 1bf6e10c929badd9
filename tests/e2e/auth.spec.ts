import { demoAccounts } from "../../app/services/dev-oidc/accounts";
import { chooseAccountIfAsked, expect, expectWorkspace, signIn, test, withDatabase } from "./support";

test.describe("sign-in round trip", () => {
  test("redirects to the provider, lists the demo accounts and shows the German workspace", async ({
    page,
    context,
  }) => {
    await page.goto("/transcriptions");
    await page.waitForURL(/\/interaction\//);
    for (const account of demoAccounts) await expect(page.getByText(account.email)).toBeVisible();
    await page.locator('button[name="accountId"][value="anna-berger"]').click();
    await page.waitForURL("**/transcriptions");
    await expectWorkspace(page, "Transkriptionen");
    await expect(page.locator("html")).toHaveAttribute("lang", "de");
    await expect(page.locator("[data-user-label]").first()).toHaveText("Dr. med. Anna Berger");
    await expect(page.locator("[data-empty]")).toHaveText("Noch keine Transkriptionen.");

    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === "skribent_sid");
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe("Lax");
    expect(session?.secure).toBe(false); // localhost only
    // Only the session id: no provider token reaches the browser.
    const names = cookies.filter((c) => c.domain.includes("localhost")).map((c) => c.name);
    expect(names.some((n) => n.startsWith("skribent_oauth"))).toBe(false);
    for (const cookie of cookies) expect(cookie.value).not.toMatch(/^eyJ/);
    expect(await page.content()).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\./);
  });

  test("rotates the session id at every sign-in and deletes the row at logout", async ({ page, context }) => {
    await signIn(page);
    const first = (await context.cookies()).find((c) => c.name === "skribent_sid")?.value;
    await context.clearCookies({ name: "skribent_sid" });
    await signIn(page);
    const second = (await context.cookies()).find((c) => c.name === "skribent_sid")?.value;
    expect(second).toBeTruthy();
    expect(second).not.toBe(first);

    const before = await withDatabase(
      async (db) => (await db.query("select count(*)::int as n from sessions")).rows[0].n,
    );
    // What the workspace keeps in this browser (a panel's state, an upload's resume key) …
    await page.evaluate(() => localStorage.setItem("skribent.audioPanel", "closed"));
    await page.getByRole("button", { name: "Abmelden" }).first().click();
    // The provider's own logout confirmation (RP-initiated logout), then back.
    await page.locator('button[name="logout"]').click();
    await page.waitForURL("**/login?signedOut=1");
    await expect(page.locator("[data-login-reason]")).toHaveText("Sie wurden abgemeldet.");
    // … is gone after the logout (Clear-Site-Data), for whoever uses this computer next.
    expect(await page.evaluate(() => Object.keys(localStorage))).toEqual([]);
    const after = await withDatabase(
      async (db) => (await db.query("select count(*)::int as n from sessions")).rows[0].n,
    );
    expect(after).toBe(before - 1);
    await page.goto("/");
    await page.waitForURL(/\/interaction\//);
  });

  test("an idle session ends after 30 minutes and the user is asked to sign in again", async ({ page }) => {
    await signIn(page);
    await expectWorkspace(page, "Audio");
    await withDatabase((db) => db.query("update sessions set last_seen_at = now() - interval '31 minutes'"));
    await page.goto("/arztbriefe");
    await page.waitForURL(/\/login\?redirectTo=%2Farztbriefe&expired=1/);
    await expect(page.locator("[data-login-reason]")).toContainText("Ihre Sitzung ist abgelaufen");
    await page.getByRole("link", { name: "Anmelden" }).click();
    await chooseAccountIfAsked(page, "anna-berger");
    await page.waitForURL("**/arztbriefe");
    await expectWorkspace(page, "Arztbriefe");
  });

  test("a session ends 12 hours after sign-in even when active", async ({ page }) => {
    await signIn(page);
    await withDatabase((db) => db.query("update sessions set expires_at = now() - interval '1 second'"));
    await page.goto("/");
    await page.waitForURL(/expired=1/);
  });

  test("an unverified e-mail shows the verification screen with Return to Login", async ({ page }) => {
    await page.goto("/");
    await page.waitForURL(/\/interaction\//);
    await page.locator('button[name="accountId"][value="lena-vogel"]').click();
    await page.waitForURL("**/verify-email");
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Bitte bestätigen Sie Ihre E-Mail-Adresse");
    await page.getByRole("link", { name: "Zurück zur Anmeldung" }).click();
    await page.waitForURL("**/login?signedOut=1");
  });
});
