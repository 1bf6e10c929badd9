import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { Modal } from "~/components/ui/modal";
import { toTemplateLanguage } from "~/i18n";
import { templateLanguageFrom } from "~/models/template-rules";
import { DomainError } from "~/services/domain-error.server";
import { getLanguage } from "~/services/i18n.server";
import { requireUser } from "~/services/session.server";
import { getUserStructure } from "~/services/templates.server";
import { StructureEditor, useStructureForm } from "./_app.settings/editor";
import { saveStructureIntent, withFailureMessage } from "./_app.settings/queries.server";

// The template editor dialog (SPEC §2): the same editor as the card, with room
// to work — on a phone the card is cramped. Saving returns to Settings.

async function context(request: Request, templateId: string) {
  const user = await requireUser(request);
  const language =
    templateLanguageFrom(new URL(request.url).searchParams.get("language")) ??
    toTemplateLanguage(await getLanguage(request));
  const structure = await getUserStructure({ userId: user.id, templateId, language }).catch((error: unknown) => {
    if (error instanceof DomainError && error.kind === "not_found") throw new Response("Not found", { status: 404 });
    throw error;
  });
  return { user, language, structure };
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  const templateId = params.templateId ?? "";
  const { language, structure } = await context(request, templateId);
  return { templateId, language, name: structure.name, elements: structure.elements, prompt: structure.prompt };
}

export async function action({ request, params }: ActionFunctionArgs) {
  const { user, language } = await context(request, params.templateId ?? "");
  const form = await request.formData();
  form.set("templateId", params.templateId ?? "");
  return withFailureMessage("templates:errors.saveStructure", language, () =>
    saveStructureIntent(user, form, language, request),
  );
}

export default function EditTemplate() {
  const { templateId, language, name, elements, prompt } = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const { t } = useTranslation("templates");
  const template = { id: templateId, elements, prompt };
  const form = useStructureForm(
    template,
    actionData && "result" in actionData ? actionData.result : undefined,
    "dialog",
  );
  return (
    <Modal
      title={t("editor.title", { name })}
      closeTo={`/settings?language=${language}&open=${encodeURIComponent(templateId)}`}
      closeLabel={t("editor.close")}
      wide
    >
      {actionData ? (
        <p className="mb-3">
          <span className="rounded-full bg-amber-100 px-2 py-0.5 text-xs font-medium text-amber-800">
            {t("settings.unsavedChanges")}
          </span>
        </p>
      ) : null}
      <StructureEditor form={form} template={template} language={language} />
    </Modal>
  );
}
