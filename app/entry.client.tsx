import { RemixBrowser } from "@remix-run/react";
import i18next from "i18next";
import { startTransition, StrictMode } from "react";
import { hydrateRoot } from "react-dom/client";
import { I18nextProvider, initReactI18next } from "react-i18next";
import { getInitialNamespaces } from "remix-i18next/client";
import { i18nOptions } from "~/i18n";

// Only pages with an island hydrate (ADR 0006). Their translations are loaded
// over HTTP, one namespace at a time, instead of bundling every language.
async function loadNamespace(language: string, ns: string) {
  const response = await fetch(`/locales/${language}/${ns}.json`);
  return response.ok ? ((await response.json()) as Record<string, unknown>) : {};
}

async function hydrate() {
  const language = document.documentElement.lang || "de";
  const namespaces = getInitialNamespaces();
  const resources: Record<string, Record<string, Record<string, unknown>>> = { [language]: {} };
  await Promise.all(
    namespaces.map(async (ns) => {
      resources[language][ns] = await loadNamespace(language, ns);
    }),
  );
  await i18next.use(initReactI18next).init({ ...i18nOptions, lng: language, ns: namespaces, resources });
  startTransition(() => {
    hydrateRoot(
      document,
      <I18nextProvider i18n={i18next}>
        <StrictMode>
          <RemixBrowser />
        </StrictMode>
      </I18nextProvider>,
    );
  });
}

void hydrate();
