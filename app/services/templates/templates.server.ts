import { keptForOwner } from "~/models/owner-cache.server";
import {
  deleteUserStructure,
  getCollectionChanges,
  getCustomTemplate,
  getUserStructureRow,
  listCustomTemplates,
  listUserStructures,
  setCollectionState,
  updateCustomTemplate,
  upsertUserStructure,
} from "~/models/template.server";
import type { StoredElement } from "~/models/schema";
import { elementIdFor, structureInputSchema, type ElementInput, type TemplateLanguage } from "~/models/template-rules";
import { getConfig } from "../config/config.server";
import { DomainError, type DomainIssue } from "../web/domain-error.server";
import {
  DEFAULT_COLLECTION,
  getSystemTemplate,
  listSystemTemplates,
  type Organization,
} from "./system-templates.server";

// The template use cases behind the Settings screens and /api/structure/*.
// System templates come from versioned data; a user's edits, additions and
// removals are rows of their own; custom templates belong to their owner.

export type TemplateView = {
  id: string;
  name: string;
  description: string;
  language: TemplateLanguage;
  organization: Organization | null;
  isSystem: boolean;
  /** A system template whose structure this user changed. */
  isCustomized: boolean;
  elements: StoredElement[];
  prompt: string;
};

/** The templates a user works with, in one language: their collection and their own. */
export async function listUserTemplates({ userId, language }: { userId: string; language: TemplateLanguage }) {
  const [changes, structures, custom] = await keptForOwner(userId, "templates", [language], () =>
    Promise.all([
      getCollectionChanges({ userId, language }),
      listUserStructures({ userId, language }),
      listCustomTemplates({ ownerId: userId, language }),
    ]),
  );
  const collection = effectiveCollection(changes);
  const overrides = new Map(structures.map((s) => [s.template_id, s]));
  const system: TemplateView[] = listSystemTemplates(language)
    .filter((t) => collection.has(t.id))
    .map((t) => {
      const override = overrides.get(t.id);
      return {
        id: t.id,
        name: t.name,
        description: t.description,
        language,
        organization: t.organization,
        isSystem: true,
        isCustomized: Boolean(override),
        elements: override ? override.elements : t.elements,
        prompt: override ? override.prompt : t.prompt,
      };
    });
  const own: TemplateView[] = custom.map((c) => ({
    id: c.template_id,
    name: c.name,
    description: c.description,
    language,
    organization: null,
    isSystem: false,
    isCustomized: false,
    elements: c.elements,
    prompt: c.prompt,
  }));
  return { system, custom: own };
}

function effectiveCollection(changes: { template_id: string; state: "added" | "removed" }[]) {
  const ids = new Set(DEFAULT_COLLECTION);
  for (const change of changes) {
    if (change.state === "added") ids.add(change.template_id);
    else ids.delete(change.template_id);
  }
  return ids;
}

/** SPEC §2 "Template Repository": every listed system template, with whether the user has it. */
export async function getRepository({ userId, language }: { userId: string; language: TemplateLanguage }) {
  const collection = effectiveCollection(await getCollectionChanges({ userId, language }));
  return listSystemTemplates(language).map((t) => ({
    id: t.id,
    name: t.name,
    description: t.description,
    organization: t.organization,
    elementNames: t.elements.map((e) => e.name),
    added: collection.has(t.id),
  }));
}

export function organizationLabel(organization: Organization, t: (key: string) => string) {
  return organization === "partner" ? getConfig().partnerOrgLabel : t(`organizations.${organization}`);
}

function requireListedSystemTemplate(templateId: string, language: TemplateLanguage) {
  const template = getSystemTemplate(templateId, language);
  if (!template || template.hidden) throw new DomainError("not_found", "templates:errors.templateNotFound");
  return template;
}

export function assertUserTemplatesEnabled() {
  if (getConfig().flags.disableUserTemplates)
    throw new DomainError("forbidden", "templates:errors.userTemplatesDisabled");
}

export async function addTemplateAccess(args: { userId: string; templateId: string; language: TemplateLanguage }) {
  assertUserTemplatesEnabled();
  requireListedSystemTemplate(args.templateId, args.language);
  await setCollectionState({ ...args, state: "added" });
}

/** Removing a system template only takes it out of this user's collection (SPEC §6). */
export async function removeTemplateAccess(args: { userId: string; templateId: string; language: TemplateLanguage }) {
  requireListedSystemTemplate(args.templateId, args.language);
  await setCollectionState({ ...args, state: "removed" });
}

/** SPEC §3 "User structure": elements and prompt of one template for this user. */
export async function getUserStructure(args: { userId: string; templateId: string; language: TemplateLanguage }) {
  const system = getSystemTemplate(args.templateId, args.language);
  if (system) {
    const override = await getUserStructureRow(args);
    return {
      isSystem: true,
      isCustomized: Boolean(override),
      name: system.name,
      elements: override ? override.elements : system.elements,
      prompt: override ? override.prompt : system.prompt,
    };
  }
  const custom = await getCustomTemplate({
    ownerId: args.userId,
    templateId: args.templateId,
    language: args.language,
  });
  if (!custom) throw new DomainError("not_found", "templates:errors.templateNotFound");
  return { isSystem: false, isCustomized: false, name: custom.name, elements: custom.elements, prompt: custom.prompt };
}

/**
 * Validates and stores a structure. Protection comes from the system template,
 * never from the client: every protected default element must still be there.
 */
export async function saveUserStructure(args: {
  userId: string;
  templateId: string;
  language: TemplateLanguage;
  elements: unknown;
  prompt: unknown;
}) {
  const current = await getUserStructure(args);
  const parsed = parseStructure({ elements: args.elements, prompt: args.prompt });
  const system = current.isSystem ? getSystemTemplate(args.templateId, args.language) : null;
  const elements = assignElementIds(parsed.elements, current.elements, system?.elements ?? []);
  if (system) {
    const kept = new Set(elements.map((e) => e.id));
    if (system.elements.some((e) => e.isProtected && !kept.has(e.id)))
      throw new DomainError("invalid", "templates:errors.protectedRemoved");
    await upsertUserStructure({ ...args, elements, prompt: parsed.prompt });
  } else {
    await updateCustomTemplate({
      ownerId: args.userId,
      templateId: args.templateId,
      language: args.language,
      elements,
      prompt: parsed.prompt,
    });
  }
  return { elements, prompt: parsed.prompt };
}

export function parseStructure(input: { elements: unknown; prompt: unknown }) {
  const result = structureInputSchema.safeParse({ elements: input.elements, prompt: input.prompt ?? "" });
  if (!result.success) {
    const issues: DomainIssue[] = result.error.issues.map((i) => ({ path: i.path, message: i.message }));
    throw new DomainError("invalid", issues[0]?.message ?? "templates:errors.invalidStructure", issues);
  }
  return result.data;
}

/**
 * Keeps the id of an element the user renamed (matched by id), so protection
 * and letters stay attached; new elements get the SPEC §3 id from their name.
 */
export function assignElementIds(
  input: ElementInput[],
  current: StoredElement[],
  defaults: StoredElement[],
): StoredElement[] {
  const known = new Map([...defaults, ...current].map((e) => [e.id, e]));
  const used = new Set<string>();
  return input.map((element) => {
    const existing = element.id ? known.get(element.id) : undefined;
    let id = existing ? existing.id : elementIdFor(element.name);
    while (used.has(id)) id = `${id}_`;
    used.add(id);
    const isProtected = defaults.some((d) => d.id === id && d.isProtected);
    return { id, name: element.name.trim(), description: element.description.trim(), isProtected };
  });
}

/** "Reset" restores the system default for this user. */
export async function resetUserStructure(args: { userId: string; templateId: string; language: TemplateLanguage }) {
  requireListedSystemTemplate(args.templateId, args.language);
  await deleteUserStructure(args);
}
