import { Link } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { withPage, type Pagination } from "~/services/web/pagination";

const link = "rounded-md border border-slate-300 px-3 py-1.5 text-sm text-slate-700 hover:bg-slate-50";

/** "Einträge 51–100 von 1000" with links to the newer and older pages; nothing when everything fits on one. */
export function PaginationNav({ pagination, path }: { pagination: Pagination; path: string }) {
  const { t } = useTranslation("common");
  if (pagination.pages <= 1) return null;
  const { page, pages } = pagination;
  return (
    <nav aria-label={t("pagination.label")} className="mt-3 flex items-center justify-between gap-2" data-pagination>
      {page > 1 ? (
        <Link to={withPage(path, page - 1)} className={link} rel="prev" data-page-link="newer">
          {t("pagination.newer")}
        </Link>
      ) : (
        <span />
      )}
      <p className="text-sm text-slate-600" aria-live="polite">
        {t("pagination.range", { first: pagination.first, last: pagination.last, total: pagination.total })}
      </p>
      {page < pages ? (
        <Link to={withPage(path, page + 1)} className={link} rel="next" data-page-link="older">
          {t("pagination.older")}
        </Link>
      ) : (
        <span />
      )}
    </nav>
  );
}
