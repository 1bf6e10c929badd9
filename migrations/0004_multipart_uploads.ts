import { sql, type Kysely } from "kysely";

// Resumable uploads (issue 4): a slot may carry an open multipart upload of the object store. The part size
// and count are fixed when the upload starts, so a resuming client and the completion check agree on them.

export async function up(db: Kysely<unknown>) {
  await db.schema
    .alterTable("recordings")
    .addColumn("multipart_upload_id", "text")
    .addColumn("multipart_part_size", "integer")
    .addColumn("multipart_part_count", "integer")
    .addColumn("declared_size", "bigint")
    .execute();
  await db.schema
    .alterTable("recordings")
    .addCheckConstraint(
      "recordings_multipart_complete",
      sql`(multipart_upload_id is null) = (multipart_part_size is null)
          and (multipart_upload_id is null) = (multipart_part_count is null)`,
    )
    .execute();
}

export async function down(db: Kysely<unknown>) {
  await db.schema.alterTable("recordings").dropConstraint("recordings_multipart_complete").execute();
  await db.schema
    .alterTable("recordings")
    .dropColumn("declared_size")
    .dropColumn("multipart_part_count")
    .dropColumn("multipart_part_size")
    .dropColumn("multipart_upload_id")
    .execute();
}
