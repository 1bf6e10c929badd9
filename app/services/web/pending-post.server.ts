import { randomBytes } from "node:crypto";
import { getDb } from "../../models/db.server";

// "A form posted after expiry is kept, the user signs in again and the post goes
// through" (issue 2). The url-encoded body is kept for one hour, bound to the
// user of the expired session: only that user, signed in again, gets it back.
// File uploads never pass through here: they go to object storage directly.

const KEEP_MS = 60 * 60 * 1000;
const MAX_BODY_BYTES = 256 * 1024;

export async function keepPendingPost(args: { userId: string; request: Request }) {
  const type = args.request.headers.get("Content-Type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded")) return null;
  const body = await args.request.text();
  if (body.length === 0 || body.length > MAX_BODY_BYTES) return null;
  const url = new URL(args.request.url);
  const id = randomBytes(18).toString("base64url");
  await getDb()
    .insertInto("pending_posts")
    .values({
      id,
      user_id: args.userId,
      path: `${url.pathname}${url.search}`,
      body,
      expires_at: new Date(Date.now() + KEEP_MS),
    })
    .execute();
  return id;
}

/** Read without consuming: a reload of the resume page must not lose the form. */
export async function findPendingPost({ id, userId }: { id: string; userId: string }) {
  const row = await getDb()
    .selectFrom("pending_posts")
    .where("id", "=", id)
    .where("user_id", "=", userId)
    .where("expires_at", ">", new Date())
    .select(["path", "body"])
    .executeTakeFirst();
  if (!row) return null;
  return { path: row.path, fields: [...new URLSearchParams(row.body)] };
}

export async function deleteExpiredPendingPosts(now = new Date()) {
  const result = await getDb().deleteFrom("pending_posts").where("expires_at", "<=", now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** True when this user's kept form was there to discard. */
export async function discardPendingPost({ id, userId }: { id: string; userId: string }) {
  const result = await getDb()
    .deleteFrom("pending_posts")
    .where("id", "=", id)
    .where("user_id", "=", userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
