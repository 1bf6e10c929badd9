import { RemixBrowser } from "@remix-run/react";
import { startTransition, StrictMode } from "react";
import { hydrateRoot } from "react-dom/client";
import { I18nextProvider } from "react-i18next";
import { getInitialNamespaces } from "remix-i18next/client";
import { isLanguage } from "~/i18n";
import { createClientI18n, type Resources } from "~/i18n-client";

// Only pages with an island hydrate (ADR 0006). Their translations are loaded
// over HTTP, one namespace at a time, instead of bundling every language, into
// the small client i18n (i18n-client.ts) rather than i18next (the JS budget).
async function loadNamespace(language: string, ns: string) {
  const response = await fetch(`/locales/${language}/${ns}.json`);
  return response.ok ? ((await response.json()) as Record<string, unknown>) : {};
}

async function hydrate() {
  const lang = document.documentElement.lang;
  const language = isLanguage(lang) ? lang : "de";
  const namespaces = getInitialNamespaces();
  // Both languages have every key (i18n-client.test.ts), so the page's own language is all it loads.
  const resources: Resources = { [language]: {} };
  await Promise.all(
    namespaces.map(async (ns) => {
      resources[language]![ns] = (await loadNamespace(language, ns)) as never;
    }),
  );
  const i18n = createClientI18n(language, resources, namespaces);
  startTransition(() => {
    hydrateRoot(
      document,
      <I18nextProvider i18n={i18n as never}>
        <StrictMode>
          <RemixBrowser />
        </StrictMode>
      </I18nextProvider>,
    );
  });
}

void hydrate();
