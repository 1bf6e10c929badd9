import { Link, useFormAction } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { formatDateTime, type Language } from "~/i18n";
import { PaginationNav } from "~/components/ui/pagination-nav";
import { withPage, type Pagination } from "~/services/web/pagination";
import { INTENT } from "./intents";
import { quiet, type RecordingView } from "./shared";

type TFunction = ReturnType<typeof useTranslation>["t"];

/**
 * What every row says, looked up once per list rather than once per row (issue 9 "Lists under load": the rows of a
 * page asked i18next some 1,000 times).
 */
function rowLabels(t: TFunction) {
  const cache = new Map<string, string>();
  const memo = (key: string, make: () => string) => {
    let text = cache.get(key);
    if (text === undefined) cache.set(key, (text = make()));
    return text;
  };
  return {
    transcribe: t("audio.transcribe"),
    transcribeTitle: t("audio.transcribeTitle"),
    audioDeleted: t("audio.audioDeleted"),
    consentMissing: t("consent.notDocumented"),
    play: t("audio.play"),
    edit: t("audio.edit"),
    delete: t("audio.delete"),
    status: (status: string) => memo(`status:${status}`, () => t(`common:status.transcription.${status}`)),
    letter: (status: string) =>
      memo(`letter:${status}`, () =>
        t("transcriptions:status.letter", { status: t(`common:status.letter.${status}`) }),
      ),
    failure: (reason: string) => t("transcriptions:status.failedReason", { reason }),
  };
}
type RowLabels = ReturnType<typeof rowLabels>;

/**
 * A row's actions as plain links and forms: this page is rendered on the server only (ADR 0006), so Remix's
 * <Link>/<Form> would add nothing but their router hooks, 200 times a page; the markup is the same.
 */
function Actions({
  recording,
  page,
  labels,
  action,
}: {
  recording: RecordingView;
  page: number;
  labels: RowLabels;
  action: string;
}) {
  const q = encodeURIComponent(recording.key);
  return (
    <div className="flex flex-wrap gap-2">
      <form method="post" action={action}>
        <input type="hidden" name="intent" value={INTENT.transcribe} />
        <input type="hidden" name="key" value={recording.key} />
        <button
          type="submit"
          className={`${quiet} disabled:cursor-not-allowed disabled:opacity-50`}
          disabled={!recording.canTranscribe}
          title={labels.transcribeTitle}
          data-action="transcribe"
        >
          {labels.transcribe}
        </button>
      </form>
      {recording.audioDeleted ? (
        <span className="self-center text-xs text-slate-500" data-audio-deleted>
          {labels.audioDeleted}
        </span>
      ) : (
        <a href={withPage(`/?play=${q}`, page)} className={`${quiet} hidden md:inline-block`} data-action="play">
          {labels.play}
        </a>
      )}
      <a href={withPage(`/?edit=${q}`, page)} className={quiet} data-action="edit">
        {labels.edit}
      </a>
      <a href={withPage(`/?delete=${q}`, page)} className={`${quiet} text-red-700`} data-action="delete">
        {labels.delete}
      </a>
    </div>
  );
}

/** SPEC §2 recordings list: table on desktop, cards on the phone, from one markup. */
export function RecordingList({
  recordings,
  pagination,
  language,
}: {
  recordings: RecordingView[];
  pagination: Pagination;
  language: Language;
}) {
  const { t } = useTranslation("recordings");
  const labels = rowLabels(t);
  const action = useFormAction();
  const processing = recordings.some((r) => r.status === "processing");
  return (
    <section aria-labelledby="recordings-title" data-recordings>
      {/* SPEC §4: lists refresh every 5 s while anything is processing. Without JavaScript the page reloads
          itself; with it, audio.js refreshes only the list (a reload would lose a half-filled dialog). */}
      {processing ? (
        <noscript>
          <meta httpEquiv="refresh" content="5" />
        </noscript>
      ) : null}
      <div className="mb-3 flex items-center justify-between">
        <h2 id="recordings-title" className="text-lg font-medium">
          {t("common:audio.listTitle")}
        </h2>
        <Link to={withPage("/", pagination.page)} className={quiet} data-action="refresh">
          {t("audio.refresh")}
        </Link>
      </div>
      {recordings.length === 0 ? (
        <p
          className="rounded-lg border border-slate-200 bg-white px-4 py-10 text-center text-sm text-slate-500"
          data-empty
        >
          {t("common:audio.empty")}
        </p>
      ) : (
        // One table for both widths (issue 26: the table and the phone cards used to be rendered side by side, every
        // row twice): .row-cards in tailwind.css makes its rows cards below md. A table rather than a list, because
        // from md up it is one, with column headers; the explicit roles keep it one for screen readers on phones,
        // where its parts are display: block and the headers are only read out.
        <table className="row-cards recording-cards" role="table">
          <thead role="rowgroup">
            <tr role="row">
              <th role="columnheader">{t("common:audio.columnFile")}</th>
              <th role="columnheader">{t("common:audio.columnDate")}</th>
              <th role="columnheader">{t("common:audio.columnStatus")}</th>
              <th role="columnheader">{t("audio.columnActions")}</th>
            </tr>
          </thead>
          <tbody role="rowgroup">
            {recordings.map((r) => (
              <tr key={r.key} role="row" data-recording={r.key}>
                <td role="cell">
                  <span className="font-medium" data-recording-name>
                    {r.name}
                  </span>
                  {/* The card leaves the file name out, as it always did. */}
                  <span className="hidden text-xs text-slate-500 md:block">{r.fileName}</span>
                  {/* On a phone, below the date and status, as the card always had it (tailwind.css). */}
                  <div data-card-later>
                    <Consent recording={r} labels={labels} />
                    <Tags tags={r.tags} />
                  </div>
                </td>
                <td role="cell" className="max-md:text-xs max-md:text-slate-500">
                  {formatDateTime(r.createdAt, language)}
                </td>
                <td role="cell">
                  <Status recording={r} labels={labels} />
                </td>
                <td role="cell" className="max-md:mt-3">
                  <Actions recording={r} page={pagination.page} labels={labels} action={action} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <PaginationNav pagination={pagination} path="/" />
    </section>
  );
}

/** SPEC §4 status labels; a failure says why, and a queued letter says so honestly. */
function Status({ recording, labels }: { recording: RecordingView; labels: RowLabels }) {
  const processing = recording.status === "processing";
  return (
    <span className="block text-sm" data-status={recording.status} data-processing={processing ? "" : undefined}>
      <span className={recording.status === "failed" ? "font-medium text-red-700" : undefined}>
        {labels.status(recording.status)}
      </span>
      {recording.waiting ? (
        <span className="block text-xs text-slate-600" data-waiting-for-model>
          {recording.waiting}
        </span>
      ) : null}
      {recording.failure ? (
        <span className="block text-xs text-red-700" data-failure>
          {labels.failure(recording.failure)}
        </span>
      ) : null}
      {recording.letterStatus ? (
        <span className="block text-xs text-slate-500" data-letter-status={recording.letterStatus}>
          {labels.letter(recording.letterStatus)}
        </span>
      ) : null}
      {recording.audioDeletedOn ? (
        <span className="block text-xs text-slate-500" data-audio-deleted-on>
          {recording.audioDeletedOn}
        </span>
      ) : null}
    </span>
  );
}

/** The patient's consent, or the mark that it was not documented (issue 22). */
function Consent({ recording, labels }: { recording: RecordingView; labels: RowLabels }) {
  if (recording.consent)
    return (
      <span className="block text-xs text-slate-600" data-consent="documented">
        {recording.consent}
      </span>
    );
  return (
    <span
      className="mt-1 inline-block rounded bg-amber-100 px-1.5 py-0.5 text-xs text-amber-900"
      data-consent="missing"
    >
      {labels.consentMissing}
    </span>
  );
}

function Tags({ tags }: { tags: string[] }) {
  if (tags.length === 0) return null;
  return (
    <span className="mt-1 flex flex-wrap gap-1" data-tags>
      {tags.map((tag) => (
        <span key={tag} className="rounded-full bg-brand-50 px-2 py-0.5 text-xs text-brand-700">
          {tag}
        </span>
      ))}
    </span>
  );
}
