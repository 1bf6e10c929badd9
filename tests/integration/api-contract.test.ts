import { describe, expect, it } from "vitest";
import { loader as healthLoader } from "~/routes/api.health";
import { loader as unknownApi } from "~/routes/api.$";
import { getDb } from "~/models/db.server";
import { getDevAccessToken } from "../support/oidc-client";
import { callRoute, request, signedInUser, TEST_CLIENT, setupTestApp } from "../setup/app";

// The contract-test harness (issue 2): a real bearer token from the development
// provider, used as an external client would, against the SPEC §7 answers.
const app = setupTestApp({ provider: true });

async function bearer(accountId: string, audience = "skribent-api") {
  const { access_token } = await getDevAccessToken({ issuer: app.issuer, ...TEST_CLIENT, accountId, audience });
  return { Authorization: `Bearer ${access_token}` };
}

describe("GET /api/health", () => {
  it("answers 401 JSON, not a redirect, without credentials", async () => {
    const response = await callRoute(healthLoader, request("/api/health"));
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ detail: "Unauthorized" });
  });

  it("rejects a malformed or forged bearer token", async () => {
    for (const value of ["Bearer", "Bearer not-a-jwt", "Basic abc"]) {
      const response = await callRoute(healthLoader, request("/api/health", { headers: { Authorization: value } }));
      expect(response.status).toBe(401);
    }
  });

  it("tells a clinician nothing about the services", async () => {
    const response = await callRoute(healthLoader, request("/api/health", { headers: await bearer("anna-berger") }));
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ detail: "Access denied - unauthorized domain" });
    const audit = await getDb()
      .selectFrom("audit_events")
      .where("action", "=", "admin.health")
      .select("outcome")
      .execute();
    expect(audit.map((a) => a.outcome)).toContain("denied");
  });

  it("gives the operator's admin the SPEC §3 health fields, with live checks", async () => {
    const response = await callRoute(healthLoader, request("/api/health", { headers: await bearer("ops-admin") }));
    expect(response.status).toBe(200);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const body = await response.json();
    expect(Object.keys(body).sort()).toEqual(["s3_connected", "service_tests", "services", "storage"]);
    expect(Object.keys(body.service_tests).sort()).toEqual(
      [
        "antivirus",
        "database",
        "llm_primary",
        "llm_secondary",
        "media_conversion",
        "speech_recognition",
        "speech_token",
      ].sort(),
    );
    expect(Object.keys(body.services).sort()).toEqual(["llm_client", "speech_service"]);
    expect(body.service_tests.database.status).toBe("healthy");
    expect(body.s3_connected).toBe(true);
    // Not built yet, or built but without its models: said plainly, never "healthy".
    expect(body.service_tests.llm_primary.status).toBe("not_configured");
    expect(body.services.llm_client.status).toBe("not_configured");
    expect(body.services.llm_client.detail).toMatch(/^engine local: .*npm run models -- --only llm/);
    expect(body.service_tests.antivirus).toMatchObject({
      status: "not_configured",
      detail: "no virus scanner configured (ANTIVIRUS_URL)",
    });
    expect(body.service_tests.llm_secondary).toMatchObject({
      status: "not_configured",
      detail: "no secondary language model configured",
    });
    expect(body.services.speech_service.status).toBe("not_configured");
    expect(body.services.speech_service.detail).toMatch(/^engine local: .*npm run models/);
  });

  it("accepts the session cookie too, deciding admin from the verified e-mail", async () => {
    const admin = await signedInUser({ email: "admin@skribent.example" });
    const ok = await callRoute(healthLoader, request("/api/health", { cookie: admin.cookie }));
    expect(ok.status).toBe(200);
    const lookalike = await signedInUser({ email: "admin@skribent.example.evil.example" });
    const denied = await callRoute(healthLoader, request("/api/health", { cookie: lookalike.cookie }));
    expect(denied.status).toBe(403);
  });
});

describe("unknown API paths", () => {
  it("answer 404 JSON", async () => {
    const response = await callRoute(unknownApi, request("/api/does-not-exist"));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ detail: "Not found" });
  });
});
