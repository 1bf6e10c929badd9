import { getFormProps, getInputProps, useForm, type FormMetadata } from "@conform-to/react";
import { getZodConstraint, parseWithZod } from "@conform-to/zod";
import { json, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { Modal } from "~/components/ui/modal";
import { customTemplateInputSchema } from "~/models/template-rules";
import { auditTemplate } from "~/services/audit/events.server";
import {
  createCustomTemplate,
  customTemplatesAtLimit,
  MAX_CUSTOM_TEMPLATES,
} from "~/services/templates/custom-templates.server";
import { DomainError, statusFor } from "~/services/web/domain-error.server";
import { redirectWithToast } from "~/services/web/toast.server";
import { meterCall } from "~/services/admin/usage.server";
import { requireUserTemplatesEnabled } from "~/routes/_app.settings/context.server";
import { settingsUrl } from "~/routes/_app.settings/urls";
import { StructureFields, type StructureFormSchema } from "~/routes/_app.settings/editor";

// "Create New Template": an unsaved template until the server accepts it. At the cap on custom templates
// (MAX_CUSTOM_TEMPLATES per language) the dialog says so instead of offering a form; the action refuses regardless.

export async function loader({ request }: LoaderFunctionArgs) {
  const { user, language } = await requireUserTemplatesEnabled(request);
  return { language, max: MAX_CUSTOM_TEMPLATES, atLimit: await customTemplatesAtLimit({ userId: user.id, language }) };
}

export async function action({ request }: ActionFunctionArgs) {
  const { user, language } = await requireUserTemplatesEnabled(request);
  const form = await request.formData();
  const submission = parseWithZod(form, { schema: customTemplateInputSchema });
  if (submission.status !== "success") {
    return json({ result: submission.reply() }, { status: submission.status === "error" ? 400 : 200 });
  }
  meterCall(user.id, "structure/custom-template");
  let templateId: string;
  try {
    ({ templateId } = await createCustomTemplate({ userId: user.id, language, ...submission.value }));
  } catch (error) {
    if (error instanceof DomainError && error.kind === "invalid") {
      return json({ result: submission.reply({ fieldErrors: { name: [error.message] } }) }, { status: 400 });
    }
    // The cap: the whole form is refused, its content kept in the dialog.
    if (error instanceof DomainError && error.kind === "conflict") {
      return json({ result: submission.reply({ formErrors: [error.message] }) }, { status: statusFor(error.kind) });
    }
    throw error;
  }
  await auditTemplate(request, user.id, "template.custom.create", templateId);
  throw await redirectWithToast(settingsUrl(language, templateId), {
    type: "success",
    key: "templates:toast.customCreated",
  });
}

export default function NewTemplate() {
  const { language, max, atLimit } = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const { t } = useTranslation("templates");
  const [form, fields] = useForm({
    id: "new-template",
    lastResult: actionData?.result,
    defaultValue: { name: "", description: "", elements: [{ name: "", description: "" }], prompt: "" },
    constraint: getZodConstraint(customTemplateInputSchema),
    shouldValidate: "onSubmit",
    shouldRevalidate: "onInput",
  });
  const back = settingsUrl(language);
  if (atLimit && !actionData) {
    return (
      <Modal title={t("newTemplate.title")} closeTo={back} closeLabel={t("newTemplate.cancel")}>
        <p className="mb-4 text-sm text-slate-700" data-template-limit>
          {t("errors.templateLimit", { max })}
        </p>
        <div className="flex justify-end">
          <a href={back} className="rounded-md px-4 py-2 text-sm text-slate-700 hover:bg-slate-100">
            {t("newTemplate.cancel")}
          </a>
        </div>
      </Modal>
    );
  }
  return (
    <Modal title={t("newTemplate.title")} closeTo={back} closeLabel={t("newTemplate.cancel")} wide>
      <p className="mb-4">
        <span className="rounded-full bg-amber-100 px-2 py-0.5 text-xs font-medium text-amber-800" data-unsaved>
          {t("settings.unsaved")}
        </span>
      </p>
      <Form
        method="post"
        {...getFormProps(form)}
        noValidate
        className="space-y-4"
        data-structure-editor
        data-char-message={t("errors.characterNotAllowed")}
      >
        {form.errors?.length ? (
          <p id={form.errorId} className="text-sm text-red-700" role="alert">
            {form.errors.map((e) => t(e, { max })).join(" ")}
          </p>
        ) : null}
        <label className="block text-sm font-medium text-slate-700">
          {t("newTemplate.name")}
          <input
            {...getInputProps(fields.name, { type: "text", ariaAttributes: true })}
            key={fields.name.key}
            maxLength={undefined}
            className="mt-1 block w-full rounded border border-slate-300 px-2 py-1.5 text-sm"
          />
          {fields.name.errors?.length ? (
            <p id={fields.name.errorId} className="mt-1 text-xs text-red-700" role="alert">
              {fields.name.errors.map((e) => t(e)).join(" ")}
            </p>
          ) : null}
        </label>
        <label className="block text-sm font-medium text-slate-700">
          {t("newTemplate.description")}
          <input
            {...getInputProps(fields.description, { type: "text" })}
            key={fields.description.key}
            className="mt-1 block w-full rounded border border-slate-300 px-2 py-1.5 text-sm"
          />
        </label>
        {/* The same element editor as a template card; this form only adds name and description. */}
        <StructureFields
          form={form as unknown as FormMetadata<StructureFormSchema, string[]>}
          protectedIds={new Set()}
        />
        <div className="flex justify-end gap-2">
          <a href={back} className="rounded-md px-4 py-2 text-sm text-slate-700 hover:bg-slate-100">
            {t("newTemplate.cancel")}
          </a>
          <button
            type="submit"
            className="rounded-md bg-brand-600 px-4 py-2 text-sm font-medium text-white hover:bg-brand-700"
          >
            {t("newTemplate.create")}
          </button>
        </div>
      </Form>
    </Modal>
  );
}
