import { describe, expect, it } from "vitest";
import {
  DEFAULT_COLLECTION,
  elementIdFor,
  getSystemTemplate,
  listSystemTemplates,
  loadSystemTemplates,
  organizations,
  type SystemTemplate,
  type TemplateLanguage,
} from "./system-templates.server";

// A data test over the shipped files (issue 3, "Done when"): it reads the real directory.
const languages: TemplateLanguage[] = ["de-DE", "en-GB"];
const NAME_RULE = /^[A-Za-zÄÖÜäöüß -]+$/;

function byId(language: TemplateLanguage): Map<string, SystemTemplate> {
  return new Map(listSystemTemplates(language).map((t) => [t.id, t]));
}

function protectedIds(template: SystemTemplate | null): string[] {
  return (template?.elements ?? []).filter((e) => e.isProtected).map((e) => e.id);
}

describe("the shipped system template set", () => {
  it("lists at least 12 templates, the same ones in both languages", () => {
    const de = listSystemTemplates("de-DE");
    const en = listSystemTemplates("en-GB");
    expect(de.length).toBeGreaterThanOrEqual(12);
    expect(en.map((t) => t.id)).toEqual(de.map((t) => t.id));
    expect(new Set(de.map((t) => t.id)).size).toBe(de.length);
  });

  it("uses the same element ids, order and protection in both languages", () => {
    for (const [id, entry] of loadSystemTemplates()) {
      const de = entry["de-DE"].elements.map((e) => [e.id, e.isProtected]);
      const en = entry["en-GB"].elements.map((e) => [e.id, e.isProtected]);
      expect(en, id).toEqual(de);
    }
  });

  it("keeps every template within the product's limits", () => {
    for (const [id, entry] of loadSystemTemplates()) {
      for (const language of languages) {
        const t = entry[language];
        const where = `${id} ${language}`;
        expect(t.elements.length, where).toBeGreaterThanOrEqual(4);
        expect(t.elements.length, where).toBeLessThanOrEqual(10);
        expect(t.prompt.trim().length, where).toBeGreaterThan(0);
        expect(t.prompt.length, where).toBeLessThanOrEqual(1000);
        expect(t.name.trim().length, where).toBeGreaterThan(0);
        expect(t.description.trim().length, where).toBeGreaterThan(0);
        expect(t.description.length, where).toBeLessThanOrEqual(200);
        for (const element of t.elements) {
          const at = `${where} ${element.id}`;
          expect(element.description.trim().length, at).toBeGreaterThanOrEqual(1);
          expect(element.description.length, at).toBeLessThanOrEqual(100);
          expect(element.name, at).toMatch(NAME_RULE);
          expect(element.name, at).toBe(element.name.trim());
        }
        const names = t.elements.map((e) => e.name.toLowerCase());
        expect(new Set(names).size, where).toBe(names.length);
      }
    }
  });

  it("derives every element id from the German element name", () => {
    for (const [id, entry] of loadSystemTemplates()) {
      for (const element of entry["de-DE"].elements) {
        expect(element.id, id).toBe(elementIdFor(element.name));
      }
    }
  });

  it("tells the model to write the no-information marker in each language", () => {
    for (const [id, entry] of loadSystemTemplates()) {
      expect(entry["de-DE"].prompt, id).toContain("Keine Angaben");
      expect(entry["en-GB"].prompt, id).toContain("No information found");
    }
  });

  it("fills every organisation group", () => {
    const listed = listSystemTemplates("de-DE");
    for (const organization of organizations) {
      expect(listed.filter((t) => t.organization === organization).length, organization).toBeGreaterThan(0);
    }
  });

  it("lists in organisation order with default first", () => {
    const listed = listSystemTemplates("de-DE");
    expect(listed[0].id).toBe("default");
    expect(listed[0].organization).toBe("general");
    const ranks = listed.map((t) => organizations.indexOf(t.organization));
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
  });

  it("ships base as a hidden fallback that is never listed", () => {
    for (const language of languages) {
      const base = getSystemTemplate("base", language);
      expect(base?.hidden).toBe(true);
      expect(base?.organization).toBe("general");
      expect(base?.elements.length).toBeGreaterThanOrEqual(4);
      expect(listSystemTemplates(language).some((t) => t.id === "base")).toBe(false);
      expect(listSystemTemplates(language).every((t) => !t.hidden)).toBe(true);
    }
    expect(protectedIds(getSystemTemplate("base", "de-DE"))).toEqual(
      expect.arrayContaining(["anamnese", "befund", "beurteilung", "procedere"]),
    );
  });

  it("returns null for an unknown template and copies that cannot change the set", () => {
    expect(getSystemTemplate("gibt_es_nicht", "de-DE")).toBeNull();
    const first = getSystemTemplate("default", "de-DE")!;
    first.elements[0].name = "Verändert";
    first.elements.pop();
    const again = getSystemTemplate("default", "de-DE")!;
    expect(again.elements[0].name).toBe("Diagnosen");
    expect(again.elements.length).toBe(loadSystemTemplates().get("default")!["de-DE"].elements.length);
  });

  it("starts new users with default and the rest of the general group", () => {
    const general = listSystemTemplates("de-DE")
      .filter((t) => t.organization === "general")
      .map((t) => t.id);
    expect(DEFAULT_COLLECTION[0]).toBe("default");
    expect([...DEFAULT_COLLECTION].sort()).toEqual([...general].sort());
    expect(DEFAULT_COLLECTION).not.toContain("base");
  });

  describe("required sections are present and protected", () => {
    const required: Record<string, { organization: string; protected: string[] }> = {
      default: { organization: "general", protected: ["diagnosen", "anamnese", "befunde", "beurteilung", "procedere"] },
      kurzbrief: { organization: "general", protected: ["diagnosen", "procedere"] },
      soap: { organization: "general", protected: ["subjektiv", "objektiv", "beurteilung", "plan"] },
      entlassbrief: {
        organization: "hospital",
        protected: ["diagnosen", "anamnese", "befunde", "therapie_und_verlauf", "entlassmedikation", "procedere"],
      },
      verlegungsbrief: {
        organization: "hospital",
        protected: ["diagnosen", "verlegungsgrund", "therapie_und_verlauf", "aktueller_zustand", "aktuelle_medikation"],
      },
      notaufnahmebericht: {
        organization: "hospital",
        protected: ["diagnosen", "anamnese", "untersuchungsbefund", "therapie_in_der_notaufnahme", "procedere"],
      },
      konsiliarbericht: {
        organization: "hospital",
        protected: ["fragestellung", "befund", "beurteilung", "empfehlungen"],
      },
      befundbericht: {
        organization: "outpatient",
        protected: ["diagnosen", "anamnese", "befunde", "beurteilung", "procedere"],
      },
      ueberweisung: { organization: "outpatient", protected: ["diagnosen", "fragestellung"] },
      kardiologie_befundbericht: {
        organization: "outpatient",
        protected: ["diagnosen", "anamnese", "beurteilung", "medikation", "procedere"],
      },
      urologie_befundbericht: {
        organization: "outpatient",
        protected: ["diagnosen", "anamnese", "beurteilung", "procedere"],
      },
      reha_entlassungsbericht: {
        organization: "rehabilitation",
        protected: [
          "diagnosen",
          "anamnese_und_beschwerden",
          "sozial-_und_berufsanamnese",
          "aufnahmebefund",
          "rehabilitationsverlauf",
          "rehabilitationsergebnis",
          "sozialmedizinische_leistungsbeurteilung",
          "entlassmedikation",
          "nachsorge_und_empfehlungen",
        ],
      },
      verlaufsbericht: {
        organization: "partner",
        protected: ["diagnosen", "intervallanamnese", "beurteilung", "procedere"],
      },
      shared_care_uebergabe: {
        organization: "partner",
        protected: ["diagnosen", "aktuelle_medikation", "aufgabenverteilung", "zielwerte_und_warnzeichen"],
      },
    };

    for (const [id, expected] of Object.entries(required)) {
      it(`${id} (${expected.organization})`, () => {
        for (const language of languages) {
          const template = byId(language).get(id);
          expect(template, `${id} is listed in ${language}`).toBeDefined();
          expect(template!.organization).toBe(expected.organization);
          expect(protectedIds(template!)).toEqual(expect.arrayContaining(expected.protected));
        }
      });
    }

    it("the SOAP note has exactly its four parts, all protected", () => {
      const soap = getSystemTemplate("soap", "en-GB")!;
      expect(soap.elements.map((e) => [e.id, e.name, e.isProtected])).toEqual([
        ["subjektiv", "Subjective", true],
        ["objektiv", "Objective", true],
        ["beurteilung", "Assessment", true],
        ["plan", "Plan", true],
      ]);
    });

    it("the German names read as a physician expects", () => {
      const names = getSystemTemplate("entlassbrief", "de-DE")!.elements.map((e) => e.name);
      expect(names).toEqual(
        expect.arrayContaining(["Diagnosen", "Anamnese", "Befunde", "Therapie und Verlauf", "Entlassmedikation"]),
      );
      expect(getSystemTemplate("entlassbrief", "en-GB")!.elements.map((e) => e.name)).toContain(
        "Medication at discharge",
      );
    });
  });
});
