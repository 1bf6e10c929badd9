import type { ExportLabels, ExportLetter } from "~/services/letter-export/export-letter";

// What the letter writers' tests (app/services/letter-export/*.test.ts) share of a German letter: the fixed wording
// and the letter's head. Each test file adds the letterhead and sections its assertions are about.

export const GERMAN_LABELS: ExportLabels = {
  page: (page, pages) => `Seite ${page} von ${pages}`,
  patient: "Patient/in",
  born: "geb.",
  date: "Datum",
  phone: "Tel.",
  email: "E-Mail",
  bsnr: "BSNR",
  lanr: "LANR",
};

export const GERMAN_LETTER_HEAD = {
  language: "de-DE",
  recipient: { name: "Herrn Dr. med. Peter Braun", addressLines: ["Lindenweg 2", "12345 Musterstadt"] },
  patient: { name: "Jürgen Weiß", birthDate: "1950-02-01" },
  subject: "Befundbericht vom 27.11.2026",
  date: "2026-11-27",
  labels: GERMAN_LABELS,
} satisfies Partial<ExportLetter>;
