import { sql } from "kysely";
import { getDb } from "~/models/db.server";
import type { LetterheadLogoType } from "./schema";

// Letterheads (migration 0023): one per user, scoped by owner (STYLE.md §2), and at most one for the practice
// (owner_id null). Which one a caller may read or write is the service's decision (accounts/letterhead.server.ts);
// these queries only take it as given: `{ ownerId }` for a user's, `"practice"` for the practice's.

export type LetterheadOwner = { ownerId: string } | "practice";

export type LetterheadValues = {
  practiceName: string;
  doctors: string[];
  street: string;
  postalCode: string;
  city: string;
  phone: string;
  email: string;
  bsnr: string | null;
  lanr: string | null;
  closing: string;
  signature: string[];
};

const TEXT_COLUMNS = [
  "id",
  "practice_name",
  "doctors",
  "street",
  "postal_code",
  "city",
  "phone",
  "email",
  "bsnr",
  "lanr",
  "closing",
  "signature",
  "logo_mime",
  "updated_at",
] as const;

function scoped(owner: LetterheadOwner) {
  const query = getDb().selectFrom("letterheads");
  return owner === "practice"
    ? query.where("scope", "=", "practice").where("owner_id", "is", null)
    : query.where("scope", "=", "user").where("owner_id", "=", owner.ownerId);
}

/** The letterhead's fields and the logo's type (not its bytes). */
export async function findLetterhead(owner: LetterheadOwner) {
  return scoped(owner).select(TEXT_COLUMNS).executeTakeFirst();
}

/** The letterhead with its logo's bytes, as a letter is written with it. */
export async function findLetterheadWithLogo(owner: LetterheadOwner) {
  return scoped(owner)
    .select([...TEXT_COLUMNS, "logo"])
    .executeTakeFirst();
}

export async function findLetterheadLogo(owner: LetterheadOwner) {
  const row = await scoped(owner).select(["logo", "logo_mime", "updated_at"]).executeTakeFirst();
  return row?.logo && row.logo_mime ? { data: row.logo, mime: row.logo_mime, updatedAt: row.updated_at } : null;
}

function columnsOf(values: LetterheadValues) {
  return {
    practice_name: values.practiceName,
    doctors: JSON.stringify(values.doctors),
    street: values.street,
    postal_code: values.postalCode,
    city: values.city,
    phone: values.phone,
    email: values.email,
    bsnr: values.bsnr,
    lanr: values.lanr,
    closing: values.closing,
    signature: JSON.stringify(values.signature),
  };
}

/**
 * Writes the letterhead, made if there is none. `logo`: a checked logo replaces the stored one; undefined keeps it.
 * One statement (insert … on conflict), so two saves at once leave one row.
 */
export async function saveLetterhead(
  owner: LetterheadOwner,
  values: LetterheadValues,
  logo?: { data: Uint8Array; mime: LetterheadLogoType },
) {
  const columns = { ...columnsOf(values), ...(logo ? { logo: logo.data, logo_mime: logo.mime } : {}) };
  const insert = getDb()
    .insertInto("letterheads")
    .values({
      ...columns,
      scope: owner === "practice" ? "practice" : "user",
      owner_id: owner === "practice" ? null : owner.ownerId,
    });
  const update = { ...columns, updated_at: sql<Date>`now()` };
  const row = await (
    owner === "practice"
      ? // The partial unique index on the practice scope (migration 0023) is the conflict's arbiter.
        insert.onConflict((oc) => oc.column("scope").where("scope", "=", sql.lit("practice")).doUpdateSet(update))
      : insert.onConflict((oc) => oc.column("owner_id").doUpdateSet(update))
  )
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Drops the logo; the id of the letterhead whose logo it was, or undefined when there was none. */
export async function removeLetterheadLogo(owner: LetterheadOwner) {
  const id = (await findLetterhead(owner))?.id;
  if (!id) return undefined;
  const row = await getDb()
    .updateTable("letterheads")
    .set({ logo: null, logo_mime: null, updated_at: sql<Date>`now()` })
    .where("id", "=", id)
    .where("logo", "is not", null)
    .returning("id")
    .executeTakeFirst();
  return row?.id;
}

/** Deletes the letterhead; its id, or undefined when there was none. */
export async function deleteLetterhead(owner: LetterheadOwner) {
  let query = getDb().deleteFrom("letterheads");
  query =
    owner === "practice"
      ? query.where("scope", "=", "practice").where("owner_id", "is", null)
      : query.where("scope", "=", "user").where("owner_id", "=", owner.ownerId);
  const row = await query.returning("id").executeTakeFirst();
  return row?.id;
}
