import { Form, Link } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { button, quiet } from "~/components/ui/buttons";
import { formatDateTime, type Language } from "~/i18n";
import type { DiffSection } from "./types";
import { INTENT } from "./schema";

// A refinement proposal, the version history and a comparison with the current version: per-section changes
// with a word diff (<ins>/<del>). Every text is rendered by React as text, never as markup.

const changeStyle: Record<DiffSection["status"], string> = {
  added: "bg-emerald-100 text-emerald-900",
  removed: "bg-red-100 text-red-900",
  changed: "bg-amber-100 text-amber-900",
  unchanged: "bg-slate-100 text-slate-600",
};

export function DiffList({ changes }: { changes: DiffSection[] }) {
  const { t } = useTranslation("letters");
  if (changes.length === 0) return <p className="text-sm text-slate-500">{t("versions.noChanges")}</p>;
  return (
    <ol className="space-y-3">
      {changes.map((c, i) => (
        <li
          key={`${c.title}-${i}`}
          className="rounded-md border border-slate-200 bg-white p-3"
          data-diff-section={c.title}
          data-change={c.status}
        >
          <h4 className="mb-1 flex flex-wrap items-center gap-2 text-sm font-medium">
            {c.title || t("editor.fullTextTitle")}
            <span className={`rounded-full px-2 py-0.5 text-xs font-normal ${changeStyle[c.status]}`}>
              {t(`versions.change.${c.status}`)}
            </span>
          </h4>
          {c.ops.length > 0 ? (
            <p className="text-sm leading-relaxed whitespace-pre-wrap">
              {c.ops.map((o, j) =>
                o.op === "add" ? (
                  <ins key={j} className="bg-emerald-100 text-emerald-900 underline decoration-emerald-600">
                    {o.text}
                  </ins>
                ) : o.op === "del" ? (
                  <del key={j} className="bg-red-100 text-red-900 line-through decoration-red-600">
                    {o.text}
                  </del>
                ) : (
                  <span key={j}>{o.text}</span>
                ),
              )}
            </p>
          ) : null}
        </li>
      ))}
    </ol>
  );
}

export type ProposalView = {
  id: string;
  query: string;
  status: "open" | "accepted" | "rejected";
  stale: boolean;
  changes: DiffSection[];
};

export function Proposal({ proposal, backTo }: { proposal: ProposalView; backTo: string }) {
  const { t } = useTranslation("letters");
  const open = proposal.status === "open";
  return (
    <section
      aria-labelledby="proposal-title"
      className="space-y-4"
      data-proposal={proposal.id}
      data-proposal-status={proposal.status}
      data-stale={proposal.stale ? "" : undefined}
    >
      <h3 id="proposal-title" className="text-lg font-medium">
        {t("refine.proposalTitle")}
      </h3>
      <p className="text-sm text-slate-700">
        {t("refine.instructionWas")} <q className="italic">{proposal.query}</q>
      </p>
      {!open ? (
        <p className="rounded border border-slate-300 bg-slate-50 px-3 py-2 text-sm" data-decided>
          {t(`refine.decided_${proposal.status}`)}
        </p>
      ) : proposal.stale ? (
        <p role="alert" className="rounded border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900">
          {t("refine.stale")}
        </p>
      ) : (
        <p className="text-sm text-slate-600">{t("refine.acceptHint")}</p>
      )}
      <DiffList changes={proposal.changes} />
      <div className="flex flex-wrap items-center gap-2">
        {open ? (
          <Form method="post" className="flex flex-wrap gap-2">
            <input type="hidden" name="proposalId" value={proposal.id} />
            {/* A stale proposal can only be rejected (accepting would overwrite the newer version). */}
            {proposal.stale ? null : (
              <button type="submit" name="intent" value={INTENT.accept} className={button} data-action="accept">
                {t("refine.accept")}
              </button>
            )}
            <button type="submit" name="intent" value={INTENT.reject} className={quiet} data-action="reject">
              {t("refine.reject")}
            </button>
          </Form>
        ) : null}
        <Link to={backTo} className={quiet} data-action="back">
          {t("refine.back")}
        </Link>
      </div>
    </section>
  );
}

export type VersionView = {
  version: number;
  kind: "generated" | "edited" | "refined" | "restored" | "redo";
  author: string | null;
  createdAt: string;
  note: string | null;
  current: boolean;
  changes: DiffSection[] | null;
};

function RestoreForm({ version }: { version: number }) {
  const { t } = useTranslation("letters");
  return (
    <Form method="post">
      <input type="hidden" name="version" value={version} />
      <button type="submit" name="intent" value={INTENT.restore} className={quiet} data-action="restore">
        {t("versions.restore")}
      </button>
    </Form>
  );
}

export function Versions({
  versions,
  language,
  basePath,
  busy,
}: {
  versions: VersionView[];
  language: Language;
  basePath: string;
  busy: boolean;
}) {
  const { t } = useTranslation("letters");
  return (
    <section aria-labelledby="versions-title" className="space-y-4" data-versions>
      <h3 id="versions-title" className="text-lg font-medium">
        {t("versions.title")}
      </h3>
      <p className="text-sm text-slate-600">{t("versions.restoreHint")}</p>
      <ol className="space-y-3">
        {versions.map((v) => (
          <li
            key={v.version}
            className="rounded-md border border-slate-200 bg-white p-3 text-sm"
            data-version={v.version}
            data-kind={v.kind}
            data-current={v.current ? "" : undefined}
          >
            <p className="flex flex-wrap items-center gap-x-2 gap-y-1">
              <span className="font-medium">{t("versions.version", { n: v.version })}</span>
              <span className="rounded-full bg-slate-100 px-2 py-0.5 text-xs">{t(`versions.kind.${v.kind}`)}</span>
              {v.current ? (
                <span className="rounded-full bg-brand-50 px-2 py-0.5 text-xs text-brand-700">
                  {t("versions.current")}
                </span>
              ) : null}
              <span className="text-slate-600">
                {t("versions.byAt", {
                  name: v.author ?? t("versions.unknownAuthor"),
                  date: formatDateTime(v.createdAt, language),
                })}
              </span>
            </p>
            {v.kind === "restored" && v.note ? (
              <p className="mt-1 text-xs text-slate-600">{t("versions.restoredFrom", { n: v.note })}</p>
            ) : null}
            {v.kind === "refined" && v.note ? (
              <p className="mt-1 text-xs text-slate-600">
                {t("refine.instructionWas")} <q className="italic">{v.note}</q>
              </p>
            ) : null}
            {v.changes === null ? (
              <p className="mt-1 text-xs text-slate-500">{t("versions.first")}</p>
            ) : (
              <details className="mt-2">
                <summary className="cursor-pointer text-xs text-slate-600">
                  {t("versions.changes", { count: v.changes.length })}
                </summary>
                <div className="mt-2">
                  <DiffList changes={v.changes} />
                </div>
              </details>
            )}
            {v.current ? null : (
              <div className="mt-2 flex flex-wrap gap-2">
                <Link to={`${basePath}?compare=${v.version}`} className={quiet} data-action="compare">
                  {t("versions.compare")}
                </Link>
                {busy ? null : <RestoreForm version={v.version} />}
              </div>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}

export function Compare({
  compare,
  current,
  language,
  basePath,
  busy,
}: {
  compare: { version: number; kind: VersionView["kind"]; createdAt: string; changes: DiffSection[] };
  current: number;
  language: Language;
  basePath: string;
  busy: boolean;
}) {
  const { t } = useTranslation("letters");
  return (
    <section aria-labelledby="compare-title" className="space-y-4" data-compare={compare.version}>
      <h3 id="compare-title" className="text-lg font-medium">
        {t("versions.compareTitle", { n: compare.version, current })}
      </h3>
      <p className="text-sm text-slate-600">
        {t("versions.compareHint", { n: compare.version, date: formatDateTime(compare.createdAt, language) })}
      </p>
      <DiffList changes={compare.changes} />
      <div className="flex flex-wrap gap-2">
        {busy || compare.version === current ? null : <RestoreForm version={compare.version} />}
        <Link to={`${basePath}?versions=1`} className={quiet} data-action="versions">
          {t("versions.backToVersions")}
        </Link>
      </div>
      <p className="text-xs text-slate-500">{t("versions.restoreHint")}</p>
    </section>
  );
}
