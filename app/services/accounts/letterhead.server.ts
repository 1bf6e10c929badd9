import { letterheadFieldsSchema, type LetterheadFields } from "~/components/letterhead/schema";
import {
  deleteLetterhead,
  findLetterhead,
  findLetterheadLogo,
  findLetterheadWithLogo,
  removeLetterheadLogo,
  saveLetterhead,
  type LetterheadOwner,
} from "~/models/letterhead.server";
import { getUserById } from "~/models/user.server";
import { auditLetterhead, type LetterheadAction } from "../audit/events.server";
import type { ExportLanguage, Letterhead } from "../letter-export/export-letter";
import { isOperator } from "../web/auth.server";
import { DomainError } from "../web/domain-error.server";
import { checkLogo } from "./letterhead-logo.server";

// Letterheads (issue 25): the doctor's own in Settings › "Briefkopf", and one for the whole practice that an admin
// sets. A letter goes out on the doctor's own letterhead, else on the practice's, else on defaults made from the
// doctor's name (letterheadFor). Every function decides first whose letterhead it may touch: a user's is found by
// the caller's id alone (no id from a form is ever taken), the practice's only for an operator admin. Saving and
// removing are audited by the letterhead's id — who and when, never what it says (ADR 0035).

export type LetterheadSource = "own" | "practice" | "defaults";

/** What a logo upload brought: checked bytes, a refusal to report, or nothing (the stored logo stays). */
export type LogoUpload = { data: Uint8Array } | null;

const CLOSING: Record<ExportLanguage, string> = {
  "de-DE": "Mit freundlichen Grüßen",
  "en-GB": "Kind regards",
};

type Row = NonNullable<Awaited<ReturnType<typeof findLetterheadWithLogo>>>;

async function displayNameOf(userId: string) {
  const user = await getUserById({ id: userId });
  return user?.name?.trim() || user?.email?.trim() || "";
}

function lettered(row: Row, name: string, language: ExportLanguage): Letterhead {
  return {
    practiceName: row.practice_name,
    doctors: [...row.doctors],
    street: row.street,
    postalCode: row.postal_code,
    city: row.city,
    phone: row.phone,
    email: row.email,
    bsnr: row.bsnr,
    lanr: row.lanr,
    logo: row.logo && row.logo_mime ? { mime: row.logo_mime, data: new Uint8Array(row.logo) } : null,
    // Left empty, the closing is the letter's language's and the signature the signing doctor's name.
    closing: row.closing || CLOSING[language],
    signature: row.signature.length > 0 ? [...row.signature] : name ? [name] : [],
  };
}

/** The letterhead a letter of this user goes out on: their own, else the practice's, else the defaults. */
export async function letterheadFor(args: { userId: string; language: "de-DE" | "en-GB" }): Promise<Letterhead> {
  const name = await displayNameOf(args.userId);
  const row =
    (await findLetterheadWithLogo({ ownerId: args.userId })) ?? (await findLetterheadWithLogo("practice")) ?? null;
  if (row) return lettered(row, name, args.language);
  return {
    practiceName: "",
    doctors: name ? [name] : [],
    street: "",
    postalCode: "",
    city: "",
    phone: "",
    email: "",
    bsnr: null,
    lanr: null,
    logo: null,
    closing: CLOSING[args.language],
    signature: name ? [name] : [],
  };
}

/** A letterhead as its form shows it: lines one under the other, and whether (and since when) there is a logo. */
export type LetterheadFormValues = {
  practiceName: string;
  doctors: string;
  street: string;
  postalCode: string;
  city: string;
  phone: string;
  email: string;
  bsnr: string;
  lanr: string;
  closing: string;
  signature: string;
};

export type LetterheadView = {
  values: LetterheadFormValues;
  /** The logo's type and a version for the preview's address (its last change), or null. */
  logo: { mime: string; version: string } | null;
} | null;

const EMPTY_VALUES: LetterheadFormValues = {
  practiceName: "",
  doctors: "",
  street: "",
  postalCode: "",
  city: "",
  phone: "",
  email: "",
  bsnr: "",
  lanr: "",
  closing: "",
  signature: "",
};

async function viewOf(owner: LetterheadOwner): Promise<LetterheadView> {
  const row = await findLetterhead(owner);
  if (!row) return null;
  return {
    values: {
      practiceName: row.practice_name,
      doctors: row.doctors.join("\n"),
      street: row.street,
      postalCode: row.postal_code,
      city: row.city,
      phone: row.phone,
      email: row.email,
      bsnr: row.bsnr ?? "",
      lanr: row.lanr ?? "",
      closing: row.closing,
      signature: row.signature.join("\n"),
    },
    logo: row.logo_mime ? { mime: row.logo_mime, version: String(new Date(row.updated_at).getTime()) } : null,
  };
}

/** Settings › "Briefkopf": the user's own letterhead (or empty fields), and which one their letters use. */
export async function readOwnLetterhead(args: { userId: string }) {
  const [own, practice] = await Promise.all([viewOf({ ownerId: args.userId }), findLetterhead("practice")]);
  const source: LetterheadSource = own ? "own" : practice ? "practice" : "defaults";
  return {
    letterhead: own,
    values: own?.values ?? EMPTY_VALUES,
    source,
    practiceHasLogo: Boolean(practice?.logo_mime),
  };
}

type Write = { fields: LetterheadFields; logo: LogoUpload; request: Request };

/** Parsed again here, whoever called: the rules of the form are the rules of the row. */
function valuesOf(fields: LetterheadFields) {
  const parsed = letterheadFieldsSchema.safeParse({
    ...fields,
    doctors: fields.doctors.join("\n"),
    signature: fields.signature.join("\n"),
    bsnr: fields.bsnr ?? "",
    lanr: fields.lanr ?? "",
  });
  if (!parsed.success) throw new DomainError("invalid", "account:letterhead.errors.invalid");
  return parsed.data;
}

async function save(owner: LetterheadOwner, args: Write & { userId: string }, action: LetterheadAction) {
  const values = valuesOf(args.fields);
  const logo = args.logo ? checkLogo(args.logo.data) : undefined;
  const id = await saveLetterhead(owner, values, logo);
  await auditLetterhead(args.request, args.userId, action, id);
  return id;
}

export async function saveOwnLetterhead(args: Write & { userId: string }) {
  return save({ ownerId: args.userId }, args, "letterhead.update");
}

/** The logo off the user's letterhead; false when there was none. */
export async function removeOwnLetterheadLogo(args: { userId: string; request: Request }) {
  const id = await removeLetterheadLogo({ ownerId: args.userId });
  if (id) await auditLetterhead(args.request, args.userId, "letterhead.update", id);
  return Boolean(id);
}

/** The user's letterhead gone: their letters use the practice's or the defaults again. False when there was none. */
export async function removeOwnLetterhead(args: { userId: string; request: Request }) {
  const id = await deleteLetterhead({ ownerId: args.userId });
  if (id) await auditLetterhead(args.request, args.userId, "letterhead.remove", id);
  return Boolean(id);
}

/** The user's own logo for the preview: owner-scoped, so there is no id to guess. */
export async function ownLetterheadLogo(args: { userId: string }) {
  return findLetterheadLogo({ ownerId: args.userId });
}

/** The practice's logo: every signed-in user's letters may carry it, so every signed-in user may see it. */
export async function practiceLetterheadLogo() {
  return findLetterheadLogo("practice");
}

// The practice's letterhead: only an operator admin (the admin area's gate) reads or changes it. The admin pages
// are gated already; the check is repeated here so no other door can reach it.

type Admin = { id: string; email: string | null; emailVerified: boolean };

function requireAdmin(admin: Admin) {
  if (!isOperator(admin)) throw new DomainError("forbidden", "admin:letterhead.forbidden");
}

export async function readPracticeLetterhead(args: { admin: Admin }) {
  requireAdmin(args.admin);
  const practice = await viewOf("practice");
  return { letterhead: practice, values: practice?.values ?? EMPTY_VALUES };
}

export async function savePracticeLetterhead(args: Write & { admin: Admin }) {
  requireAdmin(args.admin);
  return save("practice", { ...args, userId: args.admin.id }, "letterhead.practice.update");
}

export async function removePracticeLetterheadLogo(args: { admin: Admin; request: Request }) {
  requireAdmin(args.admin);
  const id = await removeLetterheadLogo("practice");
  if (id) await auditLetterhead(args.request, args.admin.id, "letterhead.practice.update", id);
  return Boolean(id);
}

export async function removePracticeLetterhead(args: { admin: Admin; request: Request }) {
  requireAdmin(args.admin);
  const id = await deleteLetterhead("practice");
  if (id) await auditLetterhead(args.request, args.admin.id, "letterhead.practice.remove", id);
  return Boolean(id);
}
