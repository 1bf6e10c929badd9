// Shared by server and client: the languages and i18next options (SPEC §3: en or de, default de).
export const supportedLanguages = ["de", "en"] as const;
export type Language = (typeof supportedLanguages)[number];
export const fallbackLanguage: Language = "de";
export const defaultNS = "common";

export function isLanguage(value: unknown): value is Language {
  return typeof value === "string" && (supportedLanguages as readonly string[]).includes(value);
}

export const i18nOptions = {
  supportedLngs: [...supportedLanguages],
  fallbackLng: fallbackLanguage,
  defaultNS,
  interpolation: { escapeValue: false },
  returnNull: false,
  // SPEC §8: a missing key shows the key itself and logs a warning.
  saveMissing: true,
  missingKeyHandler(lngs: readonly string[], ns: string, key: string) {
    console.warn(`[i18n] missing translation ${lngs.join(",")}/${ns}:${key}`);
  },
} as const;

/** SPEC §9: dates in the Europe/Berlin time zone, formatted per language. */
// Making a DateTimeFormat costs far more than using one (a list of 50 rows spent 30 ms here): one per language and
// style, made on first use.
const berlinFormats = new Map<string, Intl.DateTimeFormat>();

function formatInBerlin(value: Date | string, language: Language, style: "date" | "dateTime") {
  const date = typeof value === "string" ? new Date(value) : value;
  const cacheKey = `${language}:${style}`;
  let format = berlinFormats.get(cacheKey);
  if (!format) {
    format = new Intl.DateTimeFormat(language === "de" ? "de-DE" : "en-GB", {
      timeZone: "Europe/Berlin",
      dateStyle: "medium",
      ...(style === "dateTime" ? { timeStyle: "short" as const } : {}),
    });
    berlinFormats.set(cacheKey, format);
  }
  return format.format(date);
}

export function formatDateTime(value: Date | string, language: Language) {
  return formatInBerlin(value, language, "dateTime");
}

/** A day without the time (Europe/Berlin): "27.12.2026", "27 Dec 2026". */
export function formatDate(value: Date | string, language: Language) {
  return formatInBerlin(value, language, "date");
}

/** SPEC §7: template and upload languages. en becomes en-GB, everything else de-DE. */
export function toTemplateLanguage(language: string) {
  return language === "en" ? "en-GB" : "de-DE";
}
