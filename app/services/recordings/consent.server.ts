import type { Consent, ConsentGivenBy, ConsentKind, ConsentReading, ConsentRecord } from "~/models/consent-rules";
import { getConfig } from "../config/config.server";
import { DomainError } from "../web/domain-error.server";

// The server's side of the patient's consent (issue 22): a consent read from a form or the JSON API becomes a record
// of who confirmed it and when; where the operator requires it (CONSENT_REQUIRED=1), no audio is accepted without.

/**
 * What to store with a new recording or live session: the consent the user confirmed now, or null when none was
 * given and none is required. Throws the translated refusal for an unreadable or a missing required consent.
 */
export function confirmConsent(userId: string, reading: ConsentReading, at = new Date()): ConsentRecord | null {
  if (!reading.ok) throw new DomainError("invalid", reading.message);
  if (!reading.value) {
    if (getConfig().consentRequired) throw new DomainError("invalid", "recordings:consent.required");
    return null;
  }
  return recordOf(userId, reading.value, at);
}

export function recordOf(userId: string, consent: Consent, at = new Date()): ConsentRecord {
  return { ...consent, confirmedBy: userId, confirmedAt: at };
}

type Translate = (key: string, values?: Record<string, string>) => string;

/**
 * What a list or a letter says of a recording's consent: "Einwilligung mündlich erteilt von der Patientin / dem
 * Patienten – bestätigt am 27.11.2026, 09:12", or null when it was not documented (the page then marks it).
 */
export function consentSummary(
  t: Translate,
  row: { consent_kind: ConsentKind | null; consent_given_by: ConsentGivenBy | null; consent_confirmed_at: Date | null },
  formatDate: (value: Date) => string,
): string | null {
  if (!row.consent_kind || !row.consent_given_by || !row.consent_confirmed_at) return null;
  return t("recordings:consent.summary", {
    kind: t(`recordings:consent.kinds.${row.consent_kind}`),
    givenBy: t(`recordings:consent.givers.${row.consent_given_by}`),
    date: formatDate(row.consent_confirmed_at),
  });
}
