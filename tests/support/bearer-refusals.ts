import { getDb } from "~/models/db.server";

// What a refused bearer token leaves behind, for the tests of the API door's refusals (bearer-acr, api-scope): the
// denied audit rows of one action, and the saved prompts, which a refused POST /api/prompts must not have added.

export async function deniedAudits(action: string) {
  return getDb()
    .selectFrom("audit_events")
    .where("action", "=", action)
    .where("outcome", "=", "denied")
    .select("user_id")
    .orderBy("id")
    .execute();
}

export async function promptTitles() {
  const rows = await getDb().selectFrom("saved_prompts").select("title").execute();
  return rows.map((r) => r.title);
}
