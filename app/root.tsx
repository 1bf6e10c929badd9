import type { LinksFunction, LoaderFunctionArgs } from "@remix-run/node";
import {
  isRouteErrorResponse,
  Links,
  Meta,
  Outlet,
  Scripts,
  ScrollRestoration,
  useLoaderData,
  useMatches,
  useRouteError,
  useRouteLoaderData,
} from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { useChangeLanguage } from "remix-i18next/react";
import { useNonce } from "~/components/nonce";
import { ProgressiveScripts, type RouteHandle } from "~/components/page-scripts";
import { fallbackLanguage, type Language } from "~/i18n";
import { getConfig, publicConfig } from "~/services/config/config.server";
import { getLanguage } from "~/services/web/i18n.server";
import stylesheet from "~/tailwind.css";

export const links: LinksFunction = () => [
  { rel: "stylesheet", href: stylesheet },
  { rel: "icon", href: "/favicon.svg", type: "image/svg+xml" },
];

export const handle: RouteHandle = { i18n: ["common"] };

export async function loader({ request }: LoaderFunctionArgs) {
  const language = await getLanguage(request);
  return { language, config: publicConfig(getConfig()) };
}

export function useRootData() {
  return useRouteLoaderData<typeof loader>("root");
}

function Document({ language, children }: { language: Language; children: React.ReactNode }) {
  const nonce = useNonce();
  const matches = useMatches();
  // ADR 0006: a page hydrates only when one of its routes holds an island —
  // always (handle) or only in the state that shows one (loader data).
  const hydrate = matches.some(
    (m) =>
      (m.handle as RouteHandle | undefined)?.island === true ||
      (m.data as { island?: unknown } | undefined)?.island === true,
  );
  return (
    <html lang={language} dir="ltr">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <Meta />
        <Links />
      </head>
      <body className="min-h-screen">
        {children}
        {hydrate ? (
          <>
            <ScrollRestoration nonce={nonce} />
            <Scripts nonce={nonce} />
          </>
        ) : (
          <ProgressiveScripts matches={matches} nonce={nonce} />
        )}
      </body>
    </html>
  );
}

export default function App() {
  const { language } = useLoaderData<typeof loader>();
  useChangeLanguage(language);
  return (
    <Document language={language}>
      <Outlet />
    </Document>
  );
}

export function ErrorBoundary() {
  const error = useRouteError();
  const data = useRootData();
  const { t } = useTranslation();
  const status = isRouteErrorResponse(error) ? error.status : 500;
  const [title, body] =
    status === 404
      ? [t("errors.notFoundTitle"), t("errors.notFound")]
      : status === 403
        ? [t("errors.forbiddenTitle"), t("errors.forbidden")]
        : status === 429
          ? [t("errors.tooManyTitle"), t("errors.tooMany")]
          : status === 503
            ? [t("errors.unavailableTitle"), t("errors.unavailable")]
            : [t("errors.unexpectedTitle"), t("errors.unexpected")];
  return (
    <Document language={data?.language ?? fallbackLanguage}>
      <main className="mx-auto max-w-xl px-6 py-24 text-center">
        <p className="text-sm font-semibold text-brand-600">{status}</p>
        <h1 className="mt-2 text-2xl font-semibold">{title}</h1>
        <p className="mt-4 text-slate-600">{body}</p>
        <a href="/" className="mt-8 inline-block rounded-md bg-brand-600 px-4 py-2 text-white hover:bg-brand-700">
          {t("errors.backHome")}
        </a>
      </main>
    </Document>
  );
}
