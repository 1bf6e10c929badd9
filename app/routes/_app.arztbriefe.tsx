import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { DataTable, SectionHeader } from "~/components/ui/section";
import { formatDateTime, type Language } from "~/i18n";
import { listLetters } from "~/models/workspace.server";
import { getFixedTFor, getLanguage } from "~/services/i18n.server";
import { requireUser } from "~/services/session.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? "Skribent" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const language = await getLanguage(request);
  const t = await getFixedTFor(language);
  const letters = await listLetters({ ownerId: user.id });
  return {
    title: `${t("arztbriefe.title")} · Skribent`,
    language,
    letters: letters.map((l) => ({
      id: l.id,
      name: l.display_name ?? l.original_filename ?? "—",
      createdAt: l.created_at.toISOString(),
    })),
  };
}

export default function ArztbriefeSection() {
  const { letters, language } = useLoaderData<typeof loader>();
  const { t } = useTranslation();
  return (
    <>
      <SectionHeader title={t("arztbriefe.title")} intro={t("arztbriefe.intro")} />
      <DataTable
        caption={t("arztbriefe.title")}
        columns={[t("arztbriefe.columnFile"), t("arztbriefe.columnCreated")]}
        empty={t("arztbriefe.empty")}
        rows={letters.map((l) => [l.name, formatDateTime(l.createdAt, language as Language)])}
      />
    </>
  );
}
