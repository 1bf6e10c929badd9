import { describe, expect, it } from "vitest";

import { startFakeMFilesServer } from "../../../tests/support/fake-mfiles-server";

import { PATIENT_PROPERTY, VAULT, pdf, rejection, fakeMFilesForEachTest } from "../../../tests/support/mfiles-helpers";

// The M-Files adapter's logins against the fake server: wrong credentials, expired tokens and the
// Multi-Server Mode cookie (PROTOCOLS.md §4).

describe("M-Files patient records", () => {
  const world = fakeMFilesForEachTest();
  const { source } = world;

  it("maps a wrong password to unauthorized without logging in twice", async () => {
    const error = await rejection(source({ password: "wrong" }).fetchDocuments("P-1"));
    expect(error.code).toBe("unauthorized");
    expect(error.message).not.toContain("wrong");
    expect(world.server.tokensIssued).toBe(1);
    expect(world.server.requests.filter((r) => r.status === 403)).toHaveLength(1);
  });

  it("logs in again once when the cached token has expired, then succeeds", async () => {
    const records = source();
    expect(await records.fetchDocuments("P-1")).toHaveLength(2);
    expect(world.server.tokensIssued).toBe(1);

    world.server.expireAllTokens();
    expect(await records.fetchDocuments("P-1")).toHaveLength(2);
    expect(world.server.tokensIssued).toBe(2);
    expect(world.server.requests.filter((r) => r.status === 403)).toHaveLength(1);

    // The new token is cached: a third call logs in no more.
    expect(await records.fetchDocuments("P-1")).toHaveLength(2);
    expect(world.server.tokensIssued).toBe(2);
  });

  it("gives up after one new login when the credentials stopped working", async () => {
    const records = source();
    await records.fetchDocuments("P-1");
    world.users[0].password = "rotated";
    world.server.expireAllTokens();
    expect((await rejection(records.fetchDocuments("P-1"))).code).toBe("unauthorized");
    expect(world.server.tokensIssued).toBe(2);
  });

  it("sends the Multi-Server Mode cookie back", async () => {
    await world.server.close();
    world.server = await startFakeMFilesServer({ vaultGuid: VAULT, users: world.users, multiServerMode: true });
    world.server.addObject({
      title: "Befund",
      properties: { [PATIENT_PROPERTY]: "P-1" },
      files: [{ name: "Befund", extension: "pdf", content: pdf("msm") }],
    });
    const documents = await source().fetchDocuments("P-1");
    expect(documents.map((d) => d.name)).toEqual(["Befund.pdf"]);
  });
});
