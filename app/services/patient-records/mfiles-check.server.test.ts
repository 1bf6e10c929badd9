import { describe, expect, it } from "vitest";

import { PatientRecordError } from "./patient-records.server";

import { rejection, fakeMFilesForEachTest } from "../../../tests/support/mfiles-helpers";

// The M-Files adapter's health check() against the fake server.

describe("M-Files patient records", () => {
  const world = fakeMFilesForEachTest();
  const { source } = world;

  describe("check()", () => {
    it("is healthy with working credentials", async () => {
      expect(await source().check()).toEqual({ status: "healthy" });
      expect(world.server.requests.map((r) => r.path)).toEqual([
        "/REST/server/authenticationtokens",
        "/REST/session/vault",
      ]);
    });

    it("reports wrong credentials as an error without echoing them", async () => {
      const result = await source({ password: "wrong-password" }).check();
      expect(result.status).toBe("error");
      expect(result.detail).toBe("M-Files rejected the credentials");
    });

    it("reports a stalled server within its time-out", async () => {
      world.server.stall = { scope: "all" };
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
      expect(world.server.requests).toHaveLength(0);
    });
  });
});
