import { describe, expect, it } from "vitest";

import { PATIENT_PROPERTY, VAULT, pdf, rejection, fakeMFilesForEachTest } from "../../../tests/support/mfiles-helpers";

// The M-Files adapter against tests/support/fake-mfiles-server.ts, a local server that follows the
// published REST API (PROTOCOLS.md §4): what comes back and the configuration it accepts. Logins are
// in patient-records-mfiles-auth, failures and limits in patient-records-mfiles-limits, check() in
// patient-records-mfiles-check, and the fake itself is checked in patient-records-mfiles-fake.

describe("M-Files patient records", () => {
  const world = fakeMFilesForEachTest();
  const { source, contentRequests } = world;

  it("returns the patient's PDFs, skips other files, and never another patient's documents", async () => {
    const documents = await source().fetchDocuments("P-1");

    expect(documents.map((d) => d.name)).toEqual(["Befund.pdf", "Labor 01_2024.pdf"]);
    expect(Buffer.from(documents[0].data)).toEqual(pdf("P-1 befund"));
    expect(Buffer.from(documents[1].data)).toEqual(pdf("P-1 labor"));

    const search = world.server.requests.find((r) => r.path === "/REST/objects");
    expect(search?.query).toBe(`o=0&p${PATIENT_PROPERTY}=P-1`);
    const downloaded = contentRequests().map((r) => r.path);
    expect(downloaded).not.toContainEqual(expect.stringContaining(`/objects/0/${world.ids.docx.id}/`));
    for (const key of ["otherPatient", "otherProperty", "deleted"]) {
      expect(world.server.requests.some((r) => r.path.includes(`/objects/0/${world.ids[key].id}/`))).toBe(false);
    }
    expect(world.server.requests.every((r) => r.status !== null && r.status < 400)).toBe(true);
    expect(world.server.tokensIssued).toBe(1);

    const other = await source().fetchDocuments("P-2");
    expect(other.map((d) => d.name)).toEqual(["Fremd.pdf"]);
    expect(Buffer.from(other[0].data)).toEqual(pdf("P-2 befund"));
  });

  it("returns [] for a patient without documents and validates the id first", async () => {
    expect(await source().fetchDocuments("P-404")).toEqual([]);
    const error = await rejection(source().fetchDocuments("../x"));
    expect(error.message).toBe("Invalid patient ID");
    expect((await rejection(source().fetchDocuments(" "))).message).toBe("Patient ID is required");
    expect(world.server.requests.filter((r) => r.path === "/REST/objects")).toHaveLength(1);
  });

  it("accepts the REST root as base URL and a vault GUID without braces", async () => {
    const documents = await source({
      baseUrl: `${world.server.url}/REST/`,
      vaultGuid: VAULT.slice(1, -1),
    }).fetchDocuments("P-1");
    expect(documents).toHaveLength(2);
  });

  it("returns at most maxDocuments, newest first, and downloads no more", async () => {
    for (let day = 1; day <= 5; day++) {
      world.server.addObject({
        title: `Dokument ${day}`,
        properties: { [PATIENT_PROPERTY]: "P-5" },
        files: [{ name: `Dokument ${day}`, extension: "pdf", content: pdf(`day ${day}`) }],
        lastModified: new Date(Date.UTC(2024, 2, day)),
      });
    }
    const documents = await source({ maxDocuments: 3 }).fetchDocuments("P-5");
    expect(documents.map((d) => d.name)).toEqual(["Dokument 5.pdf", "Dokument 4.pdf", "Dokument 3.pdf"]);
    expect(contentRequests()).toHaveLength(3);
  });

  it("counts documents across the files of one object", async () => {
    world.server.addObject({
      title: "Mappe",
      properties: { [PATIENT_PROPERTY]: "P-6" },
      files: [
        { name: "Teil 1", extension: "pdf", content: pdf("1") },
        { name: "Teil 2", extension: "txt", content: "plain" },
        { name: "Teil 3", extension: "pdf", content: pdf("3") },
        { name: "Teil 4", extension: "pdf", content: pdf("4") },
      ],
    });
    const documents = await source({ maxDocuments: 2 }).fetchDocuments("P-6");
    expect(documents.map((d) => d.name)).toEqual(["Teil 1.pdf", "Teil 3.pdf"]);
  });

  it.each([
    ["ftp://mfiles.example", "http(s)"],
    ["https://user:pw@mfiles.example", "credentials"],
    ["https://mfiles.example/?x=1", "query"],
    ["not a url", "valid URL"],
  ])("refuses the base URL %s", (baseUrl, message) => {
    expect(() => source({ baseUrl })).toThrow(message);
  });

  it("refuses a vault id that is not a GUID and limits that are not positive integers", () => {
    expect(() => source({ vaultGuid: "Sample Vault" })).toThrow("GUID");
    expect(() => source({ maxDocuments: 0 })).toThrow("maxDocuments");
    expect(() => source({ patientIdPropertyId: -1 })).toThrow("patientIdPropertyId");
  });
});
