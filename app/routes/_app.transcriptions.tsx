import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { DataTable, SectionHeader } from "~/components/ui/section";
import { formatDateTime, type Language } from "~/i18n";
import { listTranscribedRecordings } from "~/models/workspace.server";
import { getFixedTFor, getLanguage } from "~/services/i18n.server";
import { requireUser } from "~/services/session.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? "Skribent" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const language = await getLanguage(request);
  const t = await getFixedTFor(language);
  const rows = await listTranscribedRecordings({ ownerId: user.id });
  return {
    title: `${t("transcriptions.title")} · Skribent`,
    language,
    rows: rows.map((r) => ({
      id: r.id,
      name: r.display_name ?? r.original_filename,
      createdAt: r.created_at.toISOString(),
      letterStatus: r.medical_letter_status,
    })),
  };
}

export default function TranscriptionsSection() {
  const { rows, language } = useLoaderData<typeof loader>();
  const { t } = useTranslation();
  return (
    <>
      <SectionHeader title={t("transcriptions.title")} intro={t("transcriptions.intro")} />
      <DataTable
        caption={t("transcriptions.title")}
        columns={[
          t("transcriptions.columnFile"),
          t("transcriptions.columnCreated"),
          t("transcriptions.columnLetterStatus"),
        ]}
        empty={t("transcriptions.empty")}
        rows={rows.map((r) => [
          r.name,
          formatDateTime(r.createdAt, language as Language),
          t(`status.letter.${r.letterStatus}`),
        ])}
      />
    </>
  );
}
