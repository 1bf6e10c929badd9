import { getDb } from "~/models/db.server";

// PDFs uploaded as context and not yet read, scoped by owner.

export async function insertContextUpload(args: { key: string; ownerId: string; fileName: string }) {
  await getDb()
    .insertInto("context_uploads")
    .values({ storage_key: args.key, owner_id: args.ownerId, file_name: args.fileName })
    .execute();
}

export async function findContextUploads({ ownerId, keys }: { ownerId: string; keys: string[] }) {
  return getDb()
    .selectFrom("context_uploads")
    .where("owner_id", "=", ownerId)
    .where("storage_key", "in", keys)
    .select(["storage_key", "file_name"])
    .execute();
}

export async function deleteContextUploads({ ownerId, keys }: { ownerId: string; keys: string[] }) {
  await getDb()
    .deleteFrom("context_uploads")
    .where("owner_id", "=", ownerId)
    .where("storage_key", "in", keys)
    .execute();
}

/** Maintenance across owners: uploads never read. */
export async function listStaleContextUploads({ before }: { before: Date }) {
  return getDb().selectFrom("context_uploads").where("created_at", "<", before).select("storage_key").execute();
}

export async function deleteContextUploadByKey({ key }: { key: string }) {
  await getDb().deleteFrom("context_uploads").where("storage_key", "=", key).execute();
}
