import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { elementIdFor, type TemplateLanguage } from "~/models/template-rules";

// The system template set is versioned data (app/data/templates/system/<id>.json), not code:
// clinicians' wording is edited there. This module reads the directory once, validates every
// file against the product's template rules (SPEC §3, §5, §9) and fails loudly on any defect,
// so a broken template can never reach a user or the language model.

export const organizations = ["general", "hospital", "outpatient", "rehabilitation", "partner"] as const;
export type Organization = (typeof organizations)[number];
export type StructureElement = { id: string; name: string; description: string; isProtected: boolean };
export type SystemTemplate = {
  id: string;
  organization: Organization;
  hidden: boolean;
  name: string;
  description: string;
  prompt: string;
  elements: StructureElement[];
};
export type LocalizedSystemTemplate = Omit<SystemTemplate, "id" | "organization" | "hidden">;
export type SystemTemplateEntry = {
  id: string;
  organization: Organization;
  hidden: boolean;
  "de-DE": LocalizedSystemTemplate;
  "en-GB": LocalizedSystemTemplate;
};

export const SYSTEM_TEMPLATE_DIR = path.resolve(process.cwd(), "app/data/templates/system");

export const TEMPLATE_LIMITS = { min: 4, max: 10, descriptionMax: 100, promptMax: 1000 } as const;
const ELEMENT_NAME = /^[A-Za-zÄÖÜäöüß -]+$/;
const TEMPLATE_ID = /^[a-z][a-z0-9_]*$/;

// Listing order inside an organisation group; templates not named here follow, by id.
const TEMPLATE_ORDER = [
  "default",
  "kurzbrief",
  "soap",
  "entlassbrief",
  "verlegungsbrief",
  "notaufnahmebericht",
  "konsiliarbericht",
  "befundbericht",
  "ueberweisung",
  "kardiologie_befundbericht",
  "urologie_befundbericht",
  "reha_entlassungsbericht",
  "reha_aufnahmebericht",
  "verlaufsbericht",
  "shared_care_uebergabe",
];

/** What a new user starts with: `default` plus the rest of the general group (never the hidden `base`). */
export const DEFAULT_COLLECTION: string[] = ["default", "kurzbrief", "soap"];

/** The product's one rule for element ids, also used for user-created elements (SPEC §3). */
// One rule for ids, shared with the editor (SPEC §3).
export { elementIdFor };
export type { TemplateLanguage };

const elementSchema = z
  .object({
    id: z.string().min(1),
    name: z
      .string()
      .min(1, "element name is empty")
      .refine((n) => n === n.trim(), "element name has leading or trailing spaces")
      .refine((n) => ELEMENT_NAME.test(n), "element name may contain only letters, spaces and hyphens"),
    description: z
      .string()
      .refine((d) => d.trim().length > 0, "element description is empty")
      .refine(
        (d) => d.length <= TEMPLATE_LIMITS.descriptionMax,
        `element description exceeds ${TEMPLATE_LIMITS.descriptionMax} characters`,
      ),
    isProtected: z.boolean(),
  })
  .strict();

const localizedSchema = z
  .object({
    name: z
      .string()
      .refine((n) => n.trim().length > 0, "template name is empty")
      .refine((n) => n.length <= 100, "template name exceeds 100 characters"),
    description: z
      .string()
      .refine((d) => d.trim().length > 0, "template description is empty")
      .refine((d) => d.length <= 200, "template description exceeds 200 characters"),
    prompt: z
      .string()
      .refine((p) => p.trim().length > 0, "prompt is empty")
      .refine((p) => p.length <= TEMPLATE_LIMITS.promptMax, `prompt exceeds ${TEMPLATE_LIMITS.promptMax} characters`),
    elements: z
      .array(elementSchema)
      .min(TEMPLATE_LIMITS.min, `fewer than ${TEMPLATE_LIMITS.min} elements`)
      .max(TEMPLATE_LIMITS.max, `more than ${TEMPLATE_LIMITS.max} elements`),
  })
  .strict();

const fileSchema = z
  .object({
    id: z.string().regex(TEMPLATE_ID, "template id must be lowercase ascii letters, digits and underscores"),
    organization: z.enum(organizations),
    hidden: z.boolean(),
    de: localizedSchema,
    en: localizedSchema,
  })
  .strict()
  .superRefine((file, ctx) => {
    const problem = (message: string, at: (string | number)[]) =>
      ctx.addIssue({ code: z.ZodIssueCode.custom, message, path: at });

    file.de.elements.forEach((element, i) => {
      const expected = elementIdFor(element.name);
      if (element.id !== expected) {
        problem(`element id "${element.id}" must be "${expected}" (derived from the German name)`, [
          "de",
          "elements",
          i,
          "id",
        ]);
      }
    });

    if (file.en.elements.length !== file.de.elements.length) {
      problem("the languages have a different number of elements", ["en", "elements"]);
    } else {
      file.en.elements.forEach((element, i) => {
        const de = file.de.elements[i];
        if (element.id !== de.id) {
          problem(`element id "${element.id}" differs from the German "${de.id}" at this position`, [
            "en",
            "elements",
            i,
            "id",
          ]);
        }
        if (element.isProtected !== de.isProtected) {
          problem(`protection of "${element.id}" differs between the languages`, ["en", "elements", i, "isProtected"]);
        }
      });
    }

    for (const language of ["de", "en"] as const) {
      const seen = new Set<string>();
      file[language].elements.forEach((element, i) => {
        const key = element.name.toLowerCase();
        if (seen.has(key)) problem(`element name "${element.name}" is used twice`, [language, "elements", i, "name"]);
        seen.add(key);
      });
    }
  });

type TemplateFile = z.infer<typeof fileSchema>;

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join(".") || "(file)"}: ${issue.message}`).join("; ");
}

function localized(file: TemplateFile["de"]): LocalizedSystemTemplate {
  return {
    name: file.name,
    description: file.description,
    prompt: file.prompt,
    elements: file.elements.map((e) => ({ ...e })),
  };
}

/**
 * Reads and validates every `*.json` in `dir`. Throws an Error naming the file and the problem.
 * Exported for tests; the application uses the cached `loadSystemTemplates()`.
 */
export function readSystemTemplateDirectory(dir: string): Map<string, SystemTemplateEntry> {
  let names: string[];
  try {
    names = fs
      .readdirSync(dir)
      .filter((name) => name.endsWith(".json"))
      .sort();
  } catch (error) {
    throw new Error(`System templates: cannot read ${dir}: ${(error as Error).message}`);
  }

  const templates = new Map<string, SystemTemplateEntry>();
  for (const name of names) {
    const file = path.join(dir, name);
    let raw: unknown;
    try {
      raw = JSON.parse(fs.readFileSync(file, "utf8"));
    } catch (error) {
      throw new Error(`System template ${name}: not valid JSON: ${(error as Error).message}`);
    }
    const parsed = fileSchema.safeParse(raw);
    if (!parsed.success) throw new Error(`System template ${name}: ${describeIssues(parsed.error)}`);
    const data = parsed.data;
    if (`${data.id}.json` !== name)
      throw new Error(`System template ${name}: id "${data.id}" must match the file name`);
    templates.set(data.id, {
      id: data.id,
      organization: data.organization,
      hidden: data.hidden,
      "de-DE": localized(data.de),
      "en-GB": localized(data.en),
    });
  }

  const base = templates.get("base");
  if (!base || !base.hidden) throw new Error(`System templates in ${dir}: a hidden template "base" is required`);
  const fallback = templates.get("default");
  if (!fallback || fallback.hidden)
    throw new Error(`System templates in ${dir}: a listed template "default" is required`);
  return templates;
}

let cache: Map<string, SystemTemplateEntry> | undefined;

export function loadSystemTemplates(): Map<string, SystemTemplateEntry> {
  cache ??= readSystemTemplateDirectory(SYSTEM_TEMPLATE_DIR);
  return cache;
}

function flatten(entry: SystemTemplateEntry, language: TemplateLanguage): SystemTemplate {
  const text = entry[language];
  return {
    id: entry.id,
    organization: entry.organization,
    hidden: entry.hidden,
    name: text.name,
    description: text.description,
    prompt: text.prompt,
    // Copies, so a caller editing a structure never changes the cached system default.
    elements: text.elements.map((e) => ({ ...e })),
  };
}

/** Any system template by id, including the hidden `base`. */
export function getSystemTemplate(id: string, language: TemplateLanguage): SystemTemplate | null {
  const entry = loadSystemTemplates().get(id);
  return entry ? flatten(entry, language) : null;
}

function rank(id: string): number {
  const index = TEMPLATE_ORDER.indexOf(id);
  return index === -1 ? TEMPLATE_ORDER.length : index;
}

/** Every listed system template: grouped by organisation (in `organizations` order), then in house order. */
export function listSystemTemplates(language: TemplateLanguage): SystemTemplate[] {
  return [...loadSystemTemplates().values()]
    .filter((entry) => !entry.hidden)
    .sort(
      (a, b) =>
        organizations.indexOf(a.organization) - organizations.indexOf(b.organization) ||
        rank(a.id) - rank(b.id) ||
        a.id.localeCompare(b.id),
    )
    .map((entry) => flatten(entry, language));
}
