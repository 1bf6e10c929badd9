import { sql, type Kysely, type Transaction } from "kysely";
import { getDb } from "~/models/db.server";
import type { Database, StoredElement } from "./schema";
import type { TemplateLanguage } from "./template-rules";

// Per-user template data, always scoped by the owner (STYLE.md §2).

export async function getCollectionChanges({ userId, language }: { userId: string; language: TemplateLanguage }) {
  return getDb()
    .selectFrom("user_template_collection")
    .where("user_id", "=", userId)
    .where("language_code", "=", language)
    .select(["template_id", "state"])
    .execute();
}

export async function setCollectionState(args: {
  userId: string;
  templateId: string;
  language: TemplateLanguage;
  state: "added" | "removed";
}) {
  await getDb()
    .insertInto("user_template_collection")
    .values({ user_id: args.userId, template_id: args.templateId, language_code: args.language, state: args.state })
    .onConflict((oc) =>
      oc
        .columns(["user_id", "template_id", "language_code"])
        .doUpdateSet({ state: args.state, updated_at: new Date() }),
    )
    .execute();
}

export async function listUserStructures({ userId, language }: { userId: string; language: TemplateLanguage }) {
  return getDb()
    .selectFrom("user_structures")
    .where("user_id", "=", userId)
    .where("language_code", "=", language)
    .select(["template_id", "elements", "prompt", "updated_at"])
    .execute();
}

export async function getUserStructureRow(args: { userId: string; templateId: string; language: TemplateLanguage }) {
  return getDb()
    .selectFrom("user_structures")
    .where("user_id", "=", args.userId)
    .where("template_id", "=", args.templateId)
    .where("language_code", "=", args.language)
    .select(["elements", "prompt"])
    .executeTakeFirst();
}

export async function upsertUserStructure(args: {
  userId: string;
  templateId: string;
  language: TemplateLanguage;
  elements: StoredElement[];
  prompt: string;
}) {
  const elements = JSON.stringify(args.elements);
  await getDb()
    .insertInto("user_structures")
    .values({
      user_id: args.userId,
      template_id: args.templateId,
      language_code: args.language,
      elements,
      prompt: args.prompt,
    })
    .onConflict((oc) =>
      oc
        .columns(["user_id", "template_id", "language_code"])
        .doUpdateSet({ elements, prompt: args.prompt, updated_at: new Date() }),
    )
    .execute();
}

export async function deleteUserStructure(args: { userId: string; templateId: string; language: TemplateLanguage }) {
  const result = await getDb()
    .deleteFrom("user_structures")
    .where("user_id", "=", args.userId)
    .where("template_id", "=", args.templateId)
    .where("language_code", "=", args.language)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

const customColumns = ["template_id", "name", "description", "elements", "prompt", "created_at"] as const;

export async function listCustomTemplates({ ownerId, language }: { ownerId: string; language: TemplateLanguage }) {
  return getDb()
    .selectFrom("custom_templates")
    .where("owner_id", "=", ownerId)
    .where("language_code", "=", language)
    .select(customColumns)
    .orderBy("created_at")
    .execute();
}

export async function getCustomTemplate(args: { ownerId: string; templateId: string; language: TemplateLanguage }) {
  return getDb()
    .selectFrom("custom_templates")
    .where("owner_id", "=", args.ownerId)
    .where("template_id", "=", args.templateId)
    .where("language_code", "=", args.language)
    .select(customColumns)
    .executeTakeFirst();
}

export async function customTemplateNameTaken(args: {
  ownerId: string;
  language: TemplateLanguage;
  name: string;
  exceptTemplateId?: string;
}) {
  let query = getDb()
    .selectFrom("custom_templates")
    .where("owner_id", "=", args.ownerId)
    .where("language_code", "=", args.language)
    .where(sql<string>`lower(name)`, "=", args.name.trim().toLowerCase());
  if (args.exceptTemplateId) query = query.where("template_id", "!=", args.exceptTemplateId);
  return (await query.select("template_id").executeTakeFirst()) !== undefined;
}

export async function countCustomTemplates(
  db: Kysely<Database> | Transaction<Database>,
  args: { ownerId: string; language: TemplateLanguage },
) {
  const row = await db
    .selectFrom("custom_templates")
    .where("owner_id", "=", args.ownerId)
    .where("language_code", "=", args.language)
    .select(sql<number>`count(*)::int`.as("count"))
    .executeTakeFirstOrThrow();
  return row.count;
}

export async function insertCustomTemplate(
  db: Kysely<Database> | Transaction<Database>,
  args: {
    ownerId: string;
    templateId: string;
    language: TemplateLanguage;
    name: string;
    description: string;
    elements: StoredElement[];
    prompt: string;
  },
) {
  await db
    .insertInto("custom_templates")
    .values({
      owner_id: args.ownerId,
      template_id: args.templateId,
      language_code: args.language,
      name: args.name,
      description: args.description,
      elements: JSON.stringify(args.elements),
      prompt: args.prompt,
    })
    .execute();
}

export async function updateCustomTemplate(args: {
  ownerId: string;
  templateId: string;
  language: TemplateLanguage;
  elements: StoredElement[];
  prompt: string;
  name?: string;
}) {
  const result = await getDb()
    .updateTable("custom_templates")
    .set({
      elements: JSON.stringify(args.elements),
      prompt: args.prompt,
      ...(args.name ? { name: args.name } : {}),
      updated_at: new Date(),
    })
    .where("owner_id", "=", args.ownerId)
    .where("template_id", "=", args.templateId)
    .where("language_code", "=", args.language)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteCustomTemplateRow(args: {
  ownerId: string;
  templateId: string;
  language: TemplateLanguage;
}) {
  const result = await getDb()
    .deleteFrom("custom_templates")
    .where("owner_id", "=", args.ownerId)
    .where("template_id", "=", args.templateId)
    .where("language_code", "=", args.language)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function getRagAgreed({ userId }: { userId: string }) {
  const row = await getDb().selectFrom("users").where("id", "=", userId).select("rag_agreed").executeTakeFirst();
  return row?.rag_agreed ?? false;
}

export async function setRagAgreed({ userId, agreed }: { userId: string; agreed: boolean }) {
  await getDb()
    .updateTable("users")
    .set({ rag_agreed: agreed, rag_agreed_at: agreed ? new Date() : null })
    .where("id", "=", userId)
    .execute();
}
