import { z } from "zod";

// SPEC §5 "Templates": one set of rules for the screens, the JSON API and the
// progressive-enhancement counters. Messages are i18n keys (namespace
// "templates"); the screens translate them, the API answers in English.

export const MAX_ELEMENTS = 10;
export const MAX_ELEMENT_NAME = 100;
export const MAX_DESCRIPTION = 100;
export const DESCRIPTION_WARN_ABOVE = 90;
export const MAX_PROMPT = 1000;
export const PROMPT_WARN_ABOVE = 900;
export const MAX_TEMPLATE_NAME = 100;

/** Letters including umlauts and ß, spaces and hyphens (SPEC §5). */
export const ELEMENT_NAME_PATTERN = /^[A-Za-zÄÖÜäöüß\- ]+$/;
/** What the editor strips while typing. */
export const ELEMENT_NAME_DISALLOWED = /[^A-Za-zÄÖÜäöüß\- ]/g;

export const templateLanguages = ["de-DE", "en-GB"] as const;
export type TemplateLanguage = (typeof templateLanguages)[number];

/** SPEC §7 language mapping: en → en-GB, every other value → de-DE; missing → null. */
export function templateLanguageFrom(value: string | null | undefined): TemplateLanguage | null {
  if (!value) return null;
  return value === "en" || value === "en-GB" ? "en-GB" : "de-DE";
}

/** SPEC §3: an element's id is its name lowercased, spaces turned into underscores. */
export function elementIdFor(name: string) {
  return name.trim().toLowerCase().replace(/\s+/g, "_");
}

// Every schema names its own message for a value of the wrong type too (a list sent as an object, a number as a
// name): the API's and the forms' refusals are translated keys, never Zod's English defaults.
export const elementInputSchema = z.object(
  {
    id: z.string({ invalid_type_error: "templates:errors.textExpected" }).max(120).optional(),
    name: z
      .string({
        required_error: "templates:errors.elementNameEmpty",
        invalid_type_error: "templates:errors.elementNameEmpty",
      })
      .trim()
      .min(1, "templates:errors.elementNameEmpty")
      .max(MAX_ELEMENT_NAME, "templates:errors.nameTooLong")
      .regex(ELEMENT_NAME_PATTERN, "templates:errors.elementNameChars"),
    description: z
      .string({
        required_error: "templates:errors.descriptionRequired",
        invalid_type_error: "templates:errors.descriptionRequired",
      })
      .trim()
      .min(1, "templates:errors.descriptionRequired")
      .max(MAX_DESCRIPTION, "templates:errors.descriptionTooLong"),
  },
  { invalid_type_error: "templates:errors.elementInvalid" },
);
export type ElementInput = z.infer<typeof elementInputSchema>;

export const elementListSchema = z
  .array(elementInputSchema, {
    required_error: "templates:errors.minElements",
    invalid_type_error: "templates:errors.elementsNotList",
  })
  .min(1, "templates:errors.minElements")
  .max(MAX_ELEMENTS, "templates:errors.maxElements")
  .superRefine((elements, ctx) => {
    const seen = new Set<string>();
    elements.forEach((element, index) => {
      const key = element.name.trim().toLocaleLowerCase("de");
      if (seen.has(key))
        ctx.addIssue({ code: "custom", path: [index, "name"], message: "templates:errors.elementNameDuplicate" });
      seen.add(key);
    });
  });

export const promptSchema = z
  .string({ invalid_type_error: "templates:errors.textExpected" })
  .max(MAX_PROMPT, "templates:errors.promptTooLong")
  .default("");

export const structureInputSchema = z.object({
  elements: elementListSchema,
  prompt: promptSchema,
});
export type StructureInput = z.infer<typeof structureInputSchema>;

export const templateNameSchema = z
  .string({
    required_error: "templates:errors.templateNameRequired",
    invalid_type_error: "templates:errors.templateNameRequired",
  })
  .trim()
  .min(1, "templates:errors.templateNameRequired")
  .max(MAX_TEMPLATE_NAME, "templates:errors.nameTooLong");

export const customTemplateInputSchema = structureInputSchema.extend({
  name: templateNameSchema,
  description: z
    .string({ invalid_type_error: "templates:errors.textExpected" })
    .trim()
    .max(200, "templates:errors.descriptionTooLong")
    .default(""),
});
export type CustomTemplateInput = z.infer<typeof customTemplateInputSchema>;

export const languageSchema = z.enum(templateLanguages, {
  required_error: "templates:errors.languageRequired",
  invalid_type_error: "templates:errors.languageRequired",
  message: "templates:errors.languageRequired",
});
