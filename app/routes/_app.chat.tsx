import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useTranslation } from "react-i18next";
import { SectionHeader } from "~/components/ui/section";
import { getFixedTFor, getLanguage } from "~/services/i18n.server";
import { requireUser } from "~/services/session.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? "Skribent" }];

export async function loader({ request }: LoaderFunctionArgs) {
  await requireUser(request);
  const t = await getFixedTFor(await getLanguage(request));
  return { title: `${t("chat.title")} · Skribent` };
}

export default function ChatSection() {
  const { t } = useTranslation();
  return (
    <>
      <SectionHeader title={t("chat.title")} intro={t("chat.intro")} />
      <div
        className="rounded-lg border border-slate-200 bg-white px-4 py-10 text-center text-sm text-slate-500"
        data-empty
      >
        {t("chat.empty")}
      </div>
    </>
  );
}
