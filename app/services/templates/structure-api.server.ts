import type { TemplateView } from "./templates.server";
import { DomainError } from "../web/domain-error.server";
import { templateLanguageFrom, type TemplateLanguage } from "~/models/template-rules";
import type { StoredElement } from "~/models/schema";

// Shapes of SPEC §3 "Structure template" for /api/structure/* answers.

export function languageFromParam(value: unknown): TemplateLanguage {
  const language = typeof value === "string" ? templateLanguageFrom(value.trim()) : null;
  if (!language) throw new DomainError("invalid", "templates:errors.languageRequired");
  return language;
}

export function requiredText(value: unknown, message = "templates:errors.templateNotFound") {
  if (typeof value !== "string" || value.trim() === "") throw new DomainError("invalid", message);
  return value.trim();
}

export function elementJson(element: StoredElement) {
  return { id: element.id, name: element.name, description: element.description, isProtected: element.isProtected };
}

export function templateJson(template: TemplateView) {
  return {
    id: template.id,
    template_id: template.id,
    name: template.name,
    template_name: template.name,
    description: template.description,
    language_code: template.language,
    isSystem: template.isSystem,
    isCustomized: template.isCustomized,
    organization: template.organization,
    prompt: template.prompt,
    structure_elements: template.elements.map(elementJson),
  };
}
