import { Form, useLocation } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { Language } from "~/i18n";
import { Icon } from "./icons";

export type ShellUser = { name: string | null; email: string | null };
export type ShellLinks = {
  home: string;
  platform: string;
  companyAbout: string;
  companyPrivacy: string;
  companyImprint: string;
  pricing: string;
};

function initials(user: ShellUser) {
  const source = user.name ?? user.email ?? "?";
  const parts = source
    .replace(/^(dr\.?\s*(med\.?)?\s*)/i, "")
    .split(/[\s@.]+/)
    .filter(Boolean);
  return ((parts[0]?.[0] ?? "?") + (parts[1]?.[0] ?? "")).toUpperCase();
}

function External({ href, children, className }: { href: string; children: React.ReactNode; className: string }) {
  const { t } = useTranslation();
  return (
    <a href={href} target="_blank" rel="noopener noreferrer" className={className}>
      {children}
      <span className="sr-only"> {t("topbar.externalLink")}</span>
    </a>
  );
}

function LanguageSwitcher({ language }: { language: Language }) {
  const { t } = useTranslation();
  const location = useLocation();
  return (
    <Form
      method="post"
      action="/resources/locale"
      reloadDocument
      className="flex items-center gap-1"
      aria-label={t("topbar.language")}
    >
      <input type="hidden" name="redirectTo" value={`${location.pathname}${location.search}`} />
      {(["de", "en"] as const).map((lng) => (
        <button
          key={lng}
          type="submit"
          name="language"
          value={lng}
          lang={lng}
          aria-pressed={language === lng}
          title={lng === "de" ? t("topbar.languageGerman") : t("topbar.languageEnglish")}
          className={`rounded px-2 py-1 text-xs font-semibold uppercase ${
            language === lng ? "bg-brand-600 text-white" : "text-slate-600 hover:bg-slate-100"
          }`}
        >
          {lng}
        </button>
      ))}
    </Form>
  );
}

function UserBadge({ user }: { user: ShellUser }) {
  const { t } = useTranslation();
  const label = user.name ?? user.email ?? "";
  return (
    <span className="flex items-center gap-2" title={t("topbar.signedInAs", { name: label })}>
      <span
        aria-hidden="true"
        className="flex h-8 w-8 items-center justify-center rounded-full bg-brand-100 text-xs font-semibold text-brand-700"
      >
        {initials(user)}
      </span>
      <span className="max-w-48 truncate text-sm text-slate-700" data-user-label>
        {label}
      </span>
    </span>
  );
}

/** Sign-out (ASVS 7.4.4: on every signed-in page): the top bar's, and the pages outside the shell use it too. */
export function LogoutButton() {
  const { t } = useTranslation();
  return (
    <Form method="post" action="/logout" reloadDocument>
      <button
        type="submit"
        className="flex items-center gap-1 rounded px-2 py-1 text-sm text-slate-700 hover:bg-slate-100"
      >
        <Icon name="logout" className="h-4 w-4" />
        {t("topbar.logout")}
      </button>
    </Form>
  );
}

export function TopBar({ user, language, links }: { user: ShellUser; language: Language; links: ShellLinks }) {
  const { t } = useTranslation();
  const linkClass = "rounded px-2 py-1 text-sm text-slate-700 hover:bg-slate-100";
  const company = (
    <details className="relative">
      <summary className={`${linkClass} cursor-pointer list-none`}>{t("topbar.company")} ▾</summary>
      <ul className="absolute left-0 z-30 mt-1 w-48 rounded-md border border-slate-200 bg-white py-1 shadow-lg">
        {(
          [
            ["companyAbout", links.companyAbout],
            ["companyPrivacy", links.companyPrivacy],
            ["companyImprint", links.companyImprint],
          ] as const
        ).map(([key, href]) => (
          <li key={key}>
            <External href={href} className="block px-3 py-2 text-sm hover:bg-slate-50">
              {t(`topbar.${key}`)}
            </External>
          </li>
        ))}
      </ul>
    </details>
  );
  return (
    <header
      data-topbar
      className="sticky top-0 z-30 border-b border-slate-200 bg-white/95 backdrop-blur transition-transform duration-200"
    >
      <div className="flex h-14 items-center gap-4 px-4">
        <a href="/" className="flex items-center gap-2 font-semibold text-brand-700">
          <img src="/favicon.svg" alt="" className="h-7 w-7" />
          {t("appName")}
        </a>
        <nav className="hidden items-center gap-1 nav:flex" aria-label={t("topbar.company")}>
          <External href={links.home} className={linkClass}>
            {t("topbar.home")}
          </External>
          <External href={links.platform} className={linkClass}>
            {t("topbar.platform")}
          </External>
          {company}
          <External href={links.pricing} className={linkClass}>
            {t("topbar.pricing")}
          </External>
        </nav>
        <div className="ml-auto hidden items-center gap-3 nav:flex">
          <LanguageSwitcher language={language} />
          <UserBadge user={user} />
          <LogoutButton />
        </div>
        <details className="relative ml-auto nav:hidden" data-hamburger>
          <summary className="flex cursor-pointer list-none items-center gap-1 rounded p-2 hover:bg-slate-100">
            <Icon name="menu" />
            <span className="sr-only">{t("topbar.menu")}</span>
          </summary>
          <div className="absolute right-0 z-30 mt-2 w-64 space-y-3 rounded-md border border-slate-200 bg-white p-3 shadow-lg">
            <UserBadge user={user} />
            {/* The bottom bar holds four sections (SPEC §2); the other two live here. */}
            <ul className="space-y-1 border-b border-slate-100 pb-3 md:hidden">
              {(["settings", "help"] as const).map((key) => (
                <li key={key}>
                  <a href={`/${key}`} className="flex items-center gap-2 rounded px-2 py-1 text-sm hover:bg-slate-50">
                    <Icon name={key} className="h-4 w-4" />
                    {t(`nav.${key}`)}
                  </a>
                </li>
              ))}
            </ul>
            <ul className="space-y-1">
              {(
                [
                  ["home", links.home],
                  ["platform", links.platform],
                  ["companyAbout", links.companyAbout],
                  ["companyPrivacy", links.companyPrivacy],
                  ["companyImprint", links.companyImprint],
                  ["pricing", links.pricing],
                ] as const
              ).map(([key, href]) => (
                <li key={key}>
                  <External href={href} className="block rounded px-2 py-1 text-sm hover:bg-slate-50">
                    {t(`topbar.${key}`)}
                  </External>
                </li>
              ))}
            </ul>
            <div className="flex items-center justify-between border-t border-slate-100 pt-3">
              <LanguageSwitcher language={language} />
              <LogoutButton />
            </div>
          </div>
        </details>
      </div>
    </header>
  );
}
