import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { elementIdFor, readSystemTemplateDirectory, SYSTEM_TEMPLATE_DIR } from "./system-templates.server";

// The loader's checks, on copies of the shipped files; the shipped set itself: system-templates-data.server.test.ts.
describe("elementIdFor", () => {
  it("lowercases, trims and joins words with underscores", () => {
    expect(elementIdFor("Therapie und Verlauf")).toBe("therapie_und_verlauf");
    expect(elementIdFor("  Ärztliche   Beurteilung ")).toBe("ärztliche_beurteilung");
    expect(elementIdFor("Größe")).toBe("größe");
    expect(elementIdFor("Sozial- und Berufsanamnese")).toBe("sozial-_und_berufsanamnese");
  });
});

describe("validation of template files", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  type Json = Record<string, unknown>;
  function shipped(id: string): Json {
    return JSON.parse(fs.readFileSync(path.join(SYSTEM_TEMPLATE_DIR, `${id}.json`), "utf8")) as Json;
  }

  function directoryWith(edit: (template: Json) => void, fileName = "default.json"): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-templates-"));
    dirs.push(dir);
    fs.writeFileSync(path.join(dir, "base.json"), JSON.stringify(shipped("base")));
    const template = shipped("default");
    edit(template);
    fs.writeFileSync(path.join(dir, fileName), JSON.stringify(template));
    return dir;
  }

  type Element = { id: string; name: string; description: string; isProtected: boolean };
  const de = (t: Json) => t.de as { prompt: string; elements: Element[] };
  const en = (t: Json) => t.en as { prompt: string; elements: Element[] };

  it("accepts a copy of the shipped files", () => {
    expect([...readSystemTemplateDirectory(directoryWith(() => {})).keys()].sort()).toEqual(["base", "default"]);
  });

  const broken: Array<[string, (t: Json) => void, RegExp]> = [
    ["a digit in an element name", (t) => (de(t).elements[0].name = "Diagnosen ICD10"), /letters, spaces and hyphens/],
    ["a slash in an English name", (t) => (en(t).elements[0].name = "Diagnoses/ICD"), /letters, spaces and hyphens/],
    ["an id not derived from the German name", (t) => (de(t).elements[0].id = "diagnoses"), /must be "diagnosen"/],
    ["a different id in English", (t) => (en(t).elements[1].id = "history"), /differs from the German/],
    ["different protection in English", (t) => (en(t).elements[0].isProtected = false), /protection/],
    ["a description over 100 characters", (t) => (de(t).elements[0].description = "x".repeat(101)), /100 characters/],
    ["an empty description", (t) => (en(t).elements[0].description = " "), /description is empty/],
    ["a prompt over 1000 characters", (t) => (de(t).prompt = "x".repeat(1001)), /1000 characters/],
    ["fewer than 4 elements", (t) => (de(t).elements = de(t).elements.slice(0, 3)), /fewer than 4/],
    [
      "a duplicate element name",
      (t) => {
        de(t).elements[1].name = "diagnosen";
        de(t).elements[1].id = "diagnosen";
        en(t).elements[1].id = "diagnosen";
      },
      /used twice/,
    ],
    ["an unknown organisation", (t) => (t.organization = "clinic"), /organization/],
    ["an unknown key", (t) => (t.order = 1), /order/],
  ];

  for (const [problem, edit, message] of broken) {
    it(`rejects ${problem}, naming the file`, () => {
      const dir = directoryWith(edit);
      expect(() => readSystemTemplateDirectory(dir)).toThrow(/default\.json/);
      expect(() => readSystemTemplateDirectory(dir)).toThrow(message);
    });
  }

  it("rejects a file whose name does not match its id", () => {
    const dir = directoryWith(() => {}, "standard.json");
    expect(() => readSystemTemplateDirectory(dir)).toThrow(/standard\.json: id "default" must match the file name/);
  });

  it("rejects invalid JSON, naming the file", () => {
    const dir = directoryWith(() => {});
    fs.writeFileSync(path.join(dir, "soap.json"), "{ not json");
    expect(() => readSystemTemplateDirectory(dir)).toThrow(/soap\.json: not valid JSON/);
  });

  it("requires the hidden base template", () => {
    const dir = directoryWith(() => {});
    fs.rmSync(path.join(dir, "base.json"));
    expect(() => readSystemTemplateDirectory(dir)).toThrow(/"base" is required/);
  });
});
