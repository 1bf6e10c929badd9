// What a finished letter carries when it leaves Skribent (issue 25): the practice's letterhead, the recipient,
// the patient line, subject and date, and the letter's sections in the template's order. Every writer (PDF after
// DIN 5008, DOCX, FHIR document, text for the practice software, print view) takes exactly this and nothing
// from the database: the use case (services/letters) loads, scopes and audits; the writers only write.
// Fixed wording ("Seite 1 von 2", "geb.") arrives translated in `labels`, so the writers hold no language.

/** An adapter imports no use case (docs/architecture.md): the two shapes it needs from letters are restated here. */
export type ExportLanguage = "de-DE" | "en-GB";
export type ExportSection = { title: string; text: string };

export type LetterheadLogo = { mime: "image/png" | "image/svg+xml"; data: Uint8Array };

export type Letterhead = {
  practiceName: string;
  /** One line per doctor, with title: "Dr. med. Anna Weber, Fachärztin für Allgemeinmedizin". */
  doctors: string[];
  street: string;
  postalCode: string;
  city: string;
  phone: string;
  email: string;
  /** Betriebsstättennummer and lebenslange Arztnummer, nine digits each, when the practice gives them. */
  bsnr: string | null;
  lanr: string | null;
  /** Sanitised and size-checked before it gets here. */
  logo: LetterheadLogo | null;
  /** "Mit freundlichen Grüßen" / "Kind regards". */
  closing: string;
  /** The signature block under the closing, one line each: name, title. */
  signature: string[];
};

export type ExportRecipient = {
  /** "Herrn Dr. med. Peter Braun" — as it goes into the address field. */
  name: string;
  /** Street, postal code and city, one line each (at most four lines fit the DIN 5008 field). */
  addressLines: string[];
};

export type ExportPatient = { name: string; /** ISO date, yyyy-mm-dd. */ birthDate: string | null };

export type ExportLabels = {
  /** "Seite {{page}} von {{pages}}". */
  page: (page: number, pages: number) => string;
  /** "Patient/in", "Patient". */
  patient: string;
  /** "geb.", "born". */
  born: string;
  /** "Datum", "Date". */
  date: string;
  phone: string;
  email: string;
  bsnr: string;
  lanr: string;
};

export type ExportLetter = {
  language: ExportLanguage;
  letterhead: Letterhead;
  recipient: ExportRecipient;
  patient: ExportPatient;
  subject: string;
  /** ISO date, yyyy-mm-dd. */
  date: string;
  /** Only the sections the letter sends, in the template's order: the use case leaves out those that say
   * "Keine Informationen gefunden", as the SPEC's text-view copy does — the recipient learns nothing from them. */
  sections: ExportSection[];
  labels: ExportLabels;
};

/** "27.11.2026" or "27/11/2026": the date as the letter's language writes it. */
export function formatLetterDate(iso: string, language: ExportLanguage): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  if (!match) return iso;
  const [, y, m, d] = match;
  return language === "en-GB" ? `${d}/${m}/${y}` : `${d}.${m}.${y}`;
}
