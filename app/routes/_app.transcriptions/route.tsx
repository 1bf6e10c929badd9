import { parseWithZod } from "@conform-to/zod";
import { json, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, Outlet, useLoaderData, useOutlet } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { RouteHandle } from "~/components/page-scripts";
import { quiet } from "~/components/ui/buttons";
import { DataTable, SectionHeader } from "~/components/ui/section";
import { formatDateTime, type Language } from "~/i18n";
import { consentSummary } from "~/services/recordings/consent.server";
import { pageOfTranscripts } from "~/models/recording-list.server";
import { auditTranscript } from "~/services/audit/events.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { requireUser } from "~/services/web/session.server";
import { LetterStatusLabel } from "~/routes/_app.arztbriefe.$/letter-status";
import {
  canCreateLetter,
  createLetterIntent,
  letterFailures,
  letterStatusOf,
} from "~/routes/_app.arztbriefe.$/letter-state.server";
import { editorUrl } from "~/routes/_app.arztbriefe.$/paths";
import { PaginationNav } from "~/components/ui/pagination-nav";
import { loadPage, withPage } from "~/services/web/pagination";
import { isUnknownIntent } from "~/components/forms/fields";
import { INTENT, transcriptionListActionSchema } from "./schema";
import { viewerPath } from "./paths";

// SPEC §2 "Transcriptions section": recordings with a completed transcript, their letter status (SPEC §4) and
// "Create letter". The viewer is the nested route below (a server-rendered modal). While a letter is being
// created the list refreshes itself every 5 s: noscript refresh without JavaScript, letter.js with it.

export const handle: RouteHandle = {
  i18n: ["common", "recordings", "transcriptions", "letters"],
  scripts: ["shell", "transcript", "letter"],
};

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? "Skribent" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const language = await getLanguage(request);
  const t = await getFixedTFor(language, ["common", "recordings"]);
  const { rows, pagination } = await loadPage(new URL(request.url), (at) =>
    pageOfTranscripts({ ownerId: user.id, ...at }),
  );
  const failures = await letterFailures(
    user.id,
    rows.map((r) => ({ id: r.recording_id, medical_letter_status: r.medical_letter_status })),
  );
  await auditTranscript(request, user.id, "transcript.list");
  return {
    title: `${t("transcriptions.title")} · Skribent`,
    language,
    pagination,
    consentMissing: t("recordings:consent.notDocumented"),
    rows: rows.map((r) => ({
      key: r.storage_key,
      sourceKey: r.source_key,
      name: r.display_name ?? t("common:audio.recordingNumber", { n: r.number }),
      fileName: r.original_filename,
      // The patient's consent to the recording (issue 22); null: not documented.
      consent: consentSummary(t, r, (date) => formatDateTime(date, language)),
      createdAt: r.created_at.toISOString(),
      letter: letterStatusOf({ id: r.recording_id, medical_letter_status: r.medical_letter_status }, failures),
      letterKey: r.letter_key,
      canCreateLetter: canCreateLetter(r.medical_letter_status),
    })),
  };
}

/** "Create letter" (SPEC §2): the letter job starts; the list shows its status and refreshes itself. */
export async function action({ request }: ActionFunctionArgs) {
  const user = await requireUser(request);
  const submission = parseWithZod(await request.formData(), { schema: transcriptionListActionSchema });
  if (isUnknownIntent(submission)) throw new Response("Unknown intent", { status: 400 });
  if (submission.status !== "success") return json({ result: submission.reply() }, { status: 400 });
  return createLetterIntent({ user, sourceKey: submission.value.key, request, redirectTo: "/transcriptions" });
}

export default function TranscriptionsSection() {
  const { rows, pagination, language, consentMissing } = useLoaderData<typeof loader>();
  const outlet = useOutlet();
  const { t } = useTranslation("transcriptions");
  const processing = rows.some((r) => r.letter.processing);
  // Looked up once, not once per row.
  const labels = {
    openLetter: t("letters:transcriptions.openLetter"),
    createLetter: t("letters:transcriptions.createLetter"),
    createDisabled: t("letters:transcriptions.createDisabled"),
    view: t("list.view"),
    delete: t("list.delete"),
  };
  return (
    <>
      <SectionHeader title={t("common:transcriptions.title")} intro={t("common:transcriptions.intro")} />
      <div className="mb-3 flex justify-end">
        <Link to={withPage("/transcriptions", pagination.page)} className={quiet} data-action="refresh">
          {t("list.refresh")}
        </Link>
      </div>
      <div data-transcriptions data-poll-list="transcriptions">
        {/* Only the bare list reloads itself: an open viewer or dialog is left alone. */}
        {processing && !outlet ? (
          <noscript>
            <meta httpEquiv="refresh" content="5" />
          </noscript>
        ) : null}
        <DataTable
          caption={t("common:transcriptions.title")}
          columns={[
            t("common:transcriptions.columnFile"),
            t("common:transcriptions.columnCreated"),
            t("common:transcriptions.columnLetterStatus"),
            t("recordings:audio.columnActions"),
          ]}
          empty={t("common:transcriptions.empty")}
          rows={rows.map((r) => [
            <span key="name" data-transcript-row={r.key}>
              <span className="font-medium">{r.name}</span>
              <span className="block text-xs text-slate-500">{r.fileName}</span>
              {r.consent ? (
                <span className="block text-xs text-slate-600" data-consent="documented">
                  {r.consent}
                </span>
              ) : (
                <span
                  className="mt-1 inline-block rounded bg-amber-100 px-1.5 py-0.5 text-xs text-amber-900"
                  data-consent="missing"
                >
                  {consentMissing}
                </span>
              )}
            </span>,
            formatDateTime(r.createdAt, language as Language),
            <LetterStatusLabel key="letter" view={r.letter} />,
            // Plain links and forms: this list is rendered on the server only (ADR 0006); Remix's <Link>/<Form>
            // would add only their router hooks, four times a row.
            <div key="actions" className="flex flex-wrap gap-2">
              {r.letterKey ? (
                <a href={editorUrl(r.letterKey)} className={quiet} data-action="open-letter">
                  {labels.openLetter}
                </a>
              ) : (
                <form method="post" action="/transcriptions">
                  <input type="hidden" name="intent" value={INTENT.createLetter} />
                  <input type="hidden" name="key" value={r.sourceKey} />
                  <button
                    type="submit"
                    className={`${quiet} disabled:cursor-not-allowed disabled:opacity-50`}
                    disabled={!r.canCreateLetter}
                    title={r.canCreateLetter ? undefined : labels.createDisabled}
                    data-action="create-letter"
                  >
                    {labels.createLetter}
                  </button>
                </form>
              )}
              <a href={viewerPath(r.key)} className={quiet} data-action="view">
                {labels.view}
              </a>
              <form method="get" action={viewerPath(r.key)}>
                <input type="hidden" name="delete" value="1" />
                <button type="submit" className={`${quiet} text-red-700`} data-action="delete">
                  {labels.delete}
                </button>
              </form>
            </div>,
          ])}
        />
        <PaginationNav pagination={pagination} path="/transcriptions" />
      </div>
      <Outlet />
    </>
  );
}
