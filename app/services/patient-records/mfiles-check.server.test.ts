import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { startFakeMFilesServer, type FakeMFilesServer } from "../../../tests/support/fake-mfiles-server";

import { PatientRecordError, type PatientRecordSource } from "./patient-records.server";
import {
  PASSWORD,
  USER,
  VAULT,
  addPatientDocuments,
  mfilesSource,
  rejection,
  type MFilesOverrides,
} from "../../../tests/support/mfiles-helpers";

// The M-Files adapter's health check() against the fake server.

describe("M-Files patient records", () => {
  let server: FakeMFilesServer;
  let users: Array<{ username: string; password: string }>;

  function source(overrides: MFilesOverrides = {}): PatientRecordSource {
    return mfilesSource(server.url, overrides);
  }

  beforeEach(async () => {
    users = [{ username: USER, password: PASSWORD }];
    server = await startFakeMFilesServer({ vaultGuid: VAULT, users });
    addPatientDocuments(server);
  });

  afterEach(async () => {
    await server.close();
  });

  describe("check()", () => {
    it("is healthy with working credentials", async () => {
      expect(await source().check()).toEqual({ status: "healthy" });
      expect(server.requests.map((r) => r.path)).toEqual(["/REST/server/authenticationtokens", "/REST/session/vault"]);
    });

    it("reports wrong credentials as an error without echoing them", async () => {
      const result = await source({ password: "wrong-password" }).check();
      expect(result.status).toBe("error");
      expect(result.detail).toBe("M-Files rejected the credentials");
    });

    it("reports a stalled server within its time-out", async () => {
      server.stall = { scope: "all" };
      const started = performance.now();
      const result = await source().check(300);
      expect(result.status).toBe("error");
      expect(result.detail).toBe(new PatientRecordError("timeout").message);
      expect(performance.now() - started).toBeLessThan(2_000);
    });

    it("says when M-Files is not configured", async () => {
      const records = source({ baseUrl: "", vaultGuid: "", username: "" });
      expect(await records.check()).toEqual({ status: "not_configured", detail: "M-Files is not configured" });
      expect((await rejection(records.fetchDocuments("P-1"))).code).toBe("unavailable");
      expect(server.requests).toHaveLength(0);
    });
  });
});
