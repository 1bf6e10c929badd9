import { json, type LoaderFunctionArgs } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { HealthTiles, type HealthTile } from "~/components/admin/health-tiles";
import { PeriodFilter } from "~/components/admin/period-filter";
import { UsageTable } from "~/components/admin/usage-table";
import type { RouteHandle } from "~/components/page-scripts";
import { quiet } from "~/components/ui/buttons";
import { adminGate } from "~/services/admin/admin.server";
import { periodFrom, periodQuery } from "~/services/admin/period.server";
import { getConfig } from "~/services/config/config.server";
import { healthReport, type CheckResult } from "~/services/admin/health.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { modelsTile } from "~/services/model-store/model-notice.server";
import { usageByUser } from "~/services/admin/usage.server";

// The dashboard's overview (SPEC §2 "Admin dashboard"): the system health tiles, measured live on every visit
// (each check has its own time-out, admin/health.server.ts), and the per-user usage table of a period with its CSV.

export const handle: RouteHandle = { i18n: ["common", "admin"] };

const tileOrder = [
  "database",
  "storage",
  "llm_primary",
  "llm_secondary",
  "media_conversion",
  "antivirus",
  "speech_recognition",
  "speech_token",
] as const satisfies ReadonlyArray<HealthTile["name"]>;

function tileOf(name: HealthTile["name"], result: CheckResult | undefined): HealthTile {
  return {
    name,
    status: result?.status ?? "error",
    detail: result?.detail ?? null,
    latencyMs: result?.latency_ms ?? null,
  };
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  const gate = await adminGate(request, params, "admin.dashboard");
  if (!gate.admin) return json({ denied: true as const }, { status: 403 });
  const period = periodFrom(new URL(request.url).searchParams, "30d");
  const [report, users, language] = await Promise.all([
    healthReport(),
    usageByUser(period.range),
    getLanguage(request),
  ]);
  const results: Record<string, CheckResult> = { ...report.service_tests, storage: report.storage };
  const t = await getFixedTFor(language, ["admin"]);
  return json({
    denied: false as const,
    language,
    tiles: [...tileOrder.map((name) => tileOf(name, results[name])), modelsTile(t, language)],
    period: { kind: period.kind, from: period.from, to: period.to, invalid: period.invalid },
    users,
    csvHref: `${getConfig().admin.path}/usage.csv?${periodQuery(period)}`,
  });
}

export default function AdminOverview() {
  const data = useLoaderData<typeof loader>();
  const { t } = useTranslation("admin");
  if (data.denied) return null;
  return (
    <>
      <section aria-labelledby="health-title" className="mb-10">
        <h2 id="health-title" className="text-lg font-semibold">
          {t("health.title")}
        </h2>
        <p className="mb-4 text-sm text-slate-600">{t("health.intro")}</p>
        <HealthTiles tiles={data.tiles} />
      </section>
      <section aria-labelledby="usage-title">
        <div className="mb-2 flex flex-wrap items-center justify-between gap-3">
          <h2 id="usage-title" className="text-lg font-semibold">
            {t("usage.title")}
          </h2>
          <a href={data.csvHref} className={quiet} download data-usage-csv>
            {t("usage.download")}
          </a>
        </div>
        <PeriodFilter period={data.period} />
        <UsageTable users={data.users} language={data.language} />
      </section>
    </>
  );
}
