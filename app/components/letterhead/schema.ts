import { z } from "zod";
import { intentForms, textField } from "~/components/forms/fields";

// The letterhead form (issue 25), one schema for the doctor's own letterhead (Settings › "Briefkopf") and the
// practice's (the admin page): the page's fields, their limits and the refusals as i18n keys of the account
// namespace, read by the action and by the service before anything is written. The logo is no field of it: it
// arrives as a file part and is checked by letterhead-logo.server.ts. The limits keep a letterhead inside the DIN 5008
// head of a page (and the database's checks, migration 0023, restate them).

export const LETTERHEAD_LIMITS = {
  practiceName: 120,
  /** One doctor's or signature line. */
  line: 120,
  doctors: 6,
  signature: 4,
  street: 120,
  postalCode: 10,
  city: 80,
  phone: 40,
  email: 254,
  closing: 80,
  logoBytes: 256 * 1024,
  /** Width and height of a PNG logo, each. */
  logoPixels: 2000,
} as const;

export const LETTERHEAD_INTENT = { save: "save", removeLogo: "remove-logo", remove: "remove" } as const;

const ERR = "account:letterhead.errors";

/** The refusals a field can get, as i18n keys; `max` and `lines` are filled in from LETTERHEAD_LIMITS. */
export const LETTERHEAD_ERRORS = {
  tooLong: `${ERR}.tooLong`,
  invalidCharacters: `${ERR}.invalidCharacters`,
  tooManyLines: `${ERR}.tooManyLines`,
  lineTooLong: `${ERR}.lineTooLong`,
  postalCode: `${ERR}.postalCode`,
  phone: `${ERR}.phone`,
  email: `${ERR}.email`,
  nineDigits: `${ERR}.nineDigits`,
} as const;

/** Control and format characters, and line or paragraph separators: nothing a printed line holds. */
const UNPRINTABLE = /\p{Cc}|\p{Cf}|[\u2028\u2029]/u;

function clean(value: string) {
  return value.normalize("NFC").trim();
}

// Checks run as refinements of the text as read, never as a second z.string() piped after it: conform's zod
// coercion reads an empty string in any z.string() as missing, and an empty field here is an answer, not an omission.

/** One line of text: trimmed, at most `max` characters, nothing unprintable, and `pattern` when given. */
function line(max: number, pattern?: { test: RegExp; message: string }) {
  return textField()
    .transform(clean)
    .superRefine((value, ctx) => {
      if (value.length > max) ctx.addIssue({ code: "custom", message: LETTERHEAD_ERRORS.tooLong });
      else if (UNPRINTABLE.test(value)) ctx.addIssue({ code: "custom", message: LETTERHEAD_ERRORS.invalidCharacters });
      else if (value && pattern && !pattern.test.test(value))
        ctx.addIssue({ code: "custom", message: pattern.message });
    });
}

/** Lines typed one under the other: empty ones dropped, at most `count` of at most LETTERHEAD_LIMITS.line each. */
function lines(count: number) {
  return textField()
    .transform((value) =>
      value
        .split(/\r\n|\r|\n/)
        .map(clean)
        .filter(Boolean),
    )
    .superRefine((all, ctx) => {
      if (all.length > count) ctx.addIssue({ code: "custom", message: LETTERHEAD_ERRORS.tooManyLines });
      else if (all.some((one) => one.length > LETTERHEAD_LIMITS.line))
        ctx.addIssue({ code: "custom", message: LETTERHEAD_ERRORS.lineTooLong });
      else if (all.some((one) => UNPRINTABLE.test(one)))
        ctx.addIssue({ code: "custom", message: LETTERHEAD_ERRORS.invalidCharacters });
    });
}

/** BSNR or LANR: nine digits (spaces typed between groups are dropped), or nothing. */
function nineDigits() {
  return textField()
    .transform((value) => value.replace(/\s+/g, ""))
    .superRefine((value, ctx) => {
      if (!/^(\d{9})?$/.test(value)) ctx.addIssue({ code: "custom", message: LETTERHEAD_ERRORS.nineDigits });
    })
    .transform((value) => value || null);
}

export const letterheadFieldsSchema = z.object({
  practiceName: line(LETTERHEAD_LIMITS.practiceName),
  doctors: lines(LETTERHEAD_LIMITS.doctors),
  street: line(LETTERHEAD_LIMITS.street),
  postalCode: line(LETTERHEAD_LIMITS.postalCode, {
    test: /^[\p{L}\p{N}][\p{L}\p{N} -]*$/u,
    message: LETTERHEAD_ERRORS.postalCode,
  }),
  city: line(LETTERHEAD_LIMITS.city),
  phone: line(LETTERHEAD_LIMITS.phone, { test: /^[0-9+()/ .-]*$/, message: LETTERHEAD_ERRORS.phone }),
  email: line(LETTERHEAD_LIMITS.email, { test: /^[^\s@]+@[^\s@]+\.[^\s@]+$/, message: LETTERHEAD_ERRORS.email }),
  bsnr: nineDigits(),
  lanr: nineDigits(),
  closing: line(LETTERHEAD_LIMITS.closing),
  signature: lines(LETTERHEAD_LIMITS.signature),
});

export type LetterheadFields = z.output<typeof letterheadFieldsSchema>;
export type LetterheadField = keyof LetterheadFields;

export const letterheadActionSchema = intentForms([
  letterheadFieldsSchema.extend({ intent: z.literal(LETTERHEAD_INTENT.save) }),
  z.object({ intent: z.literal(LETTERHEAD_INTENT.removeLogo) }),
  z.object({ intent: z.literal(LETTERHEAD_INTENT.remove) }),
]);

/** The values a field's refusal names: its length limit, or how many lines it takes. */
export function letterheadErrorValues(field: string): Record<string, string> {
  const limits: Record<string, number> = LETTERHEAD_LIMITS;
  if (field === "doctors" || field === "signature")
    return { lines: String(limits[field]), max: String(LETTERHEAD_LIMITS.line) };
  return field in limits ? { max: String(limits[field]) } : {};
}
