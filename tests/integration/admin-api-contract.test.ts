import { describe, expect, it } from "vitest";
import { loader as filesLoader } from "~/routes/api.files";
import { loader as usageLoader } from "~/routes/api.usage-dashboard";
import { settleMetering } from "~/services/admin/usage.server";
import { apiClientFor } from "../support/api-client";
import { callRoute, request, setupTestApp } from "../setup/app";

// SPEC §7 GET /api/usage-dashboard as an external client calls it: a real bearer token from the development
// provider, the answer's field names as SPEC §3 "Usage dashboard user" names them. (GET /api/health's contract
// test is in api-contract.test.ts.)
const app = setupTestApp({ provider: true });

describe("GET /api/usage-dashboard", () => {
  it("answers 401 JSON without credentials and 403 without data for a clinician", async () => {
    const anonymous = await callRoute(usageLoader, request("/api/usage-dashboard"));
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual({ detail: "Unauthorized" });
    const anna = await apiClientFor(app.issuer, "anna-berger");
    const denied = await callRoute(usageLoader, anna("/api/usage-dashboard"));
    expect(denied.status).toBe(403);
    expect(await denied.json()).toEqual({ detail: "Access denied - unauthorized domain" });
  });

  it("gives the operator's admin per-user usage with SPEC §3's fields", async () => {
    const anna = await apiClientFor(app.issuer, "anna-berger");
    expect((await callRoute(filesLoader, anna("/api/files"))).status).toBe(200);
    await settleMetering();
    const opsAdmin = await apiClientFor(app.issuer, "ops-admin");
    const response = await callRoute(usageLoader, opsAdmin("/api/usage-dashboard?period=today"));
    expect(response.status).toBe(200);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const body = await response.json();
    expect(Object.keys(body).sort()).toEqual(["period", "users"]);
    expect(Object.keys(body.period).sort()).toEqual(["from", "name", "to"]);
    expect(body.period.name).toBe("today");
    const entry = body.users.find((u: { email: string }) => u.email === "anna.berger@praxis-berger.example");
    expect(Object.keys(entry).sort()).toEqual(["costs", "email", "endpoints", "is_org", "name"]);
    expect(entry).toMatchObject({ is_org: false, endpoints: { files: 1 }, costs: { files: 0, total: 0 } });
  });
});
