import { json, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { NavLink, Outlet, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { RouteHandle } from "~/components/page-scripts";
import { ToastMessage } from "~/components/shell/toast";
import { TopBar } from "~/components/shell/top-bar";
import { button } from "~/components/ui/buttons";
import { adminGate } from "~/services/admin/admin.server";
import { getConfig } from "~/services/config/config.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { readToast } from "~/services/web/toast.server";

// The admin dashboard's own layout (SPEC §2 "Admin dashboard"; ADR 0014): served at the hidden ADMIN_PATH, shown
// instead of the workspace — the top bar, no sidebar. Any other single-segment address is a 404 here, as before.
// Each page below decides the operator check for itself as well: Remix runs their loaders alongside this one.

export const handle: RouteHandle = { i18n: ["common", "admin", "account"], scripts: ["shell"] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: data?.title ?? "Skribent" },
  { name: "robots", content: "noindex, nofollow" },
];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const gate = await adminGate(request, params);
  const [language, { toast, setCookie }] = await Promise.all([getLanguage(request), readToast(request)]);
  const t = await getFixedTFor(language, ["admin"]);
  return json(
    {
      admin: gate.admin,
      title: `${gate.admin ? t("admin:title") : t("admin:denied.message")} · Skribent`,
      user: { name: gate.user.name, email: gate.user.email },
      language,
      links: getConfig().links,
      toast,
    },
    { status: gate.admin ? 200 : 403, headers: setCookie ? { "Set-Cookie": setCookie } : undefined },
  );
}

const tab = ({ isActive }: { isActive: boolean }) =>
  `rounded-md px-3 py-1.5 text-sm ${isActive ? "bg-brand-600 text-white" : "text-slate-700 hover:bg-slate-100"}`;

export default function AdminLayout() {
  const { admin, user, language, links, toast } = useLoaderData<typeof loader>();
  const { t } = useTranslation("admin");
  return (
    <div className="flex min-h-screen flex-col">
      <TopBar user={user} language={language} links={links} />
      <main id="main" className="mx-auto w-full max-w-7xl flex-1 px-4 pt-6 pb-10 md:px-8">
        <ToastMessage toast={toast} />
        {admin ? (
          <>
            <header className="mb-6 flex flex-wrap items-center justify-between gap-4">
              <div>
                <h1 className="text-2xl font-semibold tracking-tight">{t("title")}</h1>
                <p className="mt-1 text-sm text-slate-600">{t("intro")}</p>
              </div>
              <nav aria-label={t("nav.label")} className="flex flex-wrap gap-2">
                <NavLink to="." end className={tab}>
                  {t("nav.overview")}
                </NavLink>
                <NavLink to="audit" className={tab}>
                  {t("nav.audit")}
                </NavLink>
                <NavLink to="accounts" className={tab}>
                  {t("account:admin.nav")}
                </NavLink>
                <NavLink to="sessions" className={tab}>
                  {t("nav.sessions")}
                </NavLink>
                <NavLink to="letterhead" className={tab}>
                  {t("nav.letterhead")}
                </NavLink>
              </nav>
            </header>
            <Outlet />
          </>
        ) : (
          <section className="mx-auto max-w-xl py-16 text-center" data-admin-denied>
            <p className="text-sm font-semibold text-brand-600">403</p>
            <h1 className="mt-2 text-2xl font-semibold">{t("denied.message")}</h1>
            <p className="mt-4 text-slate-600">{t("denied.hint")}</p>
            <a href="/" className={`mt-8 inline-block ${button}`}>
              {t("denied.back")}
            </a>
          </section>
        )}
      </main>
    </div>
  );
}
