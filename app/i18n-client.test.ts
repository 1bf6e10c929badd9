import fs from "node:fs";
import path from "node:path";
import { createInstance } from "i18next";
import { afterEach, describe, expect, it, vi } from "vitest";
import { i18nOptions, supportedLanguages, type Language } from "~/i18n";
import { createClientI18n, type Resources } from "./i18n-client";

// The islands' small i18n (i18n-client.ts) must say exactly what the server's i18next says, or hydration would
// show other words than the server rendered. Every key of every namespace, in both languages, with a count of
// 0, 1 and 5 and every placeholder the files use filled in.
const LOCALES = path.resolve(__dirname, "../public/locales");
const namespaces = fs.readdirSync(path.join(LOCALES, "de")).map((file) => file.replace(/\.json$/, ""));
const resources: Resources = Object.fromEntries(
  supportedLanguages.map((lng) => [
    lng,
    Object.fromEntries(
      namespaces.map((ns) => [ns, JSON.parse(fs.readFileSync(path.join(LOCALES, lng, `${ns}.json`), "utf8"))]),
    ),
  ]),
);

type Tree = { [key: string]: string | Tree };
function keysOf(tree: Tree, prefix = ""): string[] {
  return Object.entries(tree).flatMap(([key, value]) =>
    typeof value === "string" ? [`${prefix}${key}`] : keysOf(value, `${prefix}${key}.`),
  );
}
const baseKey = (key: string) => key.replace(/_(zero|one|two|few|many|other)$/, "");

const placeholders = new Set<string>();
for (const lng of supportedLanguages)
  for (const ns of namespaces)
    for (const match of JSON.stringify(resources[lng]![ns]).matchAll(/\{\{\s*([^}\s]+)\s*\}\}/g))
      placeholders.add(match[1]);
const filled = Object.fromEntries([...placeholders].map((name, i) => [name, `‹${name}-${i}›`]));

async function server(lng: Language) {
  const instance = createInstance();
  await instance.init({ ...i18nOptions, saveMissing: false, lng, ns: namespaces, resources: resources as never });
  return instance;
}

afterEach(() => vi.restoreAllMocks());

describe("the islands' i18n", () => {
  it.each(supportedLanguages)("gives the server's text for every key in %s", async (lng) => {
    const reference = await server(lng);
    const client = createClientI18n(lng, resources, namespaces);
    let compared = 0;
    for (const ns of namespaces) {
      const serverT = reference.getFixedT(lng, ns);
      const clientT = client.getFixedT(null, ns);
      for (const key of new Set(keysOf(resources.de![ns] as Tree).map(baseKey))) {
        for (const count of [undefined, 0, 1, 5]) {
          const options = { ...filled, ...(count === undefined ? {} : { count }) };
          expect(clientT(key, options), `${lng} ${ns}:${key} count=${count}`).toBe(serverT(key, options));
          expect(client.getFixedT(null, "common")(`${ns}:${key}`, options)).toBe(serverT(key, options));
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it("finds every key in both languages (an island page loads only its own language)", () => {
    for (const ns of namespaces) {
      expect(keysOf(resources.en![ns] as Tree).sort(), ns).toEqual(keysOf(resources.de![ns] as Tree).sort());
    }
  });

  it("falls back to German, then to the default value, then to the key, and says so", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const onlyGerman: Resources = { de: { common: { hello: "Hallo {{name}}" } }, en: { common: {} } };
    const t = createClientI18n("en", onlyGerman, ["common"]).getFixedT(null, "common");
    expect(t("hello", { name: "Anna" })).toBe("Hallo Anna");
    expect(t("missing.key", { defaultValue: "Standard {{n}}", n: 2 })).toBe("Standard 2");
    expect(t("missing.key", "Standard")).toBe("Standard");
    expect(t("other:missing")).toBe("missing");
    expect(warn).toHaveBeenCalledWith("[i18n] missing translation en/other:missing");
  });

  it("picks plural forms by the language's rules", () => {
    const res: Resources = { de: { common: { files_one: "{{count}} Datei", files_other: "{{count}} Dateien" } } };
    const t = createClientI18n("de", res, ["common"]).getFixedT(null);
    expect([0, 1, 2].map((count) => t("files", { count }))).toEqual(["0 Dateien", "1 Datei", "2 Dateien"]);
  });
});
