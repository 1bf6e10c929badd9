import { describe, expect, it } from "vitest";
import { action as localeAction } from "~/routes/resources.locale";
import { audit } from "~/services/audit/audit.server";
import { getDb } from "~/models/db.server";
import { hitRateLimit } from "~/services/web/rate-limit.server";
import { recordUsage, usageByUser } from "~/services/admin/usage.server";
import { callRoute, request, signedInUser, setupTestApp } from "../setup/app";

setupTestApp();

describe("rate limits in the database", () => {
  it("allows up to the limit per window and tells when to retry", async () => {
    const now = new Date("2026-11-21T10:00:10Z");
    const results = [];
    for (let i = 0; i < 3; i++)
      results.push(await hitRateLimit({ bucket: "signin:ip:x", limit: 2, windowSeconds: 60, now }));
    expect(results.map((r) => r.allowed)).toEqual([true, true, false]);
    expect(results[2].retryAfterSeconds).toBe(50);
    // Another user is not affected; the next window starts fresh.
    expect((await hitRateLimit({ bucket: "signin:ip:y", limit: 2, windowSeconds: 60, now })).allowed).toBe(true);
    const next = new Date("2026-11-21T10:01:00Z");
    expect((await hitRateLimit({ bucket: "signin:ip:x", limit: 2, windowSeconds: 60, now: next })).allowed).toBe(true);
  });
});

describe("usage", () => {
  it("counts call rows as calls and adds up the cost of every row per user and endpoint", async () => {
    const { user } = await signedInUser({ email: "usage@praxis.example", name: "Dr. U" });
    await recordUsage({ userId: user.id, endpoint: "transcribe_v2", units: 1, unit: "call", unitPriceUsd: 0 });
    await recordUsage({
      userId: user.id,
      endpoint: "transcribe_v2",
      units: 90,
      unit: "audio_second",
      unitPriceUsd: 0.0001,
    });
    await recordUsage({
      userId: user.id,
      endpoint: "transcribe_v2",
      units: 30,
      unit: "audio_second",
      unitPriceUsd: 0.0001,
    });
    await recordUsage({
      userId: user.id,
      endpoint: "chat-request",
      units: 1000,
      unit: "input_token",
      unitPriceUsd: 0.000002,
    });
    const rows = await usageByUser({ from: new Date(Date.now() - 60_000), to: new Date(Date.now() + 60_000) });
    const mine = rows.find((r) => r.email === "usage@praxis.example")!;
    // Engine rows (audio seconds, tokens) cost but are not calls.
    expect(mine.endpoints).toEqual({ transcribe_v2: 1, "chat-request": 0 });
    expect(mine.costs.transcribe_v2).toBeCloseTo(0.012, 6);
    expect(mine.costs.total).toBeCloseTo(0.014, 6);
    await expect(
      recordUsage({ userId: user.id, endpoint: "x", units: -1, unit: "call", unitPriceUsd: 1 }),
    ).rejects.toThrow();
  });
});

describe("audit", () => {
  it("records who, what and the outcome — never content", async () => {
    const { user } = await signedInUser({ email: "audit@praxis.example" });
    await audit({
      userId: user.id,
      action: "recording.read",
      entityType: "recording",
      entityId: "r1",
      outcome: "success",
    });
    const row = await getDb()
      .selectFrom("audit_events")
      .selectAll()
      .where("action", "=", "recording.read")
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ user_id: user.id, entity_type: "recording", entity_id: "r1", outcome: "success" });
    expect(Object.keys(row).sort()).toEqual([
      "action",
      "at",
      "entity_id",
      "entity_type",
      "id",
      "ip",
      "outcome",
      "request_id",
      "user_id",
    ]);
  });
});

describe("language switch", () => {
  it("sets the language cookie and the one-time notice, then goes back", async () => {
    const response = await callRoute(
      localeAction,
      request("/resources/locale", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin" },
        body: "language=en&redirectTo=%2Farztbriefe",
      }),
    );
    expect(response.status).toBe(302);
    expect(response.headers.get("Location")).toBe("/arztbriefe");
    const cookies = response.headers.get("Set-Cookie") ?? "";
    expect(cookies).toMatch(/skribent_lng=/);
    expect(cookies).toMatch(/skribent_toast=/);
  });

  it("never redirects off-site and refuses cross-site posts", async () => {
    const offsite = await callRoute(
      localeAction,
      request("/resources/locale", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: "language=de&redirectTo=https%3A%2F%2Fevil.example",
      }),
    );
    expect(offsite.headers.get("Location")).toBe("/");
    const crossSite = await callRoute(
      localeAction,
      request("/resources/locale", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: "https://evil.example" },
        body: "language=de",
      }),
    );
    expect(crossSite.status).toBe(403);
  });
});
