import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { DataTable, SectionHeader } from "~/components/ui/section";
import { formatDateTime, type Language } from "~/i18n";
import { recordingNumbers } from "~/models/recording-number";
import { listRecordings } from "~/models/workspace.server";
import { getFixedTFor, getLanguage } from "~/services/i18n.server";
import { requireUser } from "~/services/session.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? "Skribent" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const language = await getLanguage(request);
  const t = await getFixedTFor(language);
  const recordings = await listRecordings({ ownerId: user.id });
  const numbers = recordingNumbers(recordings.map((r) => r.storage_key));
  return {
    title: `${t("audio.title")} · Skribent`,
    language,
    recordings: recordings.map((r) => ({
      id: r.id,
      name: r.display_name ?? t("audio.recordingNumber", { n: numbers.get(r.storage_key) }),
      createdAt: r.created_at.toISOString(),
      status: r.transcription_status,
    })),
  };
}

export default function AudioSection() {
  const { recordings, language } = useLoaderData<typeof loader>();
  const { t } = useTranslation();
  return (
    <>
      <SectionHeader title={t("audio.title")} intro={t("audio.intro")} />
      <DataTable
        caption={t("audio.listTitle")}
        columns={[t("audio.columnFile"), t("audio.columnDate"), t("audio.columnStatus")]}
        empty={t("audio.empty")}
        rows={recordings.map((r) => [
          r.name,
          formatDateTime(r.createdAt, language as Language),
          t(`status.transcription.${r.status}`),
        ])}
      />
    </>
  );
}
