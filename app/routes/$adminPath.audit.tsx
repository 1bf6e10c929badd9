import { json, type LoaderFunctionArgs } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { PeriodFilter } from "~/components/admin/period-filter";
import type { RouteHandle } from "~/components/page-scripts";
import { quiet } from "~/components/ui/buttons";
import { DataTable } from "~/components/ui/section";
import { formatDateTime } from "~/i18n";
import { auditEntries } from "~/models/admin.server";
import { adminGate } from "~/services/admin/admin.server";
import { periodFrom, periodQuery } from "~/services/admin/period.server";
import { getLanguage } from "~/services/web/i18n.server";

// The audit trail (ARCHITECTURE.md security baseline): who read or changed which recording, transcript or letter,
// when, with what outcome — never the content. Filtered by a part of the user's e-mail address and a period,
// newest first, 50 to a page; plain GET forms and links, no JavaScript.

export const handle: RouteHandle = { i18n: ["common", "admin"] };

const AUDIT_PAGE_SIZE = 50;
const MAX_USER_FILTER = 200;

export async function loader({ request, params }: LoaderFunctionArgs) {
  const gate = await adminGate(request, params, "admin.audit");
  if (!gate.admin) return json({ denied: true as const }, { status: 403 });
  const url = new URL(request.url);
  const period = periodFrom(url.searchParams, "7d");
  const user = (url.searchParams.get("user") ?? "").trim().slice(0, MAX_USER_FILTER);
  const page = Math.max(1, Math.min(10_000, Math.floor(Number(url.searchParams.get("page")) || 1)));
  const rows = await auditEntries({
    ...period.range,
    user: user || null,
    offset: (page - 1) * AUDIT_PAGE_SIZE,
    limit: AUDIT_PAGE_SIZE + 1,
  });
  const query = periodQuery(period);
  if (user) query.set("user", user);
  const pageHref = (n: number) => `?${new URLSearchParams([...query, ["page", String(n)]])}`;
  return json({
    denied: false as const,
    language: await getLanguage(request),
    period: { kind: period.kind, from: period.from, to: period.to, invalid: period.invalid },
    user,
    page,
    newer: page > 1 ? pageHref(page - 1) : null,
    older: rows.length > AUDIT_PAGE_SIZE ? pageHref(page + 1) : null,
    entries: rows.slice(0, AUDIT_PAGE_SIZE).map((row) => ({
      id: String(row.id),
      at: row.at.toISOString(),
      email: row.email,
      action: row.action,
      record: [row.entityType, row.entityId].filter(Boolean).join(" · "),
      outcome: row.outcome,
    })),
  });
}

export default function AdminAudit() {
  const data = useLoaderData<typeof loader>();
  const { t } = useTranslation("admin");
  if (data.denied) return null;
  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title" className="text-lg font-semibold">
        {t("audit.title")}
      </h2>
      <p className="mb-4 text-sm text-slate-600">{t("audit.intro")}</p>
      <PeriodFilter period={data.period}>
        <label className="flex flex-col gap-1 text-sm">
          {t("audit.user")}
          <input
            type="search"
            name="user"
            defaultValue={data.user}
            maxLength={MAX_USER_FILTER}
            className="rounded-md border border-slate-300 px-2 py-1.5 text-sm"
          />
        </label>
      </PeriodFilter>
      <DataTable
        caption={t("audit.title")}
        columns={[t("audit.at"), t("audit.who"), t("audit.action"), t("audit.record"), t("audit.outcome")]}
        empty={t("audit.empty")}
        rows={data.entries.map((entry) => [
          <time key="at" dateTime={entry.at} className="whitespace-nowrap">
            {formatDateTime(entry.at, data.language)}
          </time>,
          entry.email ?? t("audit.anonymous"),
          <code key="action" className="text-xs" data-audit-action>
            {entry.action}
          </code>,
          <span key="record" className="text-xs break-all">
            {entry.record || "–"}
          </span>,
          t(`audit.outcomes.${entry.outcome}`),
        ])}
      />
      <nav aria-label={t("audit.pages")} className="mt-4 flex items-center gap-3 text-sm">
        {data.newer ? (
          <Link to={data.newer} className={quiet} rel="prev">
            {t("audit.newer")}
          </Link>
        ) : null}
        <span className="text-slate-500">{t("audit.page", { page: data.page })}</span>
        {data.older ? (
          <Link to={data.older} className={quiet} rel="next">
            {t("audit.older")}
          </Link>
        ) : null}
      </nav>
    </section>
  );
}
