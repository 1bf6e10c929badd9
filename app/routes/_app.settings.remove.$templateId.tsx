import { type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, Link, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { danger } from "~/components/ui/buttons";
import { Modal } from "~/components/ui/modal";
import { auditTemplate } from "~/services/audit/events.server";
import { deleteCustomTemplate } from "~/services/templates/custom-templates.server";
import { DomainError } from "~/services/web/domain-error.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { removeTemplateAccess } from "~/services/templates/templates.server";
import { requireUserTemplate } from "./_app.settings/context.server";
import { settingsUrl } from "./_app.settings/urls";
import { redirectWithToast } from "~/services/web/toast.server";
import { meterCall } from "~/services/admin/usage.server";

// The delete/remove confirmation dialog: says what will be lost before acting.

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { language, structure } = await requireUserTemplate(request, params.templateId ?? "");
  return { templateId: params.templateId ?? "", language, name: structure.name, isSystem: structure.isSystem };
}

export async function action({ request, params }: ActionFunctionArgs) {
  const templateId = params.templateId ?? "";
  const { user, language, structure } = await requireUserTemplate(request, templateId);
  meterCall(user.id, structure.isSystem ? "structure/user/remove-access" : "structure/custom-template");
  try {
    if (structure.isSystem) await removeTemplateAccess({ userId: user.id, templateId, language });
    else await deleteCustomTemplate({ userId: user.id, templateId, language });
  } catch (error) {
    // SPEC §8 'Failed to remove template: {reason}'; the template stays as it was.
    const t = await getFixedTFor(await getLanguage(request), ["common", "templates"]);
    const reason = error instanceof DomainError ? t(error.message) : t("common:errors.unexpected");
    if (!(error instanceof DomainError))
      console.warn("[settings] remove:", error instanceof Error ? error.message : error);
    throw await redirectWithToast(settingsUrl(language), {
      type: "error",
      key: "templates:errors.removeTemplate",
      values: { reason },
    });
  }
  await auditTemplate(
    request,
    user.id,
    structure.isSystem ? "template.remove-access" : "template.custom.delete",
    templateId,
  );
  throw await redirectWithToast(settingsUrl(language), {
    type: "success",
    key: structure.isSystem ? "templates:toast.templateRemoved" : "templates:toast.customDeleted",
  });
}

export default function RemoveTemplate() {
  const { name, isSystem, language, templateId } = useLoaderData<typeof loader>();
  const { t } = useTranslation("templates");
  const back = settingsUrl(language, templateId, { anchor: false });
  return (
    <Modal
      title={isSystem ? t("remove.titleSystem") : t("remove.titleCustom")}
      closeTo={back}
      closeLabel={t("remove.cancel")}
    >
      <p className="text-sm text-slate-700">
        {isSystem ? t("remove.bodySystem", { name }) : t("remove.bodyCustom", { name })}
      </p>
      <div className="mt-6 flex justify-end gap-2">
        <Link to={back} className="rounded-md px-4 py-2 text-sm text-slate-700 hover:bg-slate-100">
          {t("remove.cancel")}
        </Link>
        <Form method="post">
          <button type="submit" className={danger} data-action="confirm-remove">
            {isSystem ? t("remove.confirmSystem") : t("remove.confirmCustom")}
          </button>
        </Form>
      </div>
    </Modal>
  );
}
