import type { TemplateLanguage } from "~/models/template-rules";

/** Settings in one template language, optionally with one template card open. */
export function settingsUrl(language: TemplateLanguage, templateId?: string, { anchor = true } = {}) {
  const query = `?language=${language}${templateId ? `&open=${encodeURIComponent(templateId)}` : ""}`;
  return `/settings${query}${templateId && anchor ? `#tpl-${templateId}` : ""}`;
}
