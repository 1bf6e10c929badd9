import { randomBytes } from "node:crypto";
import {
  customTemplateNameTaken,
  deleteCustomTemplateRow,
  getCustomTemplate,
  insertCustomTemplate,
} from "~/models/template.server";
import { customTemplateInputSchema, type TemplateLanguage } from "~/models/template-rules";
import { DomainError } from "./domain-error.server";
import { getSystemTemplate } from "./system-templates.server";
import { assertUserTemplatesEnabled, assignElementIds } from "./templates.server";

// Custom templates: created and deleted by their owner only (SPEC §6).

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
    await insertCustomTemplate({
      ownerId: args.userId,
      templateId,
      language: args.language,
      name: input.name,
      description: input.description,
      elements,
      prompt: input.prompt,
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
