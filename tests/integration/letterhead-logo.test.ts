import { describe, expect, it } from "vitest";
import { HOSTILE_SVGS, SAFE_SVG } from "../support/letterhead-fixtures";
import { doctor, errorOf, FULL, rowOf, save, valueOf } from "../support/letterhead-pages";
import { setupTestApp } from "../setup/app";

// An SVG logo is taken only when it can do nothing (issue 25): well-formed XML whose root is an SVG, with no script,
// foreignObject, event handler, javascript:/data: address, reference outside the image, DOCTYPE or entity, and no
// style sheet that imports or loads. Each hostile SVG is refused — not cleaned — with its own translated message,
// the typed fields kept and nothing stored; the same logo with the harmful part taken out is accepted.
setupTestApp();

const MESSAGES_DE: Record<string, string> = {
  svgNotXml: "Das SVG ist kein gültiges XML.",
  svgNotSvg: "Die Datei ist kein SVG-Bild (das Wurzelelement muss <svg> sein).",
  svgDoctype: "Das SVG enthält eine DOCTYPE- oder ENTITY-Deklaration; solche SVGs werden nicht angenommen.",
  svgScript: "Das SVG enthält ein Skript oder eingebettete Inhalte; solche SVGs werden nicht angenommen.",
  svgForeignObject: "Das SVG enthält ein foreignObject (eingebettetes HTML); solche SVGs werden nicht angenommen.",
  svgEventHandler: "Das SVG enthält Ereignis-Attribute (on…); solche SVGs werden nicht angenommen.",
  svgUnsafeUrl: "Das SVG enthält javascript:- oder data:-Adressen; solche SVGs werden nicht angenommen.",
  svgExternal: "Das SVG verweist auf Dateien oder Adressen außerhalb des Bildes; solche SVGs werden nicht angenommen.",
  svgStyle:
    "Das SVG lädt in einem Stylesheet weitere Inhalte (@import oder url(…)); solche SVGs werden nicht angenommen.",
};

const svgFile = (svg: string) => ({ bytes: new TextEncoder().encode(svg), name: "logo.svg", type: "image/svg+xml" });

describe("an SVG logo", () => {
  it.each(HOSTILE_SVGS.map((c) => [c.name, c.svg, c.reason]))("with %s is refused", async (_, svg, reason) => {
    const anna = await doctor(`svg.${reason}.${Math.random().toString(36).slice(2)}@praxis.example`);
    const typed = { ...FULL, practiceName: "Praxis mit neuem Logo" };
    const refused = await save(anna.cookie, typed, svgFile(svg));
    expect(refused.status).toBe(400);
    expect(errorOf(refused.html, "logo")).toBe(MESSAGES_DE[reason]);
    expect(valueOf(refused.html, "practiceName")).toBe("Praxis mit neuem Logo");
    expect(await rowOf(anna.userId)).toBeUndefined();
    // Nothing of the hostile file comes back in the page.
    expect(refused.html).not.toContain("alert(");
  });

  it("gets its refusal in English too", async () => {
    const anna = await doctor("svg.english@praxis.example");
    const refused = await save(anna.cookie, FULL, svgFile(HOSTILE_SVGS[0].svg), "en");
    expect(errorOf(refused.html, "logo")).toBe(
      "The SVG contains a script or embedded content; such SVGs are not accepted.",
    );
  });

  it("is taken with gradients, internal references, plain styles and a BOM", async () => {
    const anna = await doctor("svg.harmlos@praxis.example");
    const saved = await save(anna.cookie, FULL, svgFile(`\uFEFF${SAFE_SVG}`));
    expect(saved.status).toBe(302);
    expect((await rowOf(anna.userId))?.logo_mime).toBe("image/svg+xml");
  });

  it("is refused when it is no UTF-8 text or nothing at all", async () => {
    const anna = await doctor("svg.kaputt@praxis.example");
    const latin1 = new Uint8Array([...new TextEncoder().encode("<svg>"), 0xe4, 0xff, 0xfe]);
    const broken = await save(anna.cookie, FULL, { bytes: latin1, name: "l.svg", type: "image/svg+xml" });
    expect(errorOf(broken.html, "logo")).toBe(MESSAGES_DE.svgNotXml);
    const whitespace = await save(anna.cookie, FULL, {
      bytes: new TextEncoder().encode("   "),
      name: "l.svg",
      type: "",
    });
    expect(errorOf(whitespace.html, "logo")).toBe("Das Logo muss ein PNG oder ein SVG sein.");
    expect(await rowOf(anna.userId)).toBeUndefined();
  });
});
