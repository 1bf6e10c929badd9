import type { LoaderFunctionArgs } from "@remix-run/node";
import { adminGate } from "~/services/admin/admin.server";
import { periodFrom } from "~/services/admin/period.server";
import { toCsv, type CsvCell } from "~/services/admin/csv.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { applySecurityHeaders } from "~/services/web/security.server";
import { getConfig } from "~/services/config/config.server";
import { usageByUser } from "~/services/admin/usage.server";

// The usage table of a period as CSV (a resource route beside the dashboard, ADR 0014): one line per user and
// endpoint with its calls and cost, then the user's total. Same operator check as the pages.

export async function loader({ request, params }: LoaderFunctionArgs) {
  const gate = await adminGate(request, params, "admin.usage_csv");
  const language = await getLanguage(request);
  const t = await getFixedTFor(language, ["admin"]);
  const headers = new Headers({ "Cache-Control": "no-store" });
  applySecurityHeaders(headers, { appUrl: getConfig().appUrl });
  if (!gate.admin) {
    headers.set("Content-Type", "text/plain; charset=utf-8");
    return new Response(t("admin:denied.message"), { status: 403, headers });
  }
  const period = periodFrom(new URL(request.url).searchParams, "30d");
  const users = await usageByUser(period.range);
  const rows: CsvCell[][] = [
    ["name", "email", "account", "endpoint", "calls", "cost"].map((column) => t(`admin:csv.${column}`)),
  ];
  for (const user of users) {
    const account = user.is_org ? t("admin:usage.org") : t("admin:usage.personal");
    let calls = 0;
    for (const [endpoint, count] of Object.entries(user.endpoints)) {
      calls += count;
      rows.push([user.name, user.email, account, endpoint, count, usd(user.costs[endpoint])]);
    }
    rows.push([user.name, user.email, account, t("admin:csv.total"), calls, usd(user.costs.total)]);
  }
  headers.set("Content-Type", "text/csv; charset=utf-8");
  headers.set("Content-Disposition", `attachment; filename="usage-${period.from}-${period.to}.csv"`);
  return new Response(toCsv(rows), { headers });
}

/** Four decimals, a point as separator: what spreadsheets in any locale read as a number. */
function usd(value: number | undefined) {
  return (value ?? 0).toFixed(4);
}
