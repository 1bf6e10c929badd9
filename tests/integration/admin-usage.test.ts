import { sql } from "kysely";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { upsertUserByIdentity } from "~/models/user.server";
import { loader as csvLoader } from "~/routes/$adminPath_.usage[.]csv";
import { action as settingsAction } from "~/routes/_app.settings/route";
import { loader as arztbriefeLoader } from "~/routes/api.arztbriefe";
import { loader as filesLoader } from "~/routes/api.files";
import { action as promptsAction, loader as promptsLoader } from "~/routes/api.prompts";
import { action as ragAction } from "~/routes/api.structure.user_.rag-permission";
import { loader as usageLoader } from "~/routes/api.usage-dashboard";
import { getConfig, setConfig } from "~/services/config/config.server";
import { getDb } from "~/models/db.server";
import { meterLiveAudio } from "~/services/live/live-usage.server";
import {
  recordTokens,
  recordUsage,
  settleMetering,
  usageByUser,
  type UsageDashboardUser,
} from "~/services/admin/usage.server";
import { adminPage, sessionFor } from "../support/admin-pages";
import { APP_URL, callRoute, request, setupTestApp } from "../setup/app";

// Usage metering (issue 8): one "call" row per JSON call and per screen action that does a SPEC §7 call, engine
// rows (tokens, audio seconds) that add cost but are no calls. A scripted sequence must come out exactly on the
// dashboard, its JSON call and its CSV — and metering that fails never fails the request it meters.
const app = setupTestApp();

const ANNA = "anna.berger@praxis-berger.example";
const JONAS = "jonas.keller@klinikum-nord.example";
const SOLO = "solo@praxis-solo.example";
const sessions: Record<string, { id: string; cookie: string }> = {};

beforeAll(async () => {
  // Prices per unit (USD): input tokens 0.0005, output tokens 0.0015, audio 0.0004 per second (live: 0.0005).
  setConfig({
    ...app.config,
    prices: {
      speechPerMinuteUsd: 0.024,
      speechLivePerMinuteUsd: 0.03,
      llmInputPer1kTokensUsd: 0.5,
      llmOutputPer1kTokensUsd: 1.5,
    },
    organisations: { emailDomains: ["klinikum-nord.example"], claim: "org_account" },
  });
  for (const [email, name] of [
    [ANNA, '=HYPERLINK("http://evil.example","Anna")'],
    [JONAS, "Keller, Jonas"],
    ["admin@skribent.example", "Betrieb"],
  ]) {
    const { user, cookie } = await sessionFor(email, { name });
    sessions[email] = { id: user.id, cookie };
  }
});

const get = (route: Parameters<typeof callRoute>[0], path: string, who: string) =>
  callRoute(route, request(path, { cookie: sessions[who].cookie }));

function post(route: Parameters<typeof callRoute>[0], path: string, who: string, body: Record<string, unknown>) {
  const form = path.startsWith("/api/") ? null : new URLSearchParams(body as Record<string, string>);
  return callRoute(
    route,
    request(path, {
      method: "POST",
      cookie: sessions[who].cookie,
      headers: {
        "Content-Type": form ? "application/x-www-form-urlencoded" : "application/json",
        Origin: APP_URL,
        "Sec-Fetch-Site": "same-origin",
      },
      body: form ? form.toString() : JSON.stringify(body),
    }),
  );
}

async function dashboard(query = "") {
  await settleMetering();
  const response = await get(usageLoader, `/api/usage-dashboard${query}`, "admin@skribent.example");
  const body = (await response.json()) as { users: UsageDashboardUser[] };
  return Object.fromEntries(body.users.map((u) => [u.email, u]));
}

describe("a scripted sequence of calls and engine work", () => {
  it("comes out exactly: calls per endpoint from call rows, costs from every row", async () => {
    expect((await get(filesLoader, "/api/files", ANNA)).status).toBe(200);
    expect((await get(filesLoader, "/api/files", ANNA)).status).toBe(200);
    expect((await post(promptsAction, "/api/prompts", ANNA, { title: "Kurz", prompt_text: "Kürzer" })).status).toBe(
      201,
    );
    expect((await get(promptsLoader, "/api/prompts", ANNA)).status).toBe(200);
    // The consent once on the Settings screen (a form post) and once through the API: the same call, twice.
    const screen = await post(settingsAction, "/settings", ANNA, { intent: "rag", ragAgreed: "true" });
    expect(screen.status).toBe(302);
    expect((await post(ragAction, "/api/structure/user/rag-permission", ANNA, { rag_agreed: false })).status).toBe(200);
    // Engine work the server did by itself: cost without a call.
    await recordTokens(sessions[ANNA].id, "medical-letter-v2", { promptTokens: 1200, completionTokens: 300 }, false);
    await recordUsage({
      userId: sessions[ANNA].id,
      endpoint: "transcribe_v2",
      units: 90,
      unit: "audio_second",
      unitPriceUsd: getConfig().prices.speechPerMinuteUsd / 60, // as transcription.server.ts records it
    });
    // A live recording's minute at the realtime price, as the relay records it when its run ends.
    meterLiveAudio({ userId: sessions[ANNA].id, seconds: 60, engine: "speechmatics" });
    expect((await get(arztbriefeLoader, "/api/arztbriefe", JONAS)).status).toBe(200);
    await recordTokens(sessions[JONAS].id, "refine-arztbrief-bulk", { promptTokens: 100, completionTokens: 50 }, false);
    // A local engine costs nothing, but its tokens are still recorded.
    await recordTokens(sessions[JONAS].id, "refine-arztbrief-bulk", { promptTokens: 999, completionTokens: 99 }, true);

    const users = await dashboard();
    expect(users[ANNA].endpoints).toEqual({
      files: 2,
      prompts: 2,
      "structure/user/rag-permission": 2,
      "medical-letter-v2": 0,
      transcribe_v2: 0,
      "speechmatics-jwt": 0,
    });
    expect(Object.keys(users[ANNA].costs).sort()).toEqual(
      [
        "files",
        "prompts",
        "structure/user/rag-permission",
        "medical-letter-v2",
        "transcribe_v2",
        "speechmatics-jwt",
        "total",
      ].sort(),
    );
    expect(users[ANNA].costs["medical-letter-v2"]).toBeCloseTo(1.05, 6); // 1200 × 0.0005 + 300 × 0.0015
    expect(users[ANNA].costs.transcribe_v2).toBeCloseTo(0.036, 6); // 90 s × 0.0004
    expect(users[ANNA].costs["speechmatics-jwt"]).toBeCloseTo(0.03, 6); // 60 s × 0.0005
    expect(users[ANNA].costs.files).toBe(0);
    expect(users[ANNA].costs.total).toBeCloseTo(1.116, 6);
    expect(users[ANNA].is_org).toBe(false);
    expect(users[JONAS]).toMatchObject({
      name: "Keller, Jonas",
      is_org: true, // klinikum-nord.example is a configured organisation domain
      endpoints: { arztbriefe: 1, "refine-arztbrief-bulk": 0 },
    });
    expect(users[JONAS].costs.total).toBeCloseTo(0.125, 6); // 100 × 0.0005 + 50 × 0.0015
    // The admin's own dashboard call is a call too.
    expect(users["admin@skribent.example"].endpoints["usage-dashboard"]).toBeGreaterThanOrEqual(1);
  });

  it("counts an account as an organisation's by the identity provider's claim", async () => {
    const identity = { issuer: "http://127.0.0.1:9", subject: "solo", email: SOLO, emailVerified: true };
    const solo = await upsertUserByIdentity({ ...identity, name: null, locale: "de", orgClaim: true });
    await recordUsage({ userId: solo.id, endpoint: "files", units: 1, unit: "call", unitPriceUsd: 0 });
    expect((await dashboard())[SOLO]).toMatchObject({ is_org: true, endpoints: { files: 1 } });
    // A later sign-in whose token no longer says so takes it back.
    await upsertUserByIdentity({ ...identity, name: null, locale: "de", orgClaim: null });
    expect((await dashboard())[SOLO].is_org).toBe(false);
  });

  it("filters by period (Berlin days): older rows leave the last 30 days, a custom period brings them back", async () => {
    await getDb()
      .updateTable("usage_events")
      .set({ at: sql`now() - interval '40 days'` })
      .where("user_id", "=", sessions[ANNA].id)
      .where("endpoint", "=", "transcribe_v2")
      .execute();
    expect((await dashboard("?period=30d"))[ANNA].costs.transcribe_v2).toBeUndefined();
    const from = new Date(Date.now() - 45 * 86_400_000).toISOString().slice(0, 10);
    expect((await dashboard(`?period=custom&from=${from}`))[ANNA].costs.transcribe_v2).toBeCloseTo(0.036, 6);
    expect(await dashboard("?period=custom&from=2001-01-01&to=2001-01-31")).toEqual({});
    const bad = await get(usageLoader, "/api/usage-dashboard?period=fortnight", "admin@skribent.example");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ detail: "Invalid period" });
  });
});

describe("the dashboard shows the figures", () => {
  it("as a table with the account kind and USD with 2 to 4 decimals, in German and English", async () => {
    const { cookie } = sessions["admin@skribent.example"];
    const de = await adminPage("/betrieb?period=7d", cookie);
    expect(de.status).toBe(200);
    expect(de.html).toContain(JONAS);
    expect(de.html).toMatch(/Organisation/);
    expect(de.html).toMatch(/Persönlich/);
    expect(de.html).toMatch(/1,05\s\$/); // medical-letter-v2
    expect(de.html).toMatch(/0,125\s\$/); // Jonas' total
    expect(de.html).toContain("2 Aufrufe");
    const en = await adminPage("/betrieb?period=7d", cookie, "en");
    expect(en.html).toContain("$1.05");
    expect(en.html).toContain("$0.125");
    expect(en.html).toContain("1 call");
  });

  it("says 'No usage data available' for a period without any", async () => {
    const { cookie } = sessions["admin@skribent.example"];
    const empty = "?period=custom&from=2001-01-01&to=2001-01-31";
    expect((await adminPage(`/betrieb${empty}`, cookie)).html).toContain("Keine Nutzungsdaten vorhanden");
    expect((await adminPage(`/betrieb${empty}`, cookie, "en")).html).toContain("No usage data available");
  });

  it("downloads as CSV: escaped, formula-safe, one line per endpoint and a total per user", async () => {
    await settleMetering();
    const response = await callRoute(
      csvLoader,
      request("/betrieb/usage.csv?period=7d", { cookie: sessions["admin@skribent.example"].cookie }),
      { adminPath: "betrieb" },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    expect(response.headers.get("Content-Disposition")).toMatch(/^attachment; filename="usage-\d{4}-\d\d-\d\d-/);
    const text = await response.text();
    const lines = text.replace(/^\uFEFF/, "").split("\r\n");
    expect(lines[0]).toBe("Name,E-Mail,Konto,Endpunkt,Aufrufe,Kosten (USD)");
    expect(lines.filter((l) => l.includes(JONAS))).toEqual([
      `"Keller, Jonas",${JONAS},Organisation,arztbriefe,1,0.0000`,
      `"Keller, Jonas",${JONAS},Organisation,refine-arztbrief-bulk,0,0.1250`,
      `"Keller, Jonas",${JONAS},Organisation,Gesamt,1,0.1250`,
    ]);
    // A name that a spreadsheet would run as a formula stays text.
    const anna = `"'=HYPERLINK(""http://evil.example"",""Anna"")",${ANNA},Persönlich`;
    expect(lines.filter((l) => l.includes(ANNA)).every((l) => l.startsWith(anna))).toBe(true);
    expect(lines).toContain(`${anna},Gesamt,6,1.0800`);
    expect(text.endsWith("\r\n")).toBe(true);
  });
});

describe("metering on the response path", () => {
  it("shows the calls of the last second on the dashboard at once, though they are written together", async () => {
    const period = { from: new Date(Date.now() - 60_000), to: new Date(Date.now() + 60_000) };
    await settleMetering();
    const callsOf = (users: UsageDashboardUser[]) => users.find((u) => u.email === ANNA)?.endpoints.files ?? 0;
    const before = callsOf(await usageByUser(period));
    for (let i = 0; i < 3; i++) expect((await get(filesLoader, "/api/files", ANNA)).status).toBe(200);
    expect(callsOf(await usageByUser(period))).toBe(before + 3);
  });
});

describe("metering that fails", () => {
  it("never fails the call or the screen action it meters, and says so in the log", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    await settleMetering();
    await sql`alter table usage_events rename to usage_events_away`.execute(getDb());
    try {
      const files = await get(filesLoader, "/api/files", ANNA);
      expect(files.status).toBe(200);
      expect(await files.json()).toHaveProperty("files");
      const screen = await post(settingsAction, "/settings", ANNA, { intent: "rag", ragAgreed: "false" });
      expect(screen.status).toBe(302);
      await settleMetering();
      expect(warn).toHaveBeenCalledWith(expect.stringContaining("[usage] files call not recorded"), expect.any(String));
    } finally {
      await sql`alter table usage_events_away rename to usage_events`.execute(getDb());
      warn.mockRestore();
    }
  });
});
