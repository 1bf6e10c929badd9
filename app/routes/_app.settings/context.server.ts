import { toTemplateLanguage } from "~/i18n";
import { templateLanguageFrom, type TemplateLanguage } from "~/models/template-rules";
import { getConfig } from "~/services/config/config.server";
import { DomainError } from "~/services/web/domain-error.server";
import { getLanguage } from "~/services/web/i18n.server";
import { requireUser } from "~/services/web/session.server";
import { getUserStructure } from "~/services/templates/templates.server";
import { notFound } from "~/services/web/not-found.server";

// What every Settings route starts with: the user first, then the template
// language (?language=, else the interface language), then the record.

/** `posted`: the language a form was shown in (its hidden `language` field), before the address's. */
export async function templateLanguageOf(request: Request, posted?: string | null): Promise<TemplateLanguage> {
  const asked = posted ?? new URL(request.url).searchParams.get("language");
  return templateLanguageFrom(asked) ?? toTemplateLanguage(await getLanguage(request));
}

/** A template of this user (system or own); anything else is a 404 that reveals nothing. */
export async function requireUserTemplate(request: Request, templateId: string) {
  const user = await requireUser(request);
  const language = await templateLanguageOf(request);
  const structure = await getUserStructure({ userId: user.id, templateId, language }).catch((error: unknown) => {
    if (error instanceof DomainError && error.kind === "not_found") notFound();
    throw error;
  });
  return { user, language, structure };
}

/** The repository and template creation exist only while the flag allows them (refused, not just hidden). */
export async function requireUserTemplatesEnabled(request: Request) {
  const user = await requireUser(request);
  if (getConfig().flags.disableUserTemplates) notFound();
  return { user, language: await templateLanguageOf(request) };
}
