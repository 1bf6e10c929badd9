import { sql } from "kysely";
import { getDb } from "~/models/db.server";

// The export details a doctor chose to keep with a letter (migration 0024, issue 25), scoped by owner (STYLE.md §2).

export type StoredExportDetails = {
  recipientName: string;
  recipientAddress: string[];
  patientName: string;
  patientBirthDate: string | null;
  subject: string;
  date: string | null;
};

export async function findExportDetails(args: { ownerId: string; letterId: string }) {
  const row = await getDb()
    .selectFrom("letter_export_details")
    .where("owner_id", "=", args.ownerId)
    .where("letter_id", "=", args.letterId)
    .selectAll()
    .executeTakeFirst();
  if (!row) return null;
  return {
    recipientName: row.recipient_name,
    recipientAddress: row.recipient_address,
    patientName: row.patient_name,
    patientBirthDate: row.patient_birth_date,
    subject: row.subject,
    date: row.letter_date,
  } satisfies StoredExportDetails;
}

export async function keepExportDetails(args: { ownerId: string; letterId: string; details: StoredExportDetails }) {
  const values = {
    recipient_name: args.details.recipientName,
    recipient_address: JSON.stringify(args.details.recipientAddress),
    patient_name: args.details.patientName,
    patient_birth_date: args.details.patientBirthDate,
    subject: args.details.subject,
    letter_date: args.details.date,
  };
  await getDb()
    .insertInto("letter_export_details")
    .values({ letter_id: args.letterId, owner_id: args.ownerId, ...values })
    .onConflict((oc) => oc.column("letter_id").doUpdateSet({ ...values, updated_at: sql`now()` }))
    .execute();
}
