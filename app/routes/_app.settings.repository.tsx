import { parseWithZod } from "@conform-to/zod";
import { json, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { Modal } from "~/components/ui/modal";
import { auditTemplate } from "~/services/audit/events.server";
import { DomainError } from "~/services/web/domain-error.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { organizations } from "~/services/templates/system-templates.server";
import { addTemplateAccess, getRepository, organizationLabel } from "~/services/templates/templates.server";
import { redirectWithToast } from "~/services/web/toast.server";
import { meterCall } from "~/services/admin/usage.server";
import { requireUserTemplatesEnabled } from "./_app.settings/context.server";
import { settingsUrl } from "./_app.settings/urls";
import { addTemplateSchema } from "./_app.settings/repository.schema";

// SPEC §2 "Template Repository": back, search, results count, grouped by
// organisation; each template not added / added (adding shows while posting).

async function context(request: Request) {
  const { user, language } = await requireUserTemplatesEnabled(request);
  return { user, url: new URL(request.url), uiLanguage: await getLanguage(request), language };
}

export async function loader({ request }: LoaderFunctionArgs) {
  const { user, url, uiLanguage, language } = await context(request);
  const t = await getFixedTFor(uiLanguage, ["common", "templates"]);
  const query = (url.searchParams.get("q") ?? "").trim().slice(0, 100);
  const needle = query.toLocaleLowerCase("de");
  let loadError: string | null = null;
  const all = await getRepository({ userId: user.id, language }).catch((error: unknown) => {
    // SPEC §8 'Failed to load template repository', with a way to try again.
    console.warn("[repository]", error instanceof Error ? error.message : error);
    loadError = "templates:errors.loadRepository";
    return [];
  });
  const templates = all.filter(
    (tpl) =>
      !needle ||
      [tpl.name, tpl.description, ...tpl.elementNames].some((text) => text.toLocaleLowerCase("de").includes(needle)),
  );
  const groups = organizations
    .map((org) => ({
      id: org,
      label: organizationLabel(org, t),
      templates: templates.filter((tpl) => tpl.organization === org),
    }))
    .filter((g) => g.templates.length > 0);
  return { language, query, count: templates.length, groups, loadError: loadError as string | null };
}

export async function action({ request }: ActionFunctionArgs) {
  const { user, url, language } = await context(request);
  const submission = parseWithZod(await request.formData(), { schema: addTemplateSchema });
  if (submission.status !== "success") return json({ result: submission.reply() }, { status: 400 });
  const { templateId } = submission.value;
  const back = `/settings/repository?language=${language}${url.searchParams.get("q") ? `&q=${encodeURIComponent(url.searchParams.get("q")!)}` : ""}`;
  meterCall(user.id, "structure/user/add-access");
  try {
    await addTemplateAccess({ userId: user.id, templateId, language });
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    const t = await getFixedTFor(await getLanguage(request), ["templates"]);
    throw await redirectWithToast(back, {
      type: "error",
      key: "templates:errors.addTemplate",
      values: { reason: t(error.message) },
    });
  }
  await auditTemplate(request, user.id, "template.add-access", templateId);
  throw await redirectWithToast(back, { type: "success", key: "templates:toast.templateAdded" });
}

export default function Repository() {
  const { language, query, count, groups, loadError } = useLoaderData<typeof loader>();
  const { t } = useTranslation("templates");
  const back = settingsUrl(language);
  return (
    <Modal title={t("repository.title")} closeTo={back} closeLabel={t("repository.back")} wide>
      <div className="mb-4 flex flex-wrap items-center gap-3">
        <a
          href={back}
          className="rounded-md border border-slate-300 px-3 py-1.5 text-sm text-slate-700 hover:bg-slate-50"
        >
          ← {t("repository.back")}
        </a>
        <Form method="get" role="search" className="flex flex-1 gap-2">
          <input type="hidden" name="language" value={language} />
          <label className="sr-only" htmlFor="repository-search">
            {t("repository.search")}
          </label>
          <input
            id="repository-search"
            type="search"
            name="q"
            defaultValue={query}
            placeholder={t("repository.search")}
            className="min-w-0 flex-1 rounded-md border border-slate-300 px-3 py-1.5 text-sm"
          />
          <button type="submit" className="rounded-md bg-slate-800 px-3 py-1.5 text-sm text-white">
            {t("repository.searchButton")}
          </button>
        </Form>
        <p className="text-sm text-slate-600" data-results-count aria-live="polite">
          {t("repository.results", { count })}
        </p>
      </div>
      {loadError ? (
        <p role="alert" className="rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800">
          {t(loadError)}{" "}
          <a href={`/settings/repository?language=${language}`} className="font-medium underline">
            {t("settings.retry")}
          </a>
        </p>
      ) : groups.length === 0 ? (
        <p className="py-6 text-center text-sm text-slate-500">{t("repository.noResults")}</p>
      ) : null}
      {groups.map((group) => (
        <section key={group.id} className="mb-6" aria-labelledby={`org-${group.id}`} data-organization={group.id}>
          <h3 id={`org-${group.id}`} className="mb-2 text-sm font-semibold tracking-wide text-slate-500 uppercase">
            {group.label}
          </h3>
          <ul className="grid gap-3 md:grid-cols-2">
            {group.templates.map((tpl) => (
              <li key={tpl.id} className="rounded-lg border border-slate-200 p-3" data-repository-template={tpl.id}>
                <div className="flex items-start gap-3">
                  <div className="flex-1">
                    <p className="font-medium">{tpl.name}</p>
                    <p className="text-sm text-slate-600">{tpl.description}</p>
                  </div>
                  {tpl.added ? (
                    <span
                      className="rounded-full bg-emerald-50 px-2 py-1 text-xs font-medium text-emerald-700"
                      data-state="added"
                    >
                      ✓ {t("repository.added")}
                    </span>
                  ) : (
                    <Form method="post">
                      <input type="hidden" name="templateId" value={tpl.id} />
                      <button
                        type="submit"
                        data-state="not-added"
                        data-pending-label={t("repository.adding")}
                        className="rounded-md bg-brand-600 px-3 py-1.5 text-xs font-medium text-white hover:bg-brand-700"
                      >
                        {t("repository.add")}
                      </button>
                    </Form>
                  )}
                </div>
                <p className="mt-2 text-xs text-slate-500">
                  {t("repository.sections")}: {tpl.elementNames.join(" · ")}
                </p>
              </li>
            ))}
          </ul>
        </section>
      ))}
    </Modal>
  );
}
