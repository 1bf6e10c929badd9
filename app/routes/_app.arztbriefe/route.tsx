import { parseWithZod } from "@conform-to/zod";
import { json, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, Outlet, useActionData, useLoaderData, useOutlet } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { Dismissible } from "~/components/shell/dismissible";
import type { RouteHandle } from "~/components/page-scripts";
import { quiet } from "~/components/ui/buttons";
import { Modal } from "~/components/ui/modal";
import { SectionHeader } from "~/components/ui/section";
import { formatDateTime, type Language } from "~/i18n";
import { consentSummary } from "~/services/recordings/consent.server";
import { findNumberedLetter, pageOfLetters } from "~/models/recording-list.server";
import { auditLetter } from "~/services/audit/events.server";
import { notFound } from "~/services/web/not-found.server";
import { DomainError, statusFor } from "~/services/web/domain-error.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { deleteLetter } from "~/services/letters/editing.server";
import { requireUser } from "~/services/web/session.server";
import { meterCall } from "~/services/admin/usage.server";
import { redirectWithToast } from "~/services/web/toast.server";
import { isUnknownIntent } from "~/components/forms/fields";
import { LetterStatusLabel, type LetterStatusView } from "~/routes/_app.arztbriefe.$/letter-status";
import { deleteUrl, editorUrl, redoUrl } from "~/routes/_app.arztbriefe.$/paths";
import { PaginationNav } from "~/components/ui/pagination-nav";
import { loadPage, withPage } from "~/services/web/pagination";
import { INTENT, letterListActionSchema } from "./schema";

// SPEC §2 "Arztbriefe section": the letters with their source recording, status and actions. The editor and
// the redo dialog are nested routes rendered over this list (server-rendered modals); the delete confirmation
// is `?delete=<key>`. While a letter is processing its row is greyed with a spinner and the list refreshes
// itself every 5 s (SPEC §4): without JavaScript by a noscript refresh, with it by letter.js.

export const handle: RouteHandle = {
  i18n: ["common", "recordings", "letters"],
  scripts: ["shell", "letter"],
};

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? "Skribent" }];

type LetterRow = LetterStatusView & {
  key: string;
  name: string;
  fileName: string;
  /** The patient's consent (issue 22), or "Einwilligung nicht dokumentiert" when it was not documented. */
  consent: { text: string; documented: boolean };
  /** "Freigegeben am …" once the doctor released it. */
  released: string | null;
  createdAt: string;
  versions: number;
  /** Redo needs the template the letter was written with (SPEC §4 "Redo letter"). */
  canRedo: boolean;
};

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const language = await getLanguage(request);
  const t = await getFixedTFor(language, ["common", "recordings", "letters"]);
  const url = new URL(request.url);
  const deleteKey = url.searchParams.get("delete");
  const [page, toDelete] = await Promise.all([
    loadPage(url, (at) => pageOfLetters({ ownerId: user.id, ...at })),
    deleteKey ? findNumberedLetter({ ownerId: user.id, key: deleteKey }) : undefined,
  ]);
  if (deleteKey && !toDelete) notFound();
  const view = (l: Omit<(typeof page.rows)[number], "total">): LetterRow => {
    // A finished job says nothing more than the letter's own status.
    const job = l.job_status && l.job_status !== "completed" ? l.job_status : null;
    const processing = l.medical_letter_status === "processing" || job === "queued" || job === "running";
    return {
      key: l.storage_key,
      name: l.display_name ?? t("common:audio.recordingNumber", { n: l.number }),
      fileName: l.original_filename,
      consent: (() => {
        const text = consentSummary(t, l, (date) => formatDateTime(date, language));
        return text ? { text, documented: true } : { text: t("recordings:consent.notDocumented"), documented: false };
      })(),
      released: l.released_at ? t("letters:editor.released", { date: formatDateTime(l.released_at, language) }) : null,
      createdAt: l.created_at.toISOString(),
      versions: l.current_version,
      status: l.medical_letter_status,
      processing,
      errorKey: !processing && job === "failed" ? l.job_error_key : null,
      canRedo: Boolean(l.template_id) && !processing,
    };
  };
  const rows = page.rows.map(view);
  const { pagination } = page;
  const confirmDelete = toDelete ? view(toDelete) : undefined;
  await auditLetter(request, user.id, "letter.list");
  return {
    title: `${t("arztbriefe.title")} · Skribent`,
    language,
    rows,
    pagination,
    confirmDelete: confirmDelete ?? null,
  };
}

export async function action({ request }: ActionFunctionArgs) {
  const user = await requireUser(request);
  const submission = parseWithZod(await request.formData(), { schema: letterListActionSchema });
  if (isUnknownIntent(submission)) throw new Response("Unknown intent", { status: 400 });
  if (submission.status !== "success") return json({ result: submission.reply() }, { status: 400 });
  meterCall(user.id, "delete-arztbrief");
  const { key } = submission.value;
  const deleted = (outcome: "success" | "failure") => auditLetter(request, user.id, "letter.delete", key, outcome);
  try {
    await deleteLetter({ userId: user.id, key });
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    await deleted("failure");
    if (error.kind === "not_found" || error.kind === "invalid") notFound();
    // A letter job started meanwhile: nothing was deleted, and the page says why.
    const t = await getFixedTFor(await getLanguage(request), ["letters"]);
    return json({ error: t(error.message, error.values) }, { status: statusFor(error.kind) });
  }
  await deleted("success");
  return redirectWithToast("/arztbriefe", { type: "success", key: "letters:toast.deleted" });
}

type ActionLabels = { view: string; redo: string; busyTitle: string; delete: string };

/**
 * A row's actions as plain links: the list is rendered on the server only (ADR 0006), so Remix's <Link> would add
 * nothing but its router hooks for every link of every row; the labels are looked up once.
 */
function Actions({ row, page, labels }: { row: LetterRow; page: number; labels: ActionLabels }) {
  const disabled = `${quiet} cursor-not-allowed opacity-50`;
  return (
    <div className="flex flex-wrap gap-2">
      <a href={editorUrl(row.key)} className={quiet} data-action="view">
        {labels.view}
      </a>
      {row.canRedo ? (
        <a href={redoUrl(row.key)} className={quiet} data-action="redo">
          {labels.redo}
        </a>
      ) : (
        <button type="button" disabled className={disabled} title={labels.busyTitle} data-action="redo">
          {labels.redo}
        </button>
      )}
      {/* SPEC §4: delete is disabled while processing. */}
      {row.processing ? (
        <button type="button" disabled className={disabled} title={labels.busyTitle} data-action="delete">
          {labels.delete}
        </button>
      ) : (
        <a href={withPage(deleteUrl(row.key), page)} className={`${quiet} text-red-700`} data-action="delete">
          {labels.delete}
        </a>
      )}
    </div>
  );
}

function DeleteDialog({ row, error, back }: { row: LetterRow; error: string | null; back: string }) {
  const { t } = useTranslation("letters");
  return (
    <Modal title={t("list.deleteTitle", { name: row.name })} closeTo={back} closeLabel={t("list.cancel")}>
      <div data-confirm-delete={row.key}>
        {error ? (
          <p role="alert" className="mb-3 rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800">
            {error}
          </p>
        ) : null}
        <p className="text-sm text-slate-700">{t("list.deleteBody", { count: row.versions })}</p>
        <p className="mt-2 text-sm text-slate-700">{t("list.deleteKeeps")}</p>
        <div className="mt-6 flex flex-wrap justify-end gap-2">
          <Link to={back} className="rounded-md px-4 py-2 text-sm text-slate-700 hover:bg-slate-100">
            {t("list.cancel")}
          </Link>
          <Form method="post" action="/arztbriefe">
            <input type="hidden" name="intent" value={INTENT.delete} />
            <input type="hidden" name="key" value={row.key} />
            <button
              type="submit"
              className="rounded-md bg-red-600 px-4 py-2 text-sm font-medium text-white hover:bg-red-700 disabled:opacity-50"
              disabled={row.processing}
              data-action="confirm-delete"
            >
              {t("list.deleteConfirm")}
            </button>
          </Form>
        </div>
      </div>
    </Modal>
  );
}

export default function ArztbriefeSection() {
  const { rows, pagination, language, confirmDelete } = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const outlet = useOutlet();
  const { t } = useTranslation("letters");
  const processing = rows.some((r) => r.processing);
  const error = actionData && "error" in actionData ? actionData.error : null;
  const lang = language as Language;
  const labels = {
    view: t("list.view"),
    redo: t("list.redo"),
    busyTitle: t("list.busyTitle"),
    delete: t("list.delete"),
  };
  return (
    <>
      <SectionHeader title={t("common:arztbriefe.title")} intro={t("common:arztbriefe.intro")} />
      {error && !confirmDelete ? (
        <div className="mb-4">
          <Dismissible tone="error" role="alert" dismissLabel={t("common:toast.dismiss")}>
            {error}
          </Dismissible>
        </div>
      ) : null}
      <section aria-labelledby="letters-title" data-letters data-poll-list="letters">
        {/* Only the bare list reloads itself: an open editor or dialog must never lose what was typed. */}
        {processing && !outlet && !confirmDelete ? (
          <noscript>
            <meta httpEquiv="refresh" content="5" />
          </noscript>
        ) : null}
        <div className="mb-3 flex items-center justify-between gap-2">
          <h2 id="letters-title" className="sr-only">
            {t("common:arztbriefe.title")}
          </h2>
          <p className="text-sm text-slate-500" aria-live="polite">
            {processing ? t("list.processing") : null}
          </p>
          <Link to={withPage("/arztbriefe", pagination.page)} className={quiet} data-action="refresh">
            {t("list.refresh")}
          </Link>
        </div>
        {rows.length === 0 ? (
          <p
            className="rounded-lg border border-slate-200 bg-white px-4 py-10 text-center text-sm text-slate-500"
            data-empty
          >
            {t("common:arztbriefe.empty")}
          </p>
        ) : (
          // One table for both widths (issue 26: the table and the phone cards used to be rendered side by side,
          // every row twice): .row-cards in tailwind.css makes its rows cards below md. A table rather than a list,
          // because from md up it is one, with column headers; the explicit roles keep it one for screen readers on
          // phones, where its parts are display: block and the headers are only read out.
          <table className="row-cards" role="table">
            <caption className="sr-only">{t("common:arztbriefe.title")}</caption>
            <thead role="rowgroup">
              <tr role="row">
                {[
                  t("common:arztbriefe.columnFile"),
                  t("common:arztbriefe.columnCreated"),
                  t("list.columnStatus"),
                  t("list.columnActions"),
                ].map((label) => (
                  <th key={label} scope="col" role="columnheader" className="font-medium">
                    {label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody role="rowgroup">
              {rows.map((r) => (
                <tr
                  key={r.key}
                  className={r.processing ? "opacity-60 md:bg-slate-50" : undefined}
                  role="row"
                  data-letter-row={r.key}
                >
                  <td role="cell">
                    <span className="font-medium" data-letter-name>
                      {r.name}
                    </span>
                    <span className="block text-xs text-slate-500">{r.fileName}</span>
                    <LetterFacts row={r} />
                  </td>
                  <td role="cell" className="max-md:text-xs max-md:text-slate-500">
                    {formatDateTime(r.createdAt, lang)}
                  </td>
                  <td role="cell" className="max-md:mt-2">
                    <LetterStatusLabel view={r} />
                  </td>
                  <td role="cell" className="max-md:mt-3">
                    <Actions row={r} page={pagination.page} labels={labels} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <PaginationNav pagination={pagination} path="/arztbriefe" />
      </section>
      {confirmDelete ? (
        <DeleteDialog row={confirmDelete} error={error} back={withPage("/arztbriefe", pagination.page)} />
      ) : null}
      <Outlet />
    </>
  );
}

/** Released or not, and the patient's consent to the recording it was written from (issue 22). */
function LetterFacts({ row }: { row: LetterRow }) {
  return (
    <>
      {row.released ? (
        <span className="block text-xs text-emerald-800" data-released>
          {row.released}
        </span>
      ) : null}
      <span
        className={
          row.consent.documented
            ? "block text-xs text-slate-600"
            : "mt-1 inline-block rounded bg-amber-100 px-1.5 py-0.5 text-xs text-amber-900"
        }
        data-consent={row.consent.documented ? "documented" : "missing"}
      >
        {row.consent.text}
      </span>
    </>
  );
}
