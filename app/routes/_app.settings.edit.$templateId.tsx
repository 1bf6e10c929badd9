import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { Modal } from "~/components/ui/modal";
import { requireUserTemplate } from "./_app.settings/context.server";
import { StructureEditor, useStructureForm } from "./_app.settings/editor";
import { settingsUrl } from "./_app.settings/urls";
import { saveStructureIntent, withFailureMessage } from "./_app.settings/queries.server";

// The template editor dialog (SPEC §2): the same editor as the card, with room
// to work — on a phone the card is cramped. Saving returns to Settings.

export async function loader({ request, params }: LoaderFunctionArgs) {
  const templateId = params.templateId ?? "";
  const { language, structure } = await requireUserTemplate(request, templateId);
  return { templateId, language, name: structure.name, elements: structure.elements, prompt: structure.prompt };
}

export async function action({ request, params }: ActionFunctionArgs) {
  const templateId = params.templateId ?? "";
  const { user, language } = await requireUserTemplate(request, templateId);
  const form = await request.formData();
  return withFailureMessage("templates:errors.saveStructure", language, () =>
    saveStructureIntent(user, templateId, form, language, request),
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
      closeTo={settingsUrl(language, templateId, { anchor: false })}
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
