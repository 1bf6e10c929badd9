import { useTranslation } from "react-i18next";
import { DataTable } from "~/components/ui/section";
import type { Language } from "~/i18n";
import type { UsageDashboardUser } from "~/services/admin/usage.server";

// SPEC §2 per-user usage table: name, e-mail, organisation or personal account, calls and cost per endpoint, the
// total; costs in USD with 2 to 4 decimals; 'No usage data available' when there is nothing in the period.

export function formatUsd(value: number, language: Language) {
  return new Intl.NumberFormat(language === "de" ? "de-DE" : "en-US", {
    style: "currency",
    currency: "USD",
    minimumFractionDigits: 2,
    maximumFractionDigits: 4,
  }).format(value);
}

export function UsageTable({ users, language }: { users: UsageDashboardUser[]; language: Language }) {
  const { t } = useTranslation("admin");
  return (
    <DataTable
      caption={t("usage.title")}
      columns={[t("usage.name"), t("usage.email"), t("usage.account"), t("usage.endpoints"), t("usage.total")]}
      empty={t("usage.empty")}
      rows={users.map((user) => [
        user.name ?? "–",
        <span key="email" data-usage-email>
          {user.email ?? "–"}
        </span>,
        user.is_org ? t("usage.org") : t("usage.personal"),
        <ul key="endpoints" className="space-y-0.5">
          {Object.entries(user.endpoints).map(([endpoint, calls]) => (
            <li key={endpoint} className="flex flex-wrap gap-x-2" data-usage-endpoint={endpoint}>
              <code className="text-xs">{endpoint}</code>
              <span>{t("usage.calls", { count: calls })}</span>
              <span className="text-slate-500">{formatUsd(user.costs[endpoint] ?? 0, language)}</span>
            </li>
          ))}
        </ul>,
        <strong key="total" data-usage-total>
          {formatUsd(user.costs.total ?? 0, language)}
        </strong>,
      ])}
    />
  );
}
