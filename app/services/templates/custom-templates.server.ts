import { randomBytes } from "node:crypto";
import { lockUser } from "~/models/saved-prompt.server";
import {
  countCustomTemplates,
  customTemplateNameTaken,
  deleteCustomTemplateRow,
  getCustomTemplate,
  insertCustomTemplate,
} from "~/models/template.server";
import { customTemplateInputSchema, type TemplateLanguage } from "~/models/template-rules";
import { getDb } from "../../models/db.server";
import { DomainError } from "../web/domain-error.server";
import { getSystemTemplate } from "./system-templates.server";
import { assertUserTemplatesEnabled, assignElementIds } from "./templates.server";

// Custom templates: created and deleted by their owner only (SPEC §6).

/**
 * At most this many custom templates per user and template language (README "Templates", docs/security.md
 * 2.4.1). SPEC names no cap, but without one a script filled a settings screen, which renders every custom template
 * as a card with its editor, until it took seconds per request. 20 is more than the whole system repository (15
 * templates in five groups), so a clinician's own letter types fit with room to spare. The count is checked under
 * a lock on the user's row, so two tabs cannot both create the twenty-first.
 */
export const MAX_CUSTOM_TEMPLATES = 20;

/** Whether this user's templates of this language are at the cap (the screens then offer no creation). */
export async function customTemplatesAtLimit(args: { userId: string; language: TemplateLanguage }) {
  return (
    (await countCustomTemplates(getDb(), { ownerId: args.userId, language: args.language })) >= MAX_CUSTOM_TEMPLATES
  );
}

const TEMPLATE_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export async function createCustomTemplate(args: {
  userId: string;
  language: TemplateLanguage;
  templateId?: string | null;
  name: unknown;
  description?: unknown;
  elements: unknown;
  prompt: unknown;
}) {
  assertUserTemplatesEnabled();
  const parsed = customTemplateInputSchema.safeParse({
    name: args.name,
    description: args.description ?? "",
    elements: args.elements,
    prompt: args.prompt ?? "",
  });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path, message: i.message }));
    throw new DomainError("invalid", issues[0]?.message ?? "templates:errors.invalidStructure", issues);
  }
  const input = parsed.data;
  if (await customTemplateNameTaken({ ownerId: args.userId, language: args.language, name: input.name })) {
    throw new DomainError("invalid", "templates:errors.templateNameDuplicate", [
      { path: ["name"], message: "templates:errors.templateNameDuplicate" },
    ]);
  }
  // The client may propose an id (SPEC §7); it must be well-formed and free, and
  // never shadow a system template. Otherwise the server makes one.
  const requested = args.templateId?.trim();
  const templateId =
    requested && TEMPLATE_ID.test(requested) && !getSystemTemplate(requested, args.language)
      ? requested
      : `custom-${randomBytes(6).toString("hex")}`;
  if (await getCustomTemplate({ ownerId: args.userId, templateId, language: args.language })) {
    throw new DomainError("conflict", "templates:errors.templateIdTaken");
  }
  const elements = assignElementIds(input.elements, [], []);
  try {
    await getDb()
      .transaction()
      .execute(async (trx) => {
        await lockUser(trx, args.userId);
        const count = await countCustomTemplates(trx, { ownerId: args.userId, language: args.language });
        if (count >= MAX_CUSTOM_TEMPLATES) {
          throw new DomainError("conflict", "templates:errors.templateLimit", [], {
            max: String(MAX_CUSTOM_TEMPLATES),
          });
        }
        await insertCustomTemplate(trx, {
          ownerId: args.userId,
          templateId,
          language: args.language,
          name: input.name,
          description: input.description,
          elements,
          prompt: input.prompt,
        });
      });
  } catch (error) {
    // Two creations racing past the check above meet the unique index.
    if ((error as { code?: string }).code === "23505")
      throw new DomainError("invalid", "templates:errors.templateNameDuplicate", [
        { path: ["name"], message: "templates:errors.templateNameDuplicate" },
      ]);
    throw error;
  }
  return { templateId };
}

export async function deleteCustomTemplate(args: { userId: string; templateId: string; language: TemplateLanguage }) {
  const deleted = await deleteCustomTemplateRow({
    ownerId: args.userId,
    templateId: args.templateId,
    language: args.language,
  });
  if (!deleted) throw new DomainError("not_found", "templates:errors.templateNotFound");
}
