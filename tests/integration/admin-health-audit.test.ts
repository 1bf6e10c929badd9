import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { audit } from "~/services/audit/audit.server";
import { setConfig } from "~/services/config/config.server";
import { getDb } from "~/models/db.server";
import { adminPage, sessionFor } from "../support/admin-pages";
import { startFakeOpenAiChatServer } from "../support/fake-openai-chat";
import { setupTestApp } from "../setup/app";

// The dashboard's health tiles are measured live (a stopped service turns red within its check's time-out) and
// its audit trail is filtered by user and period and paginated — all through plain GET pages.
const app = setupTestApp();

let admin = "";
beforeAll(async () => {
  admin = (await sessionFor("admin@skribent.example")).cookie;
});

afterAll(() => setConfig(app.config));

/** The status a rendered tile shows. */
function tile(html: string, name: string) {
  return new RegExp(`data-health-tile="${name}" data-status="([a-z_]+)"`).exec(html)?.[1];
}

function useLanguageModelAt(baseUrl: string) {
  const { llm } = app.config;
  setConfig({ ...app.config, llm: { ...llm, engine: "openai", openai: { ...llm.openai, baseUrl } } });
}

/** A service that accepts connections and never answers: a hung process behind an open port. */
async function hungServer() {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("health tiles", () => {
  it("turn red when their service stops, within the check's time-out, and the rest stays green", async () => {
    const llm = await startFakeOpenAiChatServer();
    useLanguageModelAt(llm.url);
    const up = await adminPage("/betrieb", admin);
    expect(tile(up.html, "llm_primary")).toBe("healthy");
    expect(tile(up.html, "database")).toBe("healthy");
    expect(tile(up.html, "storage")).toBe("healthy");

    await llm.close();
    const stopped = await adminPage("/betrieb", admin);
    expect(stopped.status).toBe(200);
    expect(tile(stopped.html, "llm_primary")).toBe("error");
    expect(stopped.html).toContain("Cannot reach 127.0.0.1");
    expect(tile(stopped.html, "database")).toBe("healthy");

    // Hung rather than stopped: the tile waits no longer than the check's 3 s time-out.
    const hung = await hungServer();
    useLanguageModelAt(hung.url);
    try {
      const started = performance.now();
      const page = await adminPage("/betrieb", admin);
      const elapsed = performance.now() - started;
      expect(tile(page.html, "llm_primary")).toBe("error");
      expect(elapsed).toBeGreaterThan(2_000);
      // The checks' time-out is 3 s; the rest is rendering on a possibly loaded machine.
      expect(elapsed).toBeLessThan(3_000 + 1_500);
    } finally {
      await hung.close();
    }
  });

  it("say plainly what is not configured", async () => {
    setConfig(app.config);
    const page = await adminPage("/betrieb", admin, "en");
    expect(tile(page.html, "llm_secondary")).toBe("not_configured");
    expect(page.html).toContain("Not configured");
    expect(page.html).toContain("no secondary language model configured");
  });
});

describe("the audit trail", () => {
  beforeAll(async () => {
    const anna = await sessionFor("anna.berger@praxis-berger.example");
    const jonas = await sessionFor("jonas.keller@klinikum-nord.example");
    const pager = await sessionFor("pager@praxis-pager.example");
    const entry = { entityType: "recording", entityId: "recordings/x/1.wav" } as const;
    await audit({ userId: anna.user.id, action: "recording.read", outcome: "success", ...entry });
    await audit({ userId: anna.user.id, action: "letter.save", outcome: "failure", entityType: "letter" });
    await audit({ userId: jonas.user.id, action: "transcript.read", outcome: "success", entityType: "transcript" });
    await audit({ userId: null, action: "auth.signin", outcome: "failure" });
    await audit({ userId: anna.user.id, action: "recording.delete", outcome: "success", ...entry });
    await getDb()
      .updateTable("audit_events")
      .set({ at: sql`now() - interval '10 days'` })
      .where("action", "=", "recording.delete")
      .execute();
    for (let i = 0; i < 60; i++) await audit({ userId: pager.user.id, action: `page.read.${i}`, outcome: "success" });
  });

  const actions = (html: string) => [...html.matchAll(/data-audit-action="true">([^<]+)</g)].map((m) => m[1]);

  it("shows who did what to which record and how it ended, filtered by user and period", async () => {
    const page = await adminPage("/betrieb/audit?user=ANNA.berger", admin);
    expect(page.status).toBe(200);
    // The last 7 days by default: the delete 10 days ago is not in them. Newest first.
    expect(actions(page.html)).toEqual(["letter.save", "recording.read"]);
    expect(page.html).toContain("recording · recordings/x/1.wav");
    expect(page.html).toContain("Fehlgeschlagen");
    const from = new Date(Date.now() - 12 * 86_400_000).toISOString().slice(0, 10);
    const older = await adminPage(`/betrieb/audit?user=anna&period=custom&from=${from}`, admin);
    expect(actions(older.html)).toEqual(["letter.save", "recording.read", "recording.delete"]);
    const jonas = await adminPage("/betrieb/audit?user=klinikum-nord", admin);
    expect(actions(jonas.html)).toEqual(["transcript.read"]);
  });

  it("takes the user filter as text, not as a pattern", async () => {
    for (const filter of ["%", "_", "anna%"]) {
      const page = await adminPage(`/betrieb/audit?user=${encodeURIComponent(filter)}`, admin);
      expect(actions(page.html), filter).toEqual([]);
      expect(page.html).toContain("Keine Einträge für diese Auswahl.");
    }
  });

  it("pages 50 entries at a time, keeping the filter in its links", async () => {
    const first = await adminPage("/betrieb/audit?user=pager", admin);
    expect(actions(first.html)).toHaveLength(50);
    expect(actions(first.html)[0]).toBe("page.read.59");
    expect(first.html).toContain('href="/betrieb/audit?period=7d&amp;user=pager&amp;page=2"');
    expect(first.html).not.toContain('rel="prev"');
    const second = await adminPage("/betrieb/audit?period=7d&user=pager&page=2", admin);
    expect(actions(second.html)).toHaveLength(10);
    expect(actions(second.html).at(-1)).toBe("page.read.0");
    expect(second.html).toContain('href="/betrieb/audit?period=7d&amp;user=pager&amp;page=1"');
    expect(second.html).not.toContain('rel="next"');
    expect(actions((await adminPage("/betrieb/audit?user=pager&page=3", admin)).html)).toEqual([]);
  });
});
