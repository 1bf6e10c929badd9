import fs from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { formatDateTime, toTemplateLanguage } from "./i18n";
import { getFixedTFor } from "./services/web/i18n.server";

function keys(value: unknown, prefix = ""): string[] {
  if (value && typeof value === "object")
    return Object.entries(value).flatMap(([k, v]) => keys(v, prefix ? `${prefix}.${k}` : k));
  return [prefix];
}

const root = path.resolve("public/locales");

describe("translations", () => {
  it("have the same keys in German and English, and no empty text", () => {
    const namespaces = fs.readdirSync(path.join(root, "de"));
    expect(fs.readdirSync(path.join(root, "en")).sort()).toEqual([...namespaces].sort());
    for (const ns of namespaces) {
      const de = JSON.parse(fs.readFileSync(path.join(root, "de", ns), "utf8"));
      const en = JSON.parse(fs.readFileSync(path.join(root, "en", ns), "utf8"));
      expect(keys(en).sort(), ns).toEqual(keys(de).sort());
      for (const text of [
        ...keys(de).map((k) => k.split(".").reduce((o, p) => o[p], de)),
        ...keys(en).map((k) => k.split(".").reduce((o, p) => o[p], en)),
      ])
        expect(String(text).trim().length, ns).toBeGreaterThan(0);
    }
  });

  it("show a missing key as the key itself and log a warning (SPEC §8)", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const t = await getFixedTFor("de");
    expect(t("nav.doesNotExist")).toBe("nav.doesNotExist");
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("nav.doesNotExist"));
    warn.mockRestore();
  });

  it("give each call its own text when plain calls are remembered: per language, namespace and values", async () => {
    const [de, en] = [await getFixedTFor("de", ["recordings"]), await getFixedTFor("en", ["recordings"])];
    for (let i = 0; i < 2; i++) {
      expect(de("nav.arztbriefe", { ns: "common" })).toBe("Arztbriefe");
      expect(en("nav.arztbriefe", { ns: "common" })).toBe("Medical letters");
      expect(de("errors.tooManyPdfs", { max: 3 })).toBe("Höchstens 3 PDF-Dateien auf einmal");
      expect(de("errors.tooManyPdfs", { max: 5 })).toBe("Höchstens 5 PDF-Dateien auf einmal");
    }
  });

  it("speak German by default", async () => {
    expect((await getFixedTFor("de"))("nav.arztbriefe")).toBe("Arztbriefe");
    expect((await getFixedTFor("en"))("loading.authenticating")).toBe("Authenticating...");
  });
});

describe("dates and languages", () => {
  it("format in Europe/Berlin time per language", () => {
    const winter = "2026-01-15T23:30:00Z"; // 00:30 on the 16th in Berlin
    expect(formatDateTime(winter, "de")).toBe("16.01.2026, 00:30");
    expect(formatDateTime(winter, "en")).toBe("16 Jan 2026, 00:30");
  });
  it("map template languages as SPEC §7 says", () => {
    expect(toTemplateLanguage("en")).toBe("en-GB");
    expect(toTemplateLanguage("de")).toBe("de-DE");
    expect(toTemplateLanguage("fr")).toBe("de-DE");
  });
});
