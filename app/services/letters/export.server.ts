import { randomUUID } from "node:crypto";
import { findExportDetails, keepExportDetails, type StoredExportDetails } from "~/models/letter-export.server";
import { writeLetterDocx } from "~/services/letter-export/letter-docx.server";
import { writeLetterFhir } from "~/services/letter-export/letter-fhir";
import { writeLetterPdf } from "~/services/letter-export/letter-pdf.server";
import { writeLetterText } from "~/services/letter-export/letter-text";
import type { ExportLabels, ExportLetter, Letterhead } from "~/services/letter-export/export-letter";
import { letterheadFor } from "../accounts/letterhead.server";
import { DomainError } from "../web/domain-error.server";
import { getFixedTFor } from "../web/i18n.server";
import { getLetter } from "./editing.server";
import { isNoInformation, sectionsOf, type LetterLanguage } from "./letter-content";
import { letterLanguage } from "./letters.server";

// A finished letter leaves Skribent (issue 25): the doctor's letterhead, the recipient, patient line, subject and date
// from the export dialog (kept with the letter only when the doctor chooses), and the letter's sections with
// something to say, in the template's order — written as a DIN 5008 PDF, a DOCX, a FHIR document or text for the
// practice software by the writers in services/letter-export, which know nothing of the database. Owner-scoped like
// every letter read; the doors audit each export by format, never its content.

export const EXPORT_FORMATS = ["pdf", "docx", "fhir", "text", "print"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export type ExportDetails = StoredExportDetails & { date: string };

/** What the export dialog accepts (SPEC: bad input is refused with a clear message, nothing is cut silently). */
export const EXPORT_LIMITS = {
  name: 120,
  addressLines: 4,
  addressLine: 60,
  subject: 200,
} as const;

/** The refusals the export can give, by their name in letters:export.errors (the download route hands them back). */
export const EXPORT_ERRORS = ["notText", "tooLong", "addressLines", "birthDate", "date", "format", "empty"] as const;

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function isCalendarDate(value: string) {
  const match = ISO_DATE.exec(value);
  if (!match) return false;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  return date.toISOString().slice(0, 10) === value && Number(match[1]) >= 1900;
}

function todayIso(now = new Date()) {
  return now.toISOString().slice(0, 10);
}

function text(value: unknown, field: string, max: number) {
  if (value === undefined || value === null) return "";
  if (typeof value !== "string") throw new DomainError("invalid", "letters:export.errors.notText", [], { field });
  const trimmed = value.replace(/\s+/g, " ").trim();
  if (trimmed.length > max)
    throw new DomainError("invalid", "letters:export.errors.tooLong", [], { field, max: String(max) });
  return trimmed;
}

/**
 * The dialog's or the API's fields, checked: every text within its limit, the address at most four lines, dates real
 * calendar dates — a birth date not in the future. Empty fields are allowed (a letter for the patient's own file has
 * no recipient); the letter's date defaults to today.
 */
export function readExportDetails(input: {
  recipientName?: unknown;
  recipientAddress?: unknown;
  patientName?: unknown;
  patientBirthDate?: unknown;
  subject?: unknown;
  date?: unknown;
}): ExportDetails {
  const address =
    typeof input.recipientAddress === "string"
      ? input.recipientAddress.split(/\r?\n/)
      : Array.isArray(input.recipientAddress)
        ? input.recipientAddress
        : input.recipientAddress === undefined || input.recipientAddress === null
          ? []
          : null;
  if (address === null)
    throw new DomainError("invalid", "letters:export.errors.notText", [], { field: "recipient_address" });
  const lines = address
    .map((line) => text(line, "recipient_address", EXPORT_LIMITS.addressLine))
    .filter((line) => line !== "");
  if (lines.length > EXPORT_LIMITS.addressLines)
    throw new DomainError("invalid", "letters:export.errors.addressLines", [], {
      max: String(EXPORT_LIMITS.addressLines),
    });
  const birth = text(input.patientBirthDate, "patient_birth_date", 10);
  if (birth && (!isCalendarDate(birth) || birth > todayIso()))
    throw new DomainError("invalid", "letters:export.errors.birthDate");
  const date = text(input.date, "date", 10);
  if (date && !isCalendarDate(date)) throw new DomainError("invalid", "letters:export.errors.date");
  return {
    recipientName: text(input.recipientName, "recipient_name", EXPORT_LIMITS.name),
    recipientAddress: lines,
    patientName: text(input.patientName, "patient_name", EXPORT_LIMITS.name),
    patientBirthDate: birth || null,
    subject: text(input.subject, "subject", EXPORT_LIMITS.subject),
    date: date || todayIso(),
  };
}

export function exportFormatFrom(value: unknown): ExportFormat {
  if (typeof value === "string" && (EXPORT_FORMATS as readonly string[]).includes(value)) return value as ExportFormat;
  throw new DomainError("invalid", "letters:export.errors.format", [], { formats: EXPORT_FORMATS.join(", ") });
}

export type LoadedLetter = Awaited<ReturnType<typeof getLetter>>;

/**
 * The caller's letter, loaded once per request and first — before anything a form or body says (owner-scoped: another
 * user's letter is not found). Every export step below takes it as loaded.
 */
export function exportedLetter(args: { userId: string; key: string }): Promise<LoadedLetter> {
  return getLetter(args);
}

/** A letter can leave only when it has content and no job is rewriting it. */
function requireExportable(letter: LoadedLetter) {
  if (letter.status === "processing") throw new DomainError("conflict", "letters:errors.busy");
  if (letter.content === null || letter.content === undefined)
    throw new DomainError("invalid", "letters:export.errors.empty");
}

/** The dialog's starting values: what the doctor kept with this letter, or empty with today's date. */
export async function exportStart(args: { userId: string; letter: LoadedLetter }) {
  const kept = await findExportDetails({ ownerId: args.userId, letterId: args.letter.id });
  const details: ExportDetails = kept
    ? { ...kept, date: kept.date ?? todayIso() }
    : {
        recipientName: "",
        recipientAddress: [],
        patientName: "",
        patientBirthDate: null,
        subject: "",
        date: todayIso(),
      };
  return { details, kept: kept !== null };
}

/** The sections a sent letter carries: those with something to say, as the SPEC's text-view copy leaves out. */
function sectionsToSend(content: unknown) {
  const sections = sectionsOf(content) ?? [{ title: "", text: typeof content === "string" ? content : "" }];
  return sections.filter((s) => s.text.trim() !== "" && !isNoInformation(s.text));
}

export type ExportFile = { body: Uint8Array | string; contentType: string; extension: string };

/** The fixed wording of a sent letter, in the letter's language (not the screen's). */
async function wording(language: LetterLanguage): Promise<{ labels: ExportLabels; defaultSubject: string }> {
  const t = await getFixedTFor(language === "en-GB" ? "en" : "de", "letters");
  return {
    defaultSubject: t("export.defaultSubject"),
    labels: {
      page: (page, pages) => t("export.labels.page", { page, pages }),
      patient: t("export.labels.patient"),
      born: t("export.labels.born"),
      date: t("export.labels.date"),
      phone: t("export.labels.phone"),
      email: t("export.labels.email"),
      bsnr: t("export.labels.bsnr"),
      lanr: t("export.labels.lanr"),
    },
  };
}

/** The letter as it leaves, in one format. `keep`: the details are kept with the letter for the next export. */
export async function exportLetter(args: {
  userId: string;
  letter: LoadedLetter;
  format: Exclude<ExportFormat, "print">;
  details: ExportDetails;
  keep: boolean;
}): Promise<ExportFile> {
  return writeExport(args.format, await exportDocument(args), args.letter.id);
}

/** The letter as the writers take it (also the print view's input). */
export async function exportDocument(args: {
  userId: string;
  letter: LoadedLetter;
  details: ExportDetails;
  keep: boolean;
}): Promise<ExportLetter> {
  const { letter } = args;
  requireExportable(letter);
  const language = letterLanguage(letter.language_code);
  const [letterhead, fixed] = await Promise.all([letterheadFor({ userId: args.userId, language }), wording(language)]);
  if (args.keep) await keepExportDetails({ ownerId: args.userId, letterId: letter.id, details: args.details });
  return toExportLetter(letter, args.details, letterhead, language, fixed);
}

function toExportLetter(
  letter: LoadedLetter,
  details: ExportDetails,
  letterhead: Letterhead,
  language: LetterLanguage,
  wording: { labels: ExportLabels; defaultSubject: string },
): ExportLetter {
  return {
    language,
    letterhead,
    recipient: { name: details.recipientName, addressLines: details.recipientAddress },
    patient: { name: details.patientName, birthDate: details.patientBirthDate },
    subject: details.subject || wording.defaultSubject,
    date: details.date,
    sections: sectionsToSend(letter.content),
    labels: wording.labels,
  };
}

async function writeExport(
  format: Exclude<ExportFormat, "print">,
  document: ExportLetter,
  letterId: string,
): Promise<ExportFile> {
  switch (format) {
    case "pdf":
      return { body: await writeLetterPdf(document), contentType: "application/pdf", extension: "pdf" };
    case "docx":
      return {
        body: await writeLetterDocx(document),
        contentType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        extension: "docx",
      };
    case "fhir": {
      // The PDF travels inside the document, as a hospital system or the ePA expects it.
      const pdf = await writeLetterPdf(document);
      // One export is one document: a fresh id each time, so a resent letter is a new document, not a copy.
      const bundle = writeLetterFhir(document, { pdf, id: `${letterId}:${randomUUID()}` });
      return { body: JSON.stringify(bundle, null, 2), contentType: "application/fhir+json", extension: "json" };
    }
    case "text":
      return {
        body: writeLetterText(document, { header: true }),
        contentType: "text/plain; charset=utf-8",
        extension: "txt",
      };
  }
}

/** "Arztbrief-Visite_Becker-2026-11-27.pdf": a file name any system accepts, from the letter's name and date. */
export function exportFileName(letterName: string, date: string, extension: string) {
  const base = letterName
    .replace(/\.[a-z0-9]{1,5}$/i, "")
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/ß/g, "ss")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 60);
  return `Arztbrief-${base || "Brief"}-${date}.${extension}`;
}

/** The download's Content-Disposition: `filename` for old clients, `filename*` with the exact name (RFC 6266). */
export function attachmentDisposition(name: string) {
  return `attachment; filename="${name.replace(/[^\x20-\x7e]|"/g, "_")}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
