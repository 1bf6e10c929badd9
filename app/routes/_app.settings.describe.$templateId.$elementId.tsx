import { parseWithZod } from "@conform-to/zod";
import { json, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { Modal } from "~/components/ui/modal";
import { DESCRIPTION_WARN_ABOVE, elementInputSchema, MAX_DESCRIPTION } from "~/models/template-rules";
import { saveUserStructure } from "~/services/templates/templates.server";
import { meterCall } from "~/services/admin/usage.server";
import { requireUserTemplate } from "./_app.settings/context.server";
import { templateChanged, withFailureMessage } from "./_app.settings/queries.server";
import { settingsUrl } from "./_app.settings/urls";
import { notFound } from "~/services/web/not-found.server";
import { describeSchema } from "./_app.settings/describe.schema";

// The element-description dialog (SPEC §2): one section's description, with
// its counter; saved through the same rules as the whole structure.

async function context(request: Request, params: LoaderFunctionArgs["params"]) {
  const templateId = params.templateId ?? "";
  const { user, language, structure } = await requireUserTemplate(request, templateId);
  const element = structure.elements.find((e) => e.id === params.elementId);
  if (!element) notFound();
  return { user, templateId, language, structure, element };
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { templateId, language, element } = await context(request, params);
  return { templateId, language, name: element.name, description: element.description };
}

export async function action({ request, params }: ActionFunctionArgs) {
  const { user, templateId, language, structure, element } = await context(request, params);
  const submission = parseWithZod(await request.formData(), { schema: describeSchema });
  if (submission.status !== "success") return json({ result: submission.reply() }, { status: 400 });
  const { description } = submission.value;
  const checked = elementInputSchema.shape.description.safeParse(description);
  if (!checked.success) return json({ error: checked.error.issues[0].message, description }, { status: 400 });
  const elements = structure.elements.map((e) => ({
    id: e.id,
    name: e.name,
    description: e.id === element.id ? checked.data : e.description,
  }));
  meterCall(user.id, "structure/user");
  await withFailureMessage("templates:errors.saveStructure", language, () =>
    saveUserStructure({ userId: user.id, templateId, language, elements, prompt: structure.prompt }),
  );
  return templateChanged(user, request, { templateId, language, action: "save" });
}

export default function DescribeElement() {
  const { templateId, language, name, description } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  // A refused description comes back with its message; a malformed post only with its parse result.
  const actionData = answer && "error" in answer ? answer : undefined;
  const { t } = useTranslation("templates");
  const value = actionData?.description ?? description;
  const back = settingsUrl(language, templateId, { anchor: false });
  return (
    <Modal title={t("describe.title", { name })} closeTo={back} closeLabel={t("describe.cancel")}>
      <Form method="post" noValidate data-structure-editor className="space-y-3">
        <label className="block text-sm font-medium text-slate-700">
          <span className="flex justify-between">
            {t("settings.elementDescription")}
            <span
              data-counter
              data-max={MAX_DESCRIPTION}
              data-warn-above={DESCRIPTION_WARN_ABOVE}
              className={`text-xs tabular-nums ${value.length > DESCRIPTION_WARN_ABOVE ? "font-semibold text-red-700" : "text-slate-500"}`}
            >
              {value.length}/{MAX_DESCRIPTION}
            </span>
          </span>
          <textarea
            name="description"
            defaultValue={value}
            rows={3}
            aria-invalid={actionData?.error ? true : undefined}
            aria-describedby="describe-help"
            className="mt-1 block w-full rounded border border-slate-300 px-2 py-1.5 text-sm"
          />
        </label>
        <p id="describe-help" className="text-xs text-slate-500">
          {t("describe.help")}
        </p>
        {actionData?.error ? (
          <p role="alert" className="text-sm text-red-700">
            {t(actionData.error)}
          </p>
        ) : null}
        <div className="flex justify-end gap-2">
          <Link to={back} className="rounded-md px-4 py-2 text-sm text-slate-700 hover:bg-slate-100">
            {t("describe.cancel")}
          </Link>
          <button
            type="submit"
            className="rounded-md bg-brand-600 px-4 py-2 text-sm font-medium text-white hover:bg-brand-700"
          >
            {t("describe.save")}
          </button>
        </div>
      </Form>
    </Modal>
  );
}
