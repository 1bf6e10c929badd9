import { defaultNS, fallbackLanguage, type Language } from "~/i18n";

// The islands' translations (ADR 0006, issue 9's budget: an island page ships ≤ 100 KiB before the island's own
// code). i18next is 15 KiB gzip on the client for what the page uses of it: looking up "ns:a.b" keys,
// `{{name}}` interpolation, `count` plurals by the language's rules, a default value, and German as the fallback.
// This instance does exactly that for react-i18next's provider and hooks, with the namespaces the page loaded.
// The server keeps i18next; `i18n-client.test.ts` checks that both give the same text for every key of every
// namespace in both languages.

type Tree = { [key: string]: string | Tree };
export type Resources = Partial<Record<Language, Record<string, Tree>>>;
type Options = { count?: number; defaultValue?: string; ns?: string; [name: string]: unknown };

function lookup(tree: Tree | undefined, path: string): string | undefined {
  let node: string | Tree | undefined = tree;
  for (const part of path.split(".")) {
    if (node === undefined || typeof node === "string") return undefined;
    node = node[part];
  }
  return typeof node === "string" ? node : undefined;
}

function interpolate(text: string, values: Options) {
  return text.replace(/\{\{\s*([^}\s]+)\s*\}\}/g, (_, name: string) => {
    let value: unknown = values;
    for (const part of name.split(".")) value = (value as Record<string, unknown> | undefined)?.[part];
    return value === undefined || value === null ? "" : String(value);
  });
}

export function createClientI18n(language: Language, resources: Resources, namespaces: string[]) {
  const plurals = new Map<Language, Intl.PluralRules>();
  const pluralOf = (lng: Language, count: number) => {
    if (!plurals.has(lng)) plurals.set(lng, new Intl.PluralRules(lng));
    return plurals.get(lng)!.select(count);
  };
  const languages = language === fallbackLanguage ? [language] : [language, fallbackLanguage];

  function find(ns: string, key: string, options: Options) {
    for (const lng of languages) {
      const tree = resources[lng]?.[ns];
      if (typeof options.count === "number") {
        const suffixes = options.count === 0 ? ["zero", pluralOf(lng, 0)] : [pluralOf(lng, options.count)];
        for (const suffix of suffixes) {
          const plural = lookup(tree, `${key}_${suffix}`);
          if (plural !== undefined) return plural;
        }
      }
      const text = lookup(tree, key);
      if (text !== undefined) return text;
    }
    return undefined;
  }

  function getFixedT(_lng: string | null, fixedNs?: string | string[] | null, keyPrefix?: string) {
    const baseNs = (Array.isArray(fixedNs) ? fixedNs[0] : fixedNs) || defaultNS;
    return (key: string, second?: string | Options, third?: Options) => {
      const options: Options =
        typeof second === "string" ? { ...third, defaultValue: second } : { ...(second as Options | undefined) };
      const split = key.indexOf(":");
      const ns = split > 0 ? key.slice(0, split) : (options.ns ?? baseNs);
      const bare = split > 0 ? key.slice(split + 1) : key;
      const path = keyPrefix ? `${keyPrefix}.${bare}` : bare;
      const text = find(ns, path, options);
      if (text !== undefined) return interpolate(text, options);
      // SPEC §8: a missing key shows the key itself and logs a warning (as the server's missingKeyHandler).
      console.warn(`[i18n] missing translation ${language}/${ns}:${path}`);
      return options.defaultValue !== undefined ? interpolate(options.defaultValue, options) : path;
    };
  }

  const noop = () => undefined;
  return {
    language,
    languages,
    isInitialized: true,
    options: { defaultNS, ns: namespaces, fallbackLng: fallbackLanguage, react: { useSuspense: false } },
    services: {},
    store: { on: noop, off: noop },
    on: noop,
    off: noop,
    getFixedT,
    t: (key: string, options?: string | Options) => getFixedT(null)(key, options),
    hasLoadedNamespace: (ns: string) => namespaces.includes(ns),
    loadNamespaces: (_ns: unknown, done?: () => void) => done?.(),
    loadLanguages: (_lng: unknown, done?: () => void) => done?.(),
    getResourceBundle: (lng: Language, ns: string) => resources[lng]?.[ns],
  };
}
