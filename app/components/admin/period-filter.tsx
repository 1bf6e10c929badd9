import { Form } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { quiet } from "~/components/ui/buttons";

// The dashboard's period filter (today, 7 days, 30 days, or a custom from/to): a plain GET form, so it works
// without JavaScript and the address can be bookmarked. Extra fields (the audit trail's user) come as children.

export type PeriodView = { kind: "today" | "7d" | "30d" | "custom"; from: string; to: string; invalid: boolean };

const field = "rounded-md border border-slate-300 px-2 py-1.5 text-sm";

export function PeriodFilter({ period, children }: { period: PeriodView; children?: React.ReactNode }) {
  const { t } = useTranslation("admin");
  return (
    <Form method="get" className="mb-4 flex flex-wrap items-end gap-3" data-period-filter>
      {children}
      <label className="flex flex-col gap-1 text-sm">
        {t("period.legend")}
        <select name="period" defaultValue={period.kind} className={field}>
          {(["today", "7d", "30d", "custom"] as const).map((kind) => (
            <option key={kind} value={kind}>
              {t(`period.${kind}`)}
            </option>
          ))}
        </select>
      </label>
      <label className="flex flex-col gap-1 text-sm">
        {t("period.from")}
        <input type="date" name="from" defaultValue={period.from} className={field} />
      </label>
      <label className="flex flex-col gap-1 text-sm">
        {t("period.to")}
        <input type="date" name="to" defaultValue={period.to} className={field} />
      </label>
      <button type="submit" className={quiet}>
        {t("period.apply")}
      </button>
      <p className="w-full text-xs text-slate-500" data-period-shown>
        {t("period.shown", { from: period.from, to: period.to })}
      </p>
      {period.invalid ? (
        <p role="alert" className="w-full text-sm text-red-700">
          {t("period.invalid")}
        </p>
      ) : null}
    </Form>
  );
}
