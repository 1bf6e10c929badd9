import fs from "node:fs";
import path from "node:path";
import { createInstance, type i18n as I18n, type Resource } from "i18next";
import { fallbackLanguage, i18nOptions, isLanguage, supportedLanguages, type Language } from "~/i18n";
import { siteCookie } from "./cookies.server";

// Server-first i18n (STYLE.md §12). Translations live in public/locales/{lng}/{ns}.json;
// the server reads them once. Pages without an island ship no JavaScript, so the
// client needs no bundle of every language.

/** The user's explicit choice of interface language; nothing else decides it, the default is German (SPEC §3). */
export function languageCookie() {
  return siteCookie("skribent_lng", { sameSite: "lax", httpOnly: true, maxAge: 60 * 60 * 24 * 365 });
}

let resources: Resource | undefined;

export function loadResources(): Resource {
  if (resources) return resources;
  const root = path.resolve(process.cwd(), "public/locales");
  const loaded: Resource = {};
  for (const language of supportedLanguages) {
    loaded[language] = {};
    for (const file of fs.readdirSync(path.join(root, language))) {
      if (!file.endsWith(".json")) continue;
      loaded[language][file.replace(/\.json$/, "")] = JSON.parse(
        fs.readFileSync(path.join(root, language, file), "utf8"),
      );
    }
  }
  resources = loaded;
  return loaded;
}

export async function getLanguage(request: Request): Promise<Language> {
  const chosen: unknown = await languageCookie().parse(request.headers.get("Cookie"));
  return isLanguage(chosen) ? chosen : fallbackLanguage;
}

export async function getT(request: Request, ns: string | string[] = "common") {
  const language = await getLanguage(request);
  return getFixedTFor(language, ns);
}

export async function getFixedTFor(language: Language, ns: string | string[] = "common") {
  const instance = await createI18n(language);
  return instance.getFixedT(language, ns);
}

// One initialised instance per language, built on first use: the resources are
// fixed for the life of the process and nothing changes an instance's language
// on the server, so requests share it instead of initialising i18next each time.
const instances = new Map<Language, Promise<I18n>>();

export function createI18n(language: Language): Promise<I18n> {
  let instance = instances.get(language);
  if (!instance) {
    const created = createInstance();
    instance = created
      .init({
        ...i18nOptions,
        lng: language,
        ns: Object.keys(loadResources()[language] ?? {}),
        resources: loadResources(),
      })
      .then(() => remembering(created));
    instances.set(language, instance);
  }
  return instance;
}

// What a fixed t() adds to a plain call (getFixedT's language, namespaces and key prefix): a call with nothing else —
// no count, no values to interpolate, no default — always gives the same text in a process.
const PLAIN_OPTIONS = new Set(["lng", "lngs", "ns", "keyPrefix"]);
const MAX_REMEMBERED = 50_000;

/**
 * Remembers the text of each plain call of `t`, by language, namespaces and key: i18next resolves every call anew
 * (options, namespaces, fallbacks, nesting), and a workspace page of 50 rows makes hundreds of them — about 4 % of its
 * CPU (docs/performance.md). Calls with anything else pass through untouched.
 */
function remembering(instance: I18n) {
  const translate = instance.t.bind(instance) as (key: unknown, options?: Record<string, unknown>) => unknown;
  const known = new Map<string, string>();
  const plain = (options: Record<string, unknown> | undefined) =>
    options === undefined ||
    Object.keys(options).every((name) => PLAIN_OPTIONS.has(name) && (name !== "keyPrefix" || !options[name]));
  const t = (key: unknown, options?: Record<string, unknown>) => {
    if (typeof key !== "string" || !plain(options)) return translate(key, options);
    const id = `${String(options?.lng ?? "")}\0${String(options?.ns ?? "")}\0${key}`;
    const text = known.get(id);
    if (text !== undefined) return text;
    const result = translate(key, options);
    if (typeof result === "string" && known.size < MAX_REMEMBERED) known.set(id, result);
    return result;
  };
  instance.t = t as I18n["t"];
  return instance;
}
