import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useRouteLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { RouteHandle } from "~/components/page-scripts";
import { ToastMessage } from "~/components/shell/toast";
import { quiet } from "~/components/ui/buttons";
import { Modal } from "~/components/ui/modal";
import { formatDate, formatDateTime, type Language } from "~/i18n";
import type { loader as workspaceLoader } from "~/routes/_app";
import { editorAction } from "./editor-action.server";
import { loadEditor } from "./editor-loader.server";
import { StructuredForm, TextView } from "./editor-views";
import { RefinePanel } from "./refine-panel";
import { RegenerateForm, RegenerationNotice } from "./regenerate-form";
import { Compare, Proposal, Versions } from "./history-views";
import { Spinner } from "./letter-status";
import { deleteUrl, editorUrl, exportUrl, redoUrl } from "./paths";
import type { EditorActionData } from "./types";
import { INTENT } from "./schema";
import { EvidenceSummary, EvidenceView } from "./evidence-view";

// SPEC §2 letter editor: a server-rendered modal over the Arztbriefe list at /arztbriefe/<key without
// "arztbriefe/">. Structured view (one box per section, saved as a new version) or read-only text view, the
// choice remembered in a cookie (`?view=`); a side panel to refine by instruction, which yields a proposal
// (`?proposal=<id>`) to accept or reject; the version history (`?versions=1`) with comparison (`?compare=<n>`)
// and restore. Everything a model or a transcript wrote is rendered as text.

export const handle: RouteHandle = {
  i18n: ["common", "letters"],
  scripts: ["letter", "voice", "letter-evidence"],
  ownsToast: true,
};

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: data?.kind === "letter" ? `${data.name} · Skribent` : "Skribent" },
];

export async function loader(args: LoaderFunctionArgs) {
  return loadEditor(args);
}

export async function action(args: ActionFunctionArgs) {
  return editorAction(args);
}

function Tab({ to, active, action, children }: { to: string; active: boolean; action: string; children: string }) {
  return (
    <Link
      to={to}
      className={`rounded-md px-3 py-1.5 text-sm ${active ? "bg-brand-50 font-medium text-brand-700" : "text-slate-600 hover:bg-slate-100"}`}
      aria-current={active ? "page" : undefined}
      data-action={action}
    >
      {children}
    </Link>
  );
}

export default function LetterEditor() {
  const data = useLoaderData<typeof loader>();
  const actionData = (useActionData<typeof action>() ?? null) as EditorActionData | null;
  const workspace = useRouteLoaderData<typeof workspaceLoader>("routes/_app");
  const { t } = useTranslation("letters");
  if (data.kind === "missingLanguage") {
    return (
      <Modal title={t("editor.untitled")} closeTo="/arztbriefe" closeLabel={t("editor.close")}>
        <p role="alert" className="rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800" data-error>
          {t("errors.languageMissing")}
        </p>
      </Modal>
    );
  }
  const base = editorUrl(data.key);
  const language = data.language as Language;
  const editing = data.mode === "edit";
  const failure = actionData && !["refine", "prompts", "regenerate"].includes(actionData.form) ? actionData : null;
  // A regeneration says itself that it runs (the letter is busy meanwhile, as during a redo).
  const regenerating = data.regeneration?.state === "processing";
  return (
    <Modal title={t("editor.title", { name: data.name })} closeTo="/arztbriefe" closeLabel={t("editor.close")} wide>
      {/* While a letter job writes a new version the page refreshes itself (letter.js does so with JavaScript). */}
      {data.busy ? (
        <noscript>
          <meta httpEquiv="refresh" content="5" />
        </noscript>
      ) : null}
      <div
        className="space-y-4"
        data-letter-editor={data.key}
        data-view={data.view}
        data-mode={data.mode}
        data-letter-busy={data.busy ? "" : undefined}
      >
        {/* The workspace shows the toast behind this dialog too; here it is readable. */}
        <ToastMessage toast={workspace?.toast ?? null} />
        <p className="text-sm text-slate-600">
          {t("editor.meta", { date: formatDateTime(data.createdAt, language), version: data.version })}
        </p>
        {data.release ? (
          <p className="text-sm text-emerald-800" data-released>
            {[
              t("editor.released", { date: formatDateTime(data.release.at, language) }),
              data.release.audioDeletedOn
                ? t("editor.audioDeletedOn", { date: formatDate(data.release.audioDeletedOn, language) })
                : null,
            ]
              .filter(Boolean)
              .join(" · ")}
          </p>
        ) : data.canRelease && !data.busy ? (
          <Form method="post" className="flex flex-wrap items-center gap-3" data-release-form>
            <input type="hidden" name="intent" value={INTENT.release} />
            <button type="submit" className={quiet} data-action="release">
              {t("editor.release")}
            </button>
            <span className="text-xs text-slate-500">{t("editor.releaseHelp")}</span>
          </Form>
        ) : null}
        <EvidenceSummary counts={data.evidenceCounts} to={`${base}?check=1`} />
        {typeof data.consent === "string" ? (
          <p className="text-xs text-slate-600" data-consent="documented">
            {data.consent}
          </p>
        ) : (
          <p className="inline-block rounded bg-amber-100 px-1.5 py-0.5 text-xs text-amber-900" data-consent="missing">
            {data.consent.missing}
          </p>
        )}
        {data.regeneration && (regenerating || data.mode !== "proposal") ? (
          <RegenerationNotice view={data.regeneration} base={base} />
        ) : null}
        {data.busy && !regenerating ? (
          <p
            role="status"
            className="flex items-center gap-2 rounded border border-sky-300 bg-sky-50 px-3 py-2 text-sm text-sky-900"
            data-busy
          >
            <Spinner /> {t("editor.busy")}
          </p>
        ) : null}
        {failure?.error ? (
          <div
            role="alert"
            className="rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800"
            data-error
          >
            <p>{failure.error}</p>
            {failure.conflict ? <p className="mt-1">{t("editor.conflictHint")}</p> : null}
          </div>
        ) : null}
        <nav
          className="flex flex-wrap items-center gap-1 border-b border-slate-200 pb-2"
          aria-label={t("editor.viewLabel")}
        >
          {data.plain ? null : (
            <Tab to={`${base}?view=structured`} active={editing && data.view === "structured"} action="view-structured">
              {t("editor.structured")}
            </Tab>
          )}
          <Tab to={`${base}?view=text`} active={editing && data.view === "text"} action="view-text">
            {t("editor.text")}
          </Tab>
          <Tab to={`${base}?check=1`} active={data.mode === "check"} action="check">
            {t("evidence.tab")}
          </Tab>
          <Tab to={`${base}?versions=1`} active={data.mode === "versions" || data.mode === "compare"} action="versions">
            {t("editor.versions", { count: data.version })}
          </Tab>
          <span className="flex-1" />
          {data.busy ? null : (
            <>
              <Link to={exportUrl(data.key)} className={quiet} data-action="export">
                {t("export.open")}
              </Link>
              <Link to={redoUrl(data.key)} className={quiet} data-action="redo">
                {t("list.redo")}
              </Link>
              <Link to={deleteUrl(data.key)} className={`${quiet} text-red-700`} data-action="delete">
                {t("list.delete")}
              </Link>
            </>
          )}
        </nav>
        {data.plain && editing ? <p className="text-xs text-slate-500">{t("editor.plainOnly")}</p> : null}
        <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_17rem]">
          <div className="min-w-0">
            {data.mode === "proposal" && data.proposal ? (
              <Proposal proposal={data.proposal} backTo={base} />
            ) : data.mode === "compare" && data.compare ? (
              <Compare
                compare={data.compare}
                current={data.version}
                language={language}
                basePath={base}
                busy={data.busy}
              />
            ) : data.mode === "check" && data.check ? (
              <EvidenceView
                evidence={data.check.evidence}
                transcriptPath={data.check.transcriptPath}
                audioUrl={data.check.audioUrl}
                busy={data.busy}
              />
            ) : data.mode === "versions" && data.versions ? (
              <Versions versions={data.versions} language={language} basePath={base} busy={data.busy} />
            ) : data.view === "text" ? (
              <TextView sections={data.sections} plainText={data.plainText} copyText={data.copyText ?? ""} />
            ) : (
              <StructuredForm
                sections={data.sections}
                version={data.version}
                busy={data.busy}
                saveError={actionData?.form === "save" ? actionData : null}
                evidence={data.sentenceEvidence}
              />
            )}
          </div>
          <div className="space-y-6">
            <RefinePanel
              sections={data.sections}
              plain={data.plain}
              busy={data.busy}
              prompts={data.prompts}
              limits={data.limits}
              actionData={actionData}
            />
            <RegenerateForm sections={data.sections} plain={data.plain} busy={data.busy} actionData={actionData} />
          </div>
        </div>
      </div>
    </Modal>
  );
}
