import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, Outlet, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { RouteHandle } from "~/components/page-scripts";
import { quiet } from "~/components/ui/buttons";
import { DataTable, SectionHeader } from "~/components/ui/section";
import { formatDateTime, type Language } from "~/i18n";
import { recordingNumbers } from "~/models/recording-number";
import { listReadyRecordings } from "~/models/recording.server";
import { listTranscribedRecordings } from "~/models/transcription.server";
import { audit } from "~/services/audit.server";
import { getFixedTFor, getLanguage } from "~/services/i18n.server";
import { requireUser } from "~/services/session.server";

// SPEC §2 "Transcriptions section": recordings with a completed transcript. The viewer is the nested
// route below (a server-rendered modal); the letter column and actions come with the letters issue.

export const handle: RouteHandle = {
  i18n: ["common", "recordings", "transcriptions"],
  scripts: ["shell", "transcript"],
};

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? "Skribent" }];

/** The viewer's address: the transcript key without its leading "transcripts/" (as SPEC §7 does). */
export function viewerPath(transcriptKey: string) {
  return `/transcriptions/${transcriptKey.replace(/^transcripts\//, "")}`;
}

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const language = await getLanguage(request);
  const t = await getFixedTFor(language, ["common", "recordings"]);
  const [rows, all] = await Promise.all([
    listTranscribedRecordings({ ownerId: user.id }),
    listReadyRecordings({ ownerId: user.id }),
  ]);
  // Numbered among all recordings, as on the Audio page.
  const numbers = recordingNumbers(all.map((r) => r.storage_key));
  await audit({ userId: user.id, action: "transcript.list", entityType: "transcript", outcome: "success", request });
  return {
    title: `${t("transcriptions.title")} · Skribent`,
    language,
    rows: rows.map((r) => ({
      key: r.storage_key,
      name: r.display_name ?? t("recordings:audio.recordingNumber", { n: numbers.get(r.source_key) }),
      fileName: r.original_filename,
      createdAt: r.created_at.toISOString(),
    })),
  };
}

export default function TranscriptionsSection() {
  const { rows, language } = useLoaderData<typeof loader>();
  const { t } = useTranslation("transcriptions");
  return (
    <>
      <SectionHeader title={t("common:transcriptions.title")} intro={t("common:transcriptions.intro")} />
      <div className="mb-3 flex justify-end">
        <Link to="/transcriptions" className={quiet} data-action="refresh">
          {t("list.refresh")}
        </Link>
      </div>
      <DataTable
        caption={t("common:transcriptions.title")}
        columns={[
          t("common:transcriptions.columnFile"),
          t("common:transcriptions.columnCreated"),
          t("recordings:audio.columnActions"),
        ]}
        empty={t("common:transcriptions.empty")}
        rows={rows.map((r) => [
          <span key="name" data-transcript-row={r.key}>
            <span className="font-medium">{r.name}</span>
            <span className="block text-xs text-slate-500">{r.fileName}</span>
          </span>,
          formatDateTime(r.createdAt, language as Language),
          <div key="actions" className="flex flex-wrap gap-2">
            <Link to={viewerPath(r.key)} className={quiet} data-action="view">
              {t("list.view")}
            </Link>
            <Form method="get" action={viewerPath(r.key)}>
              <input type="hidden" name="delete" value="1" />
              <button type="submit" className={`${quiet} text-red-700`} data-action="delete">
                {t("list.delete")}
              </button>
            </Form>
          </div>,
        ])}
      />
      <Outlet />
    </>
  );
}
