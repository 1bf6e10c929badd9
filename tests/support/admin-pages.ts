import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { I18nextProvider } from "react-i18next";
import { createStaticHandler, createStaticRouter, StaticRouterProvider } from "react-router-dom/server";
import AdminLayout, { loader as layoutLoader } from "~/routes/$adminPath";
import AdminAccounts, { loader as accountsLoader } from "~/routes/$adminPath.accounts/route";
import AdminAudit, { loader as auditLoader } from "~/routes/$adminPath.audit";
import AdminOverview, { loader as overviewLoader } from "~/routes/$adminPath._index";
import AdminSessions, { loader as sessionsLoader } from "~/routes/$adminPath.sessions/route";
import { upsertUserByIdentity } from "~/models/user.server";
import { createI18n, languageCookie } from "~/services/web/i18n.server";
import { startSession } from "~/services/web/session.server";
import { request } from "../setup/app";

// The admin dashboard as the server renders it (no JavaScript): the layout at the hidden path and its pages,
// nested as Remix nests them (their loaders run side by side), rendered to HTML with the translations.

/* eslint-disable @typescript-eslint/no-explicit-any -- Remix loaders handed to React Router's static handler */
const routes = [
  {
    id: "routes/$adminPath",
    path: "/:adminPath",
    loader: (a: any) => layoutLoader(a),
    Component: AdminLayout,
    children: [
      { id: "routes/$adminPath._index", index: true, loader: (a: any) => overviewLoader(a), Component: AdminOverview },
      { id: "routes/$adminPath.audit", path: "audit", loader: (a: any) => auditLoader(a), Component: AdminAudit },
      {
        id: "routes/$adminPath.accounts",
        path: "accounts",
        loader: (a: any) => accountsLoader(a),
        Component: AdminAccounts,
      },
      {
        id: "routes/$adminPath.sessions",
        path: "sessions",
        loader: (a: any) => sessionsLoader(a),
        Component: AdminSessions,
      },
    ],
  },
];
/* eslint-enable @typescript-eslint/no-explicit-any */
const handler = createStaticHandler(routes);

/** A dashboard page: the redirect or thrown status, or the status and the HTML. */
export async function adminPage(path: string, cookie: string | null, language: "de" | "en" = "de") {
  const cookies = [cookie, language === "en" ? (await languageCookie().serialize("en")).split(";")[0] : null];
  const context = await handler.query(request(path, { cookie: cookies.filter(Boolean).join("; ") || undefined }));
  if (context instanceof Response)
    return { status: context.status, location: context.headers.get("Location"), html: "" };
  const thrown = Object.values(context.errors ?? {})[0] as { status?: number } | undefined;
  if (thrown) return { status: thrown.status ?? 500, location: null, html: "" };
  const router = createStaticRouter(handler.dataRoutes, context);
  const i18n = await createI18n(language);
  const html = renderToString(
    createElement(I18nextProvider, { i18n }, createElement(StaticRouterProvider, { router, context, hydrate: false })),
  );
  return { status: context.statusCode, location: null, html };
}

/** A signed-in user whose address is verified or not (tests/setup/app.ts's signedInUser is always verified). */
export async function sessionFor(email: string, options: { verified?: boolean; name?: string } = {}) {
  const user = await upsertUserByIdentity({
    issuer: "http://127.0.0.1:9",
    subject: `${email}#${options.verified === false ? "unverified" : "verified"}`,
    email,
    emailVerified: options.verified !== false,
    name: options.name ?? null,
    locale: "de",
  });
  const setCookie = await startSession({ userId: user.id, idToken: null });
  return { user, cookie: setCookie.split(";")[0]! };
}
