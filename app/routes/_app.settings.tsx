import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useTranslation } from "react-i18next";
import { SectionHeader } from "~/components/ui/section";
import { getFixedTFor, getLanguage } from "~/services/i18n.server";
import { requireUser } from "~/services/session.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? "Skribent" }];

export async function loader({ request }: LoaderFunctionArgs) {
  await requireUser(request);
  const t = await getFixedTFor(await getLanguage(request));
  return { title: `${t("settings.title")} · Skribent` };
}

export default function SettingsSection() {
  const { t } = useTranslation();
  return (
    <>
      <SectionHeader title={t("settings.title")} intro={t("settings.intro")} />
      {(["systemTemplates", "customTemplates"] as const).map((key) => (
        <section key={key} className="mb-6">
          <h2 className="mb-2 text-lg font-medium">{t(`settings.${key}`)}</h2>
          <div
            className="rounded-lg border border-slate-200 bg-white px-4 py-8 text-center text-sm text-slate-500"
            data-empty
          >
            {t("settings.emptyTemplates")}
          </div>
        </section>
      ))}
    </>
  );
}
