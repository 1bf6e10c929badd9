import { describe, expect, it } from "vitest";
import { loader as csvLoader } from "~/routes/$adminPath_.usage[.]csv";
import { loader as healthLoader } from "~/routes/api.health";
import { loader as usageLoader } from "~/routes/api.usage-dashboard";
import { getDb } from "~/models/db.server";
import { settleMetering } from "~/services/admin/usage.server";
import { adminPage, sessionFor } from "../support/admin-pages";
import { callRoute, request, setupTestApp } from "../setup/app";

// SPEC §2/§6 "Admin dashboard": only a verified address in exactly the operator's domain (skribent.example in the
// tests) sees it — decided on the server in every loader and call. Everyone else gets SPEC §8's 'Access denied -
// unauthorized domain' with 403 and nothing else, on every door: the pages, the CSV and both JSON calls.
setupTestApp();

const DENIED_DE = "Zugriff verweigert - nicht autorisierte Domain";
const DENIED_EN = "Access denied - unauthorized domain";

/** Every admin door, called with a session cookie: its status and what it said. */
async function doors(cookie: string) {
  const overview = await adminPage("/betrieb", cookie);
  const audit = await adminPage("/betrieb/audit", cookie);
  const accounts = await adminPage("/betrieb/accounts", cookie);
  const sessions = await adminPage("/betrieb/sessions", cookie);
  const csv = await callRoute(csvLoader, request("/betrieb/usage.csv", { cookie }), { adminPath: "betrieb" });
  const usage = await callRoute(usageLoader, request("/api/usage-dashboard", { cookie }));
  const health = await callRoute(healthLoader, request("/api/health", { cookie }));
  return {
    overview,
    audit,
    accounts,
    sessions,
    csv: { status: csv.status, text: await csv.text() },
    usage: { status: usage.status, body: await usage.json() },
    health: { status: health.status, body: await health.json() },
  };
}

describe("the operator's admins", () => {
  it.each([
    ["admin@skribent.example"],
    // Domain names are case-insensitive: the same domain in capitals is the operator's.
    ["Ops.Lead@SKRIBENT.EXAMPLE"],
  ])("%s sees the tiles, the usage table, the audit trail, the CSV and both calls", async (email) => {
    const { cookie } = await sessionFor(email);
    const seen = await doors(cookie);
    expect(seen.overview.status).toBe(200);
    expect(seen.overview.html).toContain('data-health-tile="database"');
    expect(seen.overview.html).toContain("Nutzung je Benutzer");
    expect(seen.overview.html).not.toContain(DENIED_DE);
    expect(seen.audit.status).toBe(200);
    expect(seen.audit.html).toContain("Audit-Protokoll");
    expect(seen.accounts.status).toBe(200);
    expect(seen.accounts.html).toContain("data-admin-delete");
    expect(seen.sessions.status).toBe(200);
    expect(seen.sessions.html).toContain('data-admin-sessions="all"');
    expect(seen.csv.status).toBe(200);
    expect(seen.csv.text).toContain("Endpunkt");
    expect(seen.usage.status).toBe(200);
    expect(Object.keys(seen.usage.body).sort()).toEqual(["period", "users"]);
    expect(seen.health.status).toBe(200);
    expect(seen.health.body.service_tests.database.status).toBe("healthy");
  });
});

describe("everyone else", () => {
  it.each([
    ["a clinician", "anna.berger@praxis-berger.example", true],
    ["a look-alike with the operator's domain as a prefix", "admin@skribent.example.evil.com", true],
    ["a look-alike with the operator's domain inside a longer name", "admin@evilskribent.example", true],
    ["a subdomain of the operator's domain", "user@sub.skribent.example", true],
    ["a second @ hiding another domain", "admin@skribent.example@evil.com", true],
    ["the operator's domain, not verified", "admin@skribent.example", false],
  ])("%s (%s) is refused with 403 on every door, and learns nothing", async (_, email, verified) => {
    const { cookie, user } = await sessionFor(email, { verified });
    const seen = await doors(cookie);
    for (const page of [seen.overview, seen.audit, seen.accounts, seen.sessions]) {
      expect(page.status).toBe(403);
      expect(page.html).toContain(DENIED_DE);
      expect(page.html).not.toContain("data-health-tile");
      expect(page.html).not.toContain("data-usage");
      expect(page.html).not.toContain("<table");
      expect(page.html).not.toContain("data-admin-delete");
      expect(page.html).not.toContain("data-admin-sessions");
    }
    expect(seen.csv).toEqual({ status: 403, text: DENIED_DE });
    expect(seen.usage).toEqual({ status: 403, body: { detail: DENIED_EN } });
    expect(seen.health).toEqual({ status: 403, body: { detail: DENIED_EN } });
    // The refusals are in the audit trail (the layout leaves it to the page, so one row per page).
    const refused = await getDb()
      .selectFrom("audit_events")
      .where("user_id", "=", user.id)
      .where("outcome", "=", "denied")
      .select("action")
      .execute();
    expect(refused.map((r) => r.action).sort()).toEqual(
      [
        "admin.accounts",
        "admin.audit",
        "admin.dashboard",
        "admin.health",
        "admin.sessions",
        "admin.usage",
        "admin.usage_csv",
      ].sort(),
    );
  });

  it("reads the refusal in English when English is chosen", async () => {
    const { cookie } = await sessionFor("jonas.keller@klinikum-nord.example");
    const page = await adminPage("/betrieb", cookie, "en");
    expect(page.status).toBe(403);
    expect(page.html).toContain(DENIED_EN);
  });
});

describe("the hidden path", () => {
  it("is only ADMIN_PATH: any other address is the usual 404, even for an admin", async () => {
    const { cookie } = await sessionFor("admin@skribent.example");
    for (const path of ["/betriebx", "/Betrieb", "/admin", "/betrieb-x/audit"])
      expect((await adminPage(path, cookie)).status, path).toBe(404);
    const csv = await callRoute(csvLoader, request("/admin/usage.csv", { cookie }), { adminPath: "admin" });
    expect(csv.status).toBe(404);
    // Under /api the answer is the API's JSON 404, as for any unknown API path.
    const api = await callRoute(csvLoader, request("/api/usage.csv", { cookie }), { adminPath: "api" });
    expect(api.status).toBe(404);
    expect(await api.json()).toEqual({ detail: "Not found" });
  });

  it("asks for sign-in first, and comes back to it", async () => {
    const page = await adminPage("/betrieb", null);
    expect(page.status).toBe(302);
    expect(page.location).toBe("/login?redirectTo=%2Fbetrieb");
    const usage = await callRoute(usageLoader, request("/api/usage-dashboard"));
    expect(usage.status).toBe(401);
    await settleMetering();
  });
});
