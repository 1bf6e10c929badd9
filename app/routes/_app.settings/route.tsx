import { parseWithZod } from "@conform-to/zod";
import { json, type ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, Outlet, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { RouteHandle } from "~/components/page-scripts";
import { Dismissible } from "~/components/shell/dismissible";
import { SectionHeader } from "~/components/ui/section";
import { getRagAgreed } from "~/models/template.server";
import { templateLanguages } from "~/models/template-rules";
import { getConfig } from "~/services/config/config.server";
import { MAX_CUSTOM_TEMPLATES } from "~/services/templates/custom-templates.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { requireUser } from "~/services/web/session.server";
import { listUserTemplates, organizationLabel, type TemplateView } from "~/services/templates/templates.server";
import {
  AccountSection,
  LetterheadSection,
  RagToggle,
  SessionsSection,
  TemplateCard,
  VocabularySection,
} from "./components";
import { templateLanguageOf } from "./context.server";
import { isUnknownIntent } from "~/components/forms/fields";
import { ragIntent, resetIntent, saveStructureIntent, withFailureMessage } from "./queries.server";
import { INTENT, settingsActionSchema } from "./schema";

// SPEC §2 "Settings": the user's templates with an inline structure editor, the
// AI Learning consent, and the ways to the repository and a new template. No
// JavaScript: the editor's list buttons go through the server (conform intents).

export const handle: RouteHandle = {
  i18n: ["common", "templates", "account"],
  scripts: ["shell", "template-editor"],
};

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? "Skribent" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const uiLanguage = await getLanguage(request);
  const url = new URL(request.url);
  const language = await templateLanguageOf(request);
  const t = await getFixedTFor(uiLanguage, ["common", "templates"]);
  let loadError: string | null = null;
  const [{ system, custom }, ragAgreed] = await Promise.all([
    listUserTemplates({ userId: user.id, language }).catch((error: unknown) => {
      // SPEC §8 'Failed to load templates': the page stays usable, with a retry.
      console.warn("[settings] templates:", error instanceof Error ? error.message : error);
      loadError = "templates:errors.loadTemplates";
      return { system: [] as TemplateView[], custom: [] as TemplateView[] };
    }),
    getRagAgreed({ userId: user.id }),
  ]);
  return {
    title: `${t("settings.title")} · Skribent`,
    language,
    open: url.searchParams.get("open"),
    system: system.map((tpl) => ({ ...tpl, organizationLabel: organizationLabel(tpl.organization!, t) })),
    custom,
    ragAgreed,
    loadError: loadError as string | null,
    userTemplatesEnabled: !getConfig().flags.disableUserTemplates,
    // At the cap the screen offers no creation and says why (the server refuses it anyway).
    customLimit: custom.length >= MAX_CUSTOM_TEMPLATES ? MAX_CUSTOM_TEMPLATES : null,
  };
}

export async function action({ request }: ActionFunctionArgs) {
  const user = await requireUser(request);
  const formData = await request.formData();
  const submission = parseWithZod(withoutListButton(formData), { schema: settingsActionSchema });
  if (isUnknownIntent(submission)) throw new Response("Unknown intent", { status: 400 });
  if (submission.status !== "success") return json({ result: submission.reply() }, { status: 400 });
  const form = submission.value;
  const language = await templateLanguageOf(request, form.language);
  switch (form.intent) {
    case INTENT.structure:
      // The structure editor's own schema reads the elements (and conform's list buttons) from the form.
      return withFailureMessage("templates:errors.saveStructure", language, () =>
        saveStructureIntent(user, form.templateId, formData, language, request),
      );
    case INTENT.reset:
      return withFailureMessage("templates:errors.resetStructure", language, () =>
        resetIntent(user, form.templateId, language, request),
      );
    case INTENT.rag:
      return withFailureMessage("templates:errors.ragSettings", language, () =>
        ragIntent(user, form.ragAgreed, language, request),
      );
  }
}

/**
 * The form as its own buttons posted it: the structure editor's list buttons (add, move, remove) post conform's
 * intent too, which saveStructureIntent applies to the draft; which form it is does not depend on it.
 */
function withoutListButton(form: FormData) {
  const fields = new FormData();
  for (const [name, value] of form) if (name !== "__intent__") fields.append(name, value);
  return fields;
}

export default function Settings() {
  const { language, open, system, custom, ragAgreed, userTemplatesEnabled, loadError, customLimit } =
    useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const { t } = useTranslation(["templates", "common"]);
  const draftFor = (id: string) =>
    actionData && "templateId" in actionData && actionData.templateId === id ? actionData.result : undefined;
  return (
    <>
      <SectionHeader title={t("common:settings.title")} intro={t("settings.intro")} />
      {loadError ? (
        <div className="mb-4">
          <Dismissible tone="error" role="alert" dismissLabel={t("common:toast.dismiss")}>
            {t(loadError)}{" "}
            <a href={`/settings?language=${language}`} className="font-medium underline">
              {t("settings.retry")}
            </a>
          </Dismissible>
        </div>
      ) : null}
      <div className="mb-6 flex flex-wrap items-center gap-3">
        <nav
          aria-label={t("settings.templateLanguage")}
          className="flex rounded-md border border-slate-200 bg-white p-1"
        >
          {templateLanguages.map((lng) => (
            <Link
              key={lng}
              to={`/settings?language=${lng}`}
              aria-current={lng === language ? "page" : undefined}
              className={`rounded px-3 py-1 text-sm ${lng === language ? "bg-brand-600 text-white" : "text-slate-700 hover:bg-slate-100"}`}
            >
              {t(`settings.language_${lng}`)}
            </Link>
          ))}
        </nav>
        {userTemplatesEnabled ? (
          <div className="ml-auto flex gap-2">
            <Link
              to={`repository?language=${language}`}
              className="rounded-md border border-brand-600 px-3 py-2 text-sm font-medium text-brand-700 hover:bg-brand-50"
              data-action="repository"
            >
              {t("settings.repositoryButton")}
            </Link>
            {customLimit === null ? (
              <Link
                to={`new?language=${language}`}
                className="rounded-md bg-brand-600 px-3 py-2 text-sm font-medium text-white hover:bg-brand-700"
                data-action="new-template"
              >
                {t("settings.newTemplateButton")}
              </Link>
            ) : null}
          </div>
        ) : null}
      </div>

      <section aria-labelledby="system-templates" className="mb-8">
        <h2 id="system-templates" className="mb-3 text-lg font-medium">
          {t("common:settings.systemTemplates")}
        </h2>
        {system.length === 0 ? (
          <p className="rounded-lg border border-slate-200 bg-white px-4 py-6 text-sm text-slate-500" data-empty>
            {t("settings.noSystemTemplates")}
          </p>
        ) : (
          <div className="space-y-3">
            {system.map((tpl) => (
              <TemplateCard
                key={tpl.id}
                template={tpl}
                language={language}
                open={open === tpl.id}
                draft={draftFor(tpl.id)}
              />
            ))}
          </div>
        )}
      </section>

      <section aria-labelledby="custom-templates" className="mb-8">
        <h2 id="custom-templates" className="mb-3 text-lg font-medium">
          {t("common:settings.customTemplates")}
        </h2>
        {userTemplatesEnabled && customLimit !== null ? (
          <p className="mb-3 text-sm text-slate-600" data-template-limit>
            {t("errors.templateLimit", { max: customLimit })}
          </p>
        ) : null}
        {custom.length === 0 ? (
          <p className="rounded-lg border border-slate-200 bg-white px-4 py-6 text-sm text-slate-500" data-empty>
            {t("settings.noCustomTemplates")}
          </p>
        ) : (
          <div className="space-y-3">
            {custom.map((tpl) => (
              <TemplateCard
                key={tpl.id}
                template={{ ...tpl, organizationLabel: null }}
                language={language}
                open={open === tpl.id}
                draft={draftFor(tpl.id)}
              />
            ))}
          </div>
        )}
      </section>

      <RagToggle agreed={ragAgreed} language={language} />
      <VocabularySection />
      <LetterheadSection />
      <SessionsSection />
      <AccountSection />
      <Outlet />
    </>
  );
}
