// The letter as a FHIR R4 document (issue 25): a Bundle of type "document" whose first entry is a Composition with
// one section per letter section, followed by what it references — Patient, Practitioner, the practice as an
// Organization and, when there is one, the PDF as a DocumentReference — for hospital systems and a later ePA upload.
// Decisions and sources: ADR 0034.
//
// Every id is a name-based UUID (RFC 9562 version 5) of the export's id and the resource's role, so the same export
// gives the same document and tests are stable; nothing here reads the clock unless `now` is left out.

import { createHash } from "node:crypto";
import { formatLetterDate, type ExportLetter } from "./export-letter";
import { cleanExportText } from "./letter-text";

/** The document's kind. LOINC 11488-4 "Consult note" (https://loinc.org/11488-4/) from the value set R4 prefers for
 * Composition.type ("FHIR Document Type Codes", LOINC codes of scale DOC:
 * https://hl7.org/fhir/R4/valueset-doc-typecodes.html): a letter written after seeing the patient, to the colleague
 * who referred or treats them — what a practice's Arztbrief/Befundbericht is. LOINC has no "Arztbrief"; 34109-9
 * "Note" says less, 18842-5 "Discharge summary" is a hospital's. The second coding is the class German document
 * exchange uses for doctors' letters: IHE Deutschland's XDS type code BERI "Arztberichte", the type code the ePA
 * gives the eArztbrief (§ 291f SGB V). */
export const LETTER_DOCUMENT_TYPE = {
  coding: [
    { system: "http://loinc.org", code: "11488-4", display: "Consult note" },
    { system: "http://ihe-d.de/CodeSystems/IHEXDStypeCode", code: "BERI", display: "Arztberichte" },
  ],
};

/** IHE Deutschland's XDS class code BRI "Brief", the ePA's class of the eArztbrief: the PDF's category. */
const LETTER_CLASS = {
  coding: [{ system: "http://ihe-d.de/CodeSystems/IHEXDSclassCode", code: "BRI", display: "Brief" }],
};

/** LOINC 55108-5 "Clinical presentation Document": the section that carries the letter as it was laid out, as the
 * Swiss eMedication documents carry their PDF ("original representation"). */
const ORIGINAL_REPRESENTATION = {
  coding: [{ system: "http://loinc.org", code: "55108-5", display: "Clinical presentation Document" }],
};

// HL7 Deutschland base profiles (de.basisprofil.r4): identifier-lanr and identifier-bsnr fix use, type and system of
// these identifiers (http://fhir.de/StructureDefinition/identifier-lanr, .../identifier-bsnr). The resources claim no
// profile in meta.profile: the base profiles constrain data types, not these resources.
const V2_0203 = "http://terminology.hl7.org/CodeSystem/v2-0203";
export const LANR_SYSTEM = "https://fhir.kbv.de/NamingSystem/KBV_NS_Base_ANR";
export const BSNR_SYSTEM = "https://fhir.kbv.de/NamingSystem/KBV_NS_Base_BSNR";

const XHTML = "http://www.w3.org/1999/xhtml";
// A namespace of Skribent's own for the name-based UUIDs (itself a random UUID, fixed once).
const NAMESPACE = Buffer.from("6f1d2c4e8a3b4f7e9c0d5a6b7e8f9a0b", "hex");

type Reference = { reference: string; display?: string };
type Resource = { resourceType: string; id: string; [key: string]: unknown };
type Entry = { fullUrl: string; resource: Resource };

export type LetterFhirAttachments = {
  /** The letter as PDF, attached to the document; null leaves the attachment out. */
  pdf: Uint8Array | null;
  /** The export's id (the letter's, or an export's): every UUID in the document derives from it. */
  id: string;
  /** The bundle's timestamp; the current time when left out. */
  now?: Date;
};

/** A name-based (version 5) UUID for `name` in Skribent's namespace. */
export function nameUuid(name: string): string {
  const hash = createHash("sha1").update(NAMESPACE).update(name, "utf8").digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Text for an XHTML text node: &, < and > escaped (and " for good measure), only with the entities XML itself
 * defines, as FHIR's narrative rules ask. */
export function escapeXhtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** A Narrative of paragraphs, one per line of the text (blank lines dropped). */
function narrative(text: string): { status: "generated"; div: string } {
  const paragraphs = cleanExportText(text)
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => `<p>${escapeXhtml(line)}</p>`);
  return { status: "generated", div: `<div xmlns="${XHTML}">${paragraphs.join("")}</div>` };
}

function line(text: string): string {
  return cleanExportText(text)
    .replace(/\s*\n\s*/g, " ")
    .trim();
}

/** "Weiß, Jürgen" is split into family and given names; any other form is kept whole as text, since a name's
 * parts cannot be told apart reliably ("Anna Maria von der Heide"). */
function humanName(name: string): Record<string, unknown> | null {
  const text = line(name);
  if (!text) return null;
  const comma = /^([^,]+),\s*([^,]+)$/.exec(text);
  if (!comma) return { use: "official", text };
  return { use: "official", text, family: comma[1].trim(), given: comma[2].trim().split(/\s+/) };
}

/** The signing doctor: the first line of the signature block, else the first doctor without the specialty. */
function practitionerName(letter: ExportLetter): string {
  const signed = letter.letterhead.signature.map(line).find(Boolean);
  if (signed) return signed;
  const doctor = letter.letterhead.doctors.map(line).find(Boolean);
  return doctor ? doctor.split(/,\s*/)[0] : "";
}

function isoDate(value: string | null): string | undefined {
  return value && /^\d{4}-\d{2}-\d{2}$/.test(value) ? value : undefined;
}

function identifier(code: "LANR" | "BSNR", system: string, value: string | null) {
  const digits = value?.trim();
  if (!digits) return [];
  return [{ use: "official", type: { coding: [{ system: V2_0203, code }] }, system, value: digits }];
}

/** The letter as a FHIR R4 document Bundle. */
export function writeLetterFhir(letter: ExportLetter, attachments: LetterFhirAttachments): object {
  const uuid = (role: string) => nameUuid(`${attachments.id}:${role}`);
  const ids = {
    bundle: uuid("bundle"),
    composition: uuid("composition"),
    patient: uuid("patient"),
    practitioner: uuid("practitioner"),
    organization: uuid("organization"),
    pdf: uuid("pdf"),
  };
  const ref = (id: string, display?: string): Reference =>
    display ? { reference: `urn:uuid:${id}`, display } : { reference: `urn:uuid:${id}` };
  const now = (attachments.now ?? new Date()).toISOString();
  const head = letter.letterhead;
  const language = letter.language;
  const subject = line(letter.subject);

  const patientName = humanName(letter.patient.name);
  const patient: Resource = {
    resourceType: "Patient",
    id: ids.patient,
    ...(patientName ? { name: [patientName] } : {}),
    ...(isoDate(letter.patient.birthDate) ? { birthDate: letter.patient.birthDate } : {}),
  };

  const organization: Resource = {
    resourceType: "Organization",
    id: ids.organization,
    identifier: identifier("BSNR", BSNR_SYSTEM, head.bsnr),
    name: line(head.practiceName),
    telecom: [
      ...(line(head.phone) ? [{ system: "phone", value: line(head.phone), use: "work" }] : []),
      ...(line(head.email) ? [{ system: "email", value: line(head.email), use: "work" }] : []),
    ],
    address: [
      {
        use: "work",
        type: "both",
        line: [line(head.street)].filter(Boolean),
        postalCode: line(head.postalCode) || undefined,
        city: line(head.city) || undefined,
      },
    ],
  };

  const doctor = practitionerName(letter);
  const practitioner: Resource | null = doctor
    ? {
        resourceType: "Practitioner",
        id: ids.practitioner,
        identifier: identifier("LANR", LANR_SYSTEM, head.lanr),
        name: [{ use: "official", text: doctor }],
      }
    : null;
  const author = practitioner ? ref(ids.practitioner, doctor) : ref(ids.organization, line(head.practiceName));

  const sections: Array<Record<string, unknown>> = letter.sections
    .filter((section) => cleanExportText(section.text).trim() !== "")
    .map((section) => ({
      ...(line(section.title) ? { title: line(section.title) } : {}),
      text: narrative(section.text),
    }));

  const pdfEntry: Entry | null = attachments.pdf
    ? {
        fullUrl: `urn:uuid:${ids.pdf}`,
        resource: {
          resourceType: "DocumentReference",
          id: ids.pdf,
          status: "current",
          docStatus: "final",
          type: LETTER_DOCUMENT_TYPE,
          category: [LETTER_CLASS],
          subject: ref(ids.patient),
          date: now,
          author: [author],
          custodian: ref(ids.organization),
          description: subject || undefined,
          content: [
            {
              attachment: {
                contentType: "application/pdf",
                language,
                data: Buffer.from(attachments.pdf).toString("base64"),
                size: attachments.pdf.byteLength,
                hash: createHash("sha1").update(attachments.pdf).digest("base64"),
                title: subject || undefined,
                creation: isoDate(letter.date),
              },
            },
          ],
        },
      }
    : null;
  if (pdfEntry) {
    sections.push({
      code: ORIGINAL_REPRESENTATION,
      text: narrative(`PDF: ${subject}`),
      entry: [ref(ids.pdf)],
    });
  }

  const composition: Resource = {
    resourceType: "Composition",
    id: ids.composition,
    language,
    identifier: { system: "urn:ietf:rfc:3986", value: `urn:uuid:${ids.composition}` },
    status: "final",
    type: LETTER_DOCUMENT_TYPE,
    subject: ref(ids.patient, patientName ? String(patientName.text) : undefined),
    date: isoDate(letter.date) ?? now,
    author: [author],
    // Composition.title is required: a letter without a subject is titled by its date.
    title: subject || formatLetterDate(letter.date, language),
    custodian: ref(ids.organization),
    section: sections,
  };

  const entries: Entry[] = [
    { fullUrl: `urn:uuid:${ids.composition}`, resource: composition },
    { fullUrl: `urn:uuid:${ids.patient}`, resource: patient },
    ...(practitioner ? [{ fullUrl: `urn:uuid:${ids.practitioner}`, resource: practitioner }] : []),
    { fullUrl: `urn:uuid:${ids.organization}`, resource: organization },
    ...(pdfEntry ? [pdfEntry] : []),
  ];

  return prune({
    resourceType: "Bundle",
    id: ids.bundle,
    language,
    identifier: { system: "urn:ietf:rfc:3986", value: `urn:uuid:${ids.bundle}` },
    type: "document",
    timestamp: now,
    entry: entries,
  });
}

/** FHIR allows no empty arrays or objects: drop them (undefined values vanish in JSON anyway). */
function prune<T>(value: T): T {
  if (Array.isArray(value)) return value.map(prune).filter((item) => !isEmpty(item)) as T;
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const pruned = prune(item);
      if (pruned !== undefined && !isEmpty(pruned)) out[key] = pruned;
    }
    return out as T;
  }
  return value;
}

function isEmpty(value: unknown): boolean {
  if (Array.isArray(value)) return value.length === 0;
  if (value && typeof value === "object") return Object.keys(value).length === 0;
  return value === "" || value === undefined;
}
