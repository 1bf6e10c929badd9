import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { startFakeMFilesServer } from "../../../tests/support/fake-mfiles-server";

import {
  PASSWORD,
  PATIENT_PROPERTY,
  VAULT,
  pdf,
  rejection,
  startBystander,
  fakeMFilesForEachTest,
} from "../../../tests/support/mfiles-helpers";

// The M-Files adapter's failures and limits against the fake server: redirects, time-outs, the
// caller's abort, the size limit, server errors and an unreachable host.

describe("M-Files patient records", () => {
  const world = fakeMFilesForEachTest();
  const { source, contentRequests } = world;

  describe("redirects", () => {
    let bystander: Awaited<ReturnType<typeof startBystander>>;
    beforeEach(async () => {
      bystander = await startBystander();
    });
    afterEach(async () => {
      await bystander.close();
    });

    it("does not follow a redirect on an authenticated call", async () => {
      const records = source();
      world.server.redirect = { location: bystander.url, scope: "api" };
      const error = await rejection(records.fetchDocuments("P-1"));
      expect(error.code).toBe("unavailable");
      expect(world.server.requests.some((r) => r.status === 302)).toBe(true);
      expect(bystander.hits).toBe(0);
    });

    it("does not follow a redirect of the token request", async () => {
      world.server.redirect = { location: bystander.url, scope: "all" };
      expect((await rejection(source().fetchDocuments("P-1"))).code).toBe("unavailable");
      expect((await source().check()).status).toBe("error");
      expect(bystander.hits).toBe(0);
    });
  });

  it("times out within the configured time-out when the server stalls", async () => {
    world.server.stall = { scope: "api" };
    const started = performance.now();
    const error = await rejection(source({ timeoutMs: 300 }).fetchDocuments("P-1"));
    const elapsed = performance.now() - started;
    expect(error.code).toBe("timeout");
    expect(elapsed).toBeGreaterThanOrEqual(250);
    // The stalled server never answers: the time-out ended it (margin: a loaded CI machine).
    expect(elapsed).toBeLessThan(5_000);
  });

  it("times out when a download stops half-way", async () => {
    world.server.stall = { scope: "content" };
    const error = await rejection(source({ timeoutMs: 300 }).fetchDocuments("P-1"));
    expect(error.code).toBe("timeout");
    // The disguised "PDF" is abandoned after its first bytes; the real one stalls half-way.
    expect(contentRequests().map((r) => r.path)).toEqual([
      `/REST/objects/0/${world.ids.disguised.id}/1/files/${world.ids.disguised.fileIds[0]}/content`,
      `/REST/objects/0/${world.ids.befund.id}/1/files/${world.ids.befund.fileIds[0]}/content`,
    ]);
  });

  it("passes the caller's abort on as it is", async () => {
    world.server.stall = { scope: "all" };
    const controller = new AbortController();
    const pending = source().fetchDocuments("P-1", { signal: controller.signal });
    const reason = new Error("user left");
    queueMicrotask(() => controller.abort(reason));
    await expect(pending).rejects.toBe(reason);
  });

  describe("size limit", () => {
    beforeEach(() => {
      world.server.addObject({
        title: "Large scan",
        properties: { [PATIENT_PROPERTY]: "P-3" },
        files: [{ name: "Large", extension: "pdf", content: pdf("large", 5_000) }],
        lastModified: new Date(Date.UTC(2024, 1, 2)),
      });
      world.server.addObject({
        title: "Small",
        properties: { [PATIENT_PROPERTY]: "P-3" },
        files: [{ name: "Small", extension: "pdf", content: pdf("small", 1_000) }],
        lastModified: new Date(Date.UTC(2024, 1, 1)),
      });
      world.server.addObject({
        title: "Only large",
        properties: { [PATIENT_PROPERTY]: "P-4" },
        files: [{ name: "Large", extension: "pdf", content: pdf("large", 5_000) }],
      });
    });

    it.each([
      ["with Content-Length", false],
      ["streamed without Content-Length", true],
    ])("skips a PDF over maxBytesPerDocument (%s) and keeps the others", async (_label, chunked) => {
      world.server.chunkedDownloads = chunked;
      const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
      try {
        const documents = await source({ maxBytesPerDocument: 1_000 }).fetchDocuments("P-3");
        expect(documents.map((d) => d.name)).toEqual(["Small.pdf"]);
        expect(documents[0].data.byteLength).toBe(1_000);
        expect(warn).toHaveBeenCalledTimes(1);
        const logged = warn.mock.calls.flat().join(" ");
        expect(logged).not.toContain(PASSWORD);
        expect(logged).not.toContain("%PDF");
        expect(logged).not.toContain("P-3");
      } finally {
        warn.mockRestore();
      }
    });

    it("fails with too_large when every PDF of the patient is over the limit", async () => {
      world.server.chunkedDownloads = true;
      const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
      try {
        expect((await rejection(source({ maxBytesPerDocument: 1_000 }).fetchDocuments("P-4"))).code).toBe("too_large");
      } finally {
        warn.mockRestore();
      }
    });
  });

  it("maps server errors to unavailable", async () => {
    world.server.failure = { status: 500, scope: "api" };
    expect((await rejection(source().fetchDocuments("P-1"))).code).toBe("unavailable");
  });

  it("maps an unreachable host to unavailable", async () => {
    const url = world.server.url;
    await world.server.close();
    expect((await rejection(source({ baseUrl: url }).fetchDocuments("P-1"))).code).toBe("unavailable");
    world.server = await startFakeMFilesServer({ vaultGuid: VAULT, users: world.users });
  });
});
