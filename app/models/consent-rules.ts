// The patient's consent to a recording (issue 22; GDPR Art. 9, §203 StGB): the doctor confirms that the patient —
// or the patient's legal representative — agreed, orally or in writing, before audio is accepted. Pure rules,
// shared by the pages (form fields) and the JSON API (`consent: { kind, given_by }`); the server adds who confirmed
// and when. No consent at all is allowed unless the operator requires it (CONSENT_REQUIRED): the recording is then
// marked "Einwilligung nicht dokumentiert".

export const consentKinds = ["oral", "written"] as const;
export const consentGivers = ["patient", "representative"] as const;
export type ConsentKind = (typeof consentKinds)[number];
export type ConsentGivenBy = (typeof consentGivers)[number];

export type Consent = { kind: ConsentKind; givenBy: ConsentGivenBy };

/** A consent as stored with a recording: the confirming user and the moment, added by the server. */
export type ConsentRecord = Consent & { confirmedBy: string; confirmedAt: Date };

export type ConsentReading = { ok: true; value: Consent | null } | { ok: false; message: string };

const invalid: ConsentReading = { ok: false, message: "recordings:consent.invalid" };

function pick<T extends string>(allowed: readonly T[], value: unknown): T | undefined {
  return typeof value === "string" && (allowed as readonly string[]).includes(value) ? (value as T) : undefined;
}

/**
 * The JSON API's `consent`: absent or null → none; `{ kind: "oral" | "written", given_by: "patient" |
 * "representative" }` → that consent (given_by defaults to the patient); anything else is refused, never guessed.
 */
export function readConsent(value: unknown): ConsentReading {
  if (value === undefined || value === null) return { ok: true, value: null };
  if (typeof value !== "object" || Array.isArray(value)) return invalid;
  const fields = value as Record<string, unknown>;
  const kind = pick(consentKinds, fields.kind);
  const givenBy = fields.given_by === undefined ? "patient" : pick(consentGivers, fields.given_by);
  if (!kind || !givenBy) return invalid;
  return { ok: true, value: { kind, givenBy } };
}

/** The form's fields `consentKind` ("" for none) and `consentGivenBy`, as the pages post them. */
export function readConsentForm(form: { get(name: string): unknown }): ConsentReading {
  const kind = form.get("consentKind");
  if (kind === null || kind === undefined || kind === "") return { ok: true, value: null };
  return readConsent({ kind, given_by: form.get("consentGivenBy") || undefined });
}

/** The four columns of a recording (or the three of a live session) for a consent record, or all null. */
export function consentColumns(record: ConsentRecord | null) {
  return {
    consent_kind: record?.kind ?? null,
    consent_given_by: record?.givenBy ?? null,
    consent_confirmed_by: record?.confirmedBy ?? null,
    consent_confirmed_at: record?.confirmedAt ?? null,
  };
}
