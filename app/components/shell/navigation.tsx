import { NavLink } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { Icon, type IconName } from "./icons";

export type SectionCounts = { audio: number; transcriptions: number; arztbriefe: number };

type Section = { to: string; key: IconName; count?: keyof SectionCounts; mobile: boolean };

// SPEC §2: sidebar sections; the mobile bottom bar has only the first four.
const sections: Section[] = [
  { to: "/", key: "audio", count: "audio", mobile: true },
  { to: "/transcriptions", key: "transcriptions", count: "transcriptions", mobile: true },
  { to: "/arztbriefe", key: "arztbriefe", count: "arztbriefe", mobile: true },
  { to: "/chat", key: "chat", mobile: true },
  { to: "/settings", key: "settings", mobile: false },
  { to: "/help", key: "help", mobile: false },
];

function linkClass({ isActive }: { isActive: boolean }) {
  return `flex items-center gap-3 rounded-md px-3 py-2 text-sm font-medium ${
    isActive ? "bg-brand-50 text-brand-700" : "text-slate-700 hover:bg-slate-100"
  }`;
}

export function Sidebar({ counts }: { counts: SectionCounts }) {
  const { t } = useTranslation();
  return (
    <nav
      aria-label={t("nav.main")}
      data-sidebar
      className="hidden w-60 shrink-0 border-r border-slate-200 bg-white md:block"
    >
      <ul className="space-y-1 p-3">
        {sections.map((section) => (
          <li key={section.key}>
            <NavLink to={section.to} end={section.to === "/"} className={linkClass} prefetch="none">
              <Icon name={section.key} />
              <span className="flex-1">{t(`nav.${section.key}`)}</span>
              {section.count ? (
                <span
                  className="rounded-full bg-slate-100 px-2 py-0.5 text-xs text-slate-600 tabular-nums"
                  aria-label={t("nav.countLabel", { count: counts[section.count] })}
                  data-count={section.count}
                >
                  {counts[section.count]}
                </span>
              ) : null}
            </NavLink>
          </li>
        ))}
      </ul>
    </nav>
  );
}

export function BottomBar() {
  const { t } = useTranslation();
  return (
    <nav
      aria-label={t("nav.main")}
      data-bottombar
      className="fixed inset-x-0 bottom-0 z-20 border-t border-slate-200 bg-white md:hidden"
    >
      <ul className="grid grid-cols-4">
        {sections
          .filter((s) => s.mobile)
          .map((section) => (
            <li key={section.key}>
              <NavLink
                to={section.to}
                end={section.to === "/"}
                prefetch="none"
                className={({ isActive }) =>
                  `flex flex-col items-center gap-1 py-2 text-xs ${isActive ? "text-brand-700" : "text-slate-600"}`
                }
              >
                <Icon name={section.key} />
                <span>{t(`nav.${section.key}`)}</span>
              </NavLink>
            </li>
          ))}
      </ul>
    </nav>
  );
}
