import { describe, expect, it } from "vitest";
import { getDb } from "~/models/db.server";
import { letterheadFor, savePracticeLetterhead } from "~/services/accounts/letterhead.server";
import { pngLogo, pngOfSize, SAFE_SVG } from "../support/letterhead-fixtures";
import {
  auditOf,
  doctor,
  errorOf,
  FULL,
  HERE,
  type Fields,
  page,
  plainPost,
  rowOf,
  save,
  valueOf,
} from "../support/letterhead-pages";
import { serve } from "../support/remix-document";
import { APP_URL, request, setupTestApp, signedInUser } from "../setup/app";

// Settings › "Briefkopf" (issue 25) through the whole app, as a browser without JavaScript uses it: the doctor's own
// letterhead saved with a multipart form (and a logo), refused input back as typed with translated messages and
// nothing written, the logo previewed from a resource route with its own headers, removed again; the fallback order
// of letterheadFor (own, practice, defaults); audit rows that say who and when, never what.
setupTestApp();

describe("the doctor's own letterhead", () => {
  it("is reached from the settings page and says that the letters use the defaults until one is saved", async () => {
    const anna = await doctor("anna.briefkopf@praxis.example");
    const settings = await page(anna.cookie, "de", "/settings");
    expect(settings.status).toBe(200);
    expect(settings.html).toMatch(/<a[^>]*href="\/settings\/letterhead"[^>]*>Briefkopf bearbeiten …<\/a>/);
    const dialog = await page(anna.cookie);
    expect(dialog.status).toBe(200);
    expect(dialog.html).toContain('role="dialog"');
    expect(dialog.html).toContain('data-letterhead-source="defaults"');
    expect(dialog.html).toContain("Es gibt noch keinen Briefkopf");
    expect(dialog.html).toMatch(/<form[^>]*enctype="multipart\/form-data"[^>]*data-letterhead-form/i);
    expect(dialog.html).toContain("data-logo-none");
    const english = await page(anna.cookie, "en");
    expect(english.html).toContain("There is no letterhead yet");
    expect(english.html).toContain("Save letterhead");

    // The defaults: the doctor's name, the language's closing, nothing else.
    expect(await letterheadFor({ userId: anna.userId, language: "de-DE" })).toEqual({
      practiceName: "",
      doctors: ["Dr. med. Anna Weber"],
      street: "",
      postalCode: "",
      city: "",
      phone: "",
      email: "",
      bsnr: null,
      lanr: null,
      logo: null,
      closing: "Mit freundlichen Grüßen",
      signature: ["Dr. med. Anna Weber"],
    });
    expect((await letterheadFor({ userId: anna.userId, language: "en-GB" })).closing).toBe("Kind regards");
  });

  it("is saved with every field and a PNG logo, shown again, and used for the doctor's letters", async () => {
    const anna = await doctor("anna.gespeichert@praxis.example");
    const logo = pngLogo(120, 40);
    const saved = await save(anna.cookie, FULL, { bytes: logo, name: "Logo Praxis.png", type: "image/png" });
    expect(saved.status).toBe(302);
    expect(saved.location).toBe(HERE);

    const letterhead = await letterheadFor({ userId: anna.userId, language: "de-DE" });
    expect(letterhead).toEqual({
      practiceName: "Hausarztpraxis Am Südpark",
      doctors: ["Dr. med. Anna Weber, Fachärztin für Allgemeinmedizin", "Dr. med. Jörg Maaß, Internist"],
      street: "Südparkstraße 12",
      postalCode: "50968",
      city: "Köln",
      phone: "+49 221 123456-0",
      email: "praxis@suedpark.example",
      bsnr: "123456789",
      lanr: "987654321",
      logo: { mime: "image/png", data: logo },
      closing: "Mit kollegialen Grüßen",
      signature: ["Dr. med. Anna Weber", "Fachärztin für Allgemeinmedizin"],
    });

    const shown = await page(`${anna.cookie}; ${saved.toast}`);
    expect(shown.html).toContain('data-letterhead-source="own"');
    expect(shown.html).toContain("Der Briefkopf wurde gespeichert.");
    expect(valueOf(shown.html, "practiceName")).toBe("Hausarztpraxis Am Südpark");
    expect(valueOf(shown.html, "doctors")?.trim()).toBe(
      "Dr. med. Anna Weber, Fachärztin für Allgemeinmedizin\nDr. med. Jörg Maaß, Internist",
    );
    expect(valueOf(shown.html, "bsnr")).toBe("123456789");
    const src = /<img[^>]*src="(\/resources\/letterhead-logo\?v=\d+)"/.exec(shown.html)?.[1];
    expect(src).toBeDefined();

    const preview = await serve(request(src!, { cookie: anna.cookie }));
    expect(preview.status).toBe(200);
    expect(preview.headers.get("Content-Type")).toBe("image/png");
    expect(preview.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(preview.headers.get("Content-Security-Policy")).toBe("default-src 'none'; style-src 'unsafe-inline'");
    expect(new Uint8Array(await preview.arrayBuffer())).toEqual(logo);

    // Saved again without choosing a file: the logo stays; the empty closing and signature become the defaults.
    const again = await save(anna.cookie, { ...FULL, closing: "", signature: "" });
    expect(again.status).toBe(302);
    const kept = await letterheadFor({ userId: anna.userId, language: "en-GB" });
    expect(kept.logo?.data).toEqual(logo);
    expect(kept.closing).toBe("Kind regards");
    expect(kept.signature).toEqual(["Dr. med. Anna Weber"]);
  });

  it("takes a harmless SVG logo and serves it so that it can do nothing", async () => {
    const anna = await doctor("anna.svg@praxis.example");
    const saved = await save(anna.cookie, FULL, {
      bytes: new TextEncoder().encode(SAFE_SVG),
      name: "logo.svg",
      type: "image/svg+xml",
    });
    expect(saved.status).toBe(302);
    const preview = await serve(request("/resources/letterhead-logo", { cookie: anna.cookie }));
    expect(preview.headers.get("Content-Type")).toBe("image/svg+xml");
    expect(preview.headers.get("Content-Security-Policy")).toBe("default-src 'none'; style-src 'unsafe-inline'");
    expect(preview.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(await preview.text()).toBe(SAFE_SVG);
  });

  it("refuses text past its limits with translated messages, keeps what was typed and writes nothing", async () => {
    const anna = await doctor("anna.grenzen@praxis.example");
    expect((await save(anna.cookie, FULL)).status).toBe(302);
    const before = await rowOf(anna.userId);
    const typed: Fields = {
      ...FULL,
      practiceName: "P".repeat(121),
      doctors: Array.from({ length: 7 }, (_, i) => `Dr. med. Arzt ${i + 1}`).join("\n"),
      postalCode: "50968<",
      phone: "0221 abc",
      email: "praxis-at-suedpark",
      bsnr: "12345678",
      lanr: "98765432a",
      closing: "Grüße\u0007",
      signature: `${"S".repeat(121)}\nZweite Zeile`,
    };
    const refused = await save(anna.cookie, typed);
    expect(refused.status).toBe(400);
    expect(errorOf(refused.html, "practiceName")).toBe("Höchstens 120 Zeichen.");
    expect(errorOf(refused.html, "doctors")).toBe("Höchstens 6 Zeilen.");
    expect(errorOf(refused.html, "postalCode")).toBe("Nur Buchstaben, Ziffern, Leerzeichen und Bindestriche.");
    expect(errorOf(refused.html, "phone")).toBe("Nur Ziffern, Leerzeichen und + ( ) / - .");
    expect(errorOf(refused.html, "email")).toBe("Bitte eine E-Mail-Adresse wie praxis@example.de eingeben.");
    expect(errorOf(refused.html, "bsnr")).toBe("Genau neun Ziffern, oder leer lassen.");
    expect(errorOf(refused.html, "lanr")).toBe("Genau neun Ziffern, oder leer lassen.");
    expect(errorOf(refused.html, "closing")).toBe(
      "Enthält Steuer- oder unsichtbare Zeichen, die kein Brief drucken kann.",
    );
    expect(errorOf(refused.html, "signature")).toBe("Jede Zeile höchstens 120 Zeichen.");
    // What was typed, as typed.
    expect(valueOf(refused.html, "practiceName")).toBe("P".repeat(121));
    expect(valueOf(refused.html, "email")).toBe("praxis-at-suedpark");
    expect(valueOf(refused.html, "bsnr")).toBe("12345678");
    expect(valueOf(refused.html, "doctors")).toContain("Dr. med. Arzt 7");
    expect(refused.html).toMatch(
      /<input[^>]*aria-invalid="true"[^>]*name="practiceName"|name="practiceName"[^>]*aria-invalid="true"/,
    );
    expect(await rowOf(anna.userId)).toEqual(before);

    const english = await save(anna.cookie, { ...FULL, bsnr: "1234" }, undefined, "en");
    expect(english.status).toBe(400);
    expect(errorOf(english.html, "bsnr")).toBe("Exactly nine digits, or leave it empty.");
    expect(await rowOf(anna.userId)).toEqual(before);
  });

  it("refuses a logo over 256 KiB, keeping the typed fields, and a PNG over 2000 pixels or broken", async () => {
    const anna = await doctor("anna.logo@praxis.example");
    const typed = { ...FULL, practiceName: "Neu getippte Praxis" };
    const large = await save(anna.cookie, typed, {
      bytes: pngOfSize(256 * 1024 + 1),
      name: "g.png",
      type: "image/png",
    });
    expect(large.status).toBe(400);
    expect(errorOf(large.html, "logo")).toBe("Das Logo ist größer als 256 KiB. Bitte eine kleinere Datei wählen.");
    expect(valueOf(large.html, "practiceName")).toBe("Neu getippte Praxis");
    // Exactly the limit is taken.
    expect(
      (await save(anna.cookie, typed, { bytes: pngOfSize(256 * 1024), name: "g.png", type: "image/png" })).status,
    ).toBe(302);
    const wide = await save(anna.cookie, typed, { bytes: pngLogo(2001, 1), name: "w.png", type: "image/png" });
    expect(errorOf(wide.html, "logo")).toBe("Das PNG ist größer als 2000 × 2000 Pixel. Bitte verkleinern.");
    const broken = pngLogo(10, 10);
    broken[broken.length - 20] ^= 0xff;
    const damaged = await save(anna.cookie, typed, { bytes: broken, name: "b.png", type: "image/png" });
    expect(errorOf(damaged.html, "logo")).toBe("Die PNG-Datei ist beschädigt oder unvollständig.");
    const truncated = await save(anna.cookie, typed, {
      bytes: pngLogo(10, 10).slice(0, 40),
      name: "t.png",
      type: "image/png",
    });
    expect(errorOf(truncated.html, "logo")).toBe("Die PNG-Datei ist beschädigt oder unvollständig.");
    // A file name Remix's multipart parser cannot read: a message, not a server fault.
    const named = await save(anna.cookie, typed, { bytes: pngLogo(4, 4), name: "Logo; Praxis.png", type: "image/png" });
    expect(named.status).toBe(400);
    expect(named.html).toContain("Der Name der Logo-Datei ist nicht lesbar.");
    const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46]);
    // The browser's claimed type and the file's name do not count: the bytes do.
    const claimed = await save(anna.cookie, typed, { bytes: jpeg, name: "logo.png", type: "image/png" });
    expect(errorOf(claimed.html, "logo")).toBe("Das Logo muss ein PNG oder ein SVG sein.");
    const english = await save(anna.cookie, typed, { bytes: jpeg, name: "logo.png", type: "image/png" }, "en");
    expect(errorOf(english.html, "logo")).toBe("The logo must be a PNG or an SVG.");
    // The one save that passed is the one stored.
    expect((await letterheadFor({ userId: anna.userId, language: "de-DE" })).logo?.data.byteLength).toBe(256 * 1024);
  });

  it("loses its logo, then itself, with plain forms; the audit rows name the letterhead, never its content", async () => {
    const anna = await doctor("anna.entfernt@praxis.example");
    expect((await save(anna.cookie, FULL, { bytes: pngLogo(8, 8), name: "l.png", type: "image/png" })).status).toBe(
      302,
    );
    const id = (await rowOf(anna.userId))!.id;
    const removed = await plainPost(anna.cookie, { intent: "remove-logo" });
    expect(removed).toMatchObject({ status: 302, location: HERE });
    expect((await letterheadFor({ userId: anna.userId, language: "de-DE" })).logo).toBeNull();
    expect((await serve(request("/resources/letterhead-logo", { cookie: anna.cookie }))).status).toBe(404);
    const shown = await page(`${anna.cookie}; ${removed.toast}`);
    expect(shown.html).toContain("Das Logo wurde entfernt.");
    expect(shown.html).not.toContain("data-logo-preview");
    expect(await plainPost(anna.cookie, { intent: "remove" })).toMatchObject({ status: 302, location: HERE });
    expect(await rowOf(anna.userId)).toBeUndefined();
    expect((await page(anna.cookie)).html).toContain('data-letterhead-source="defaults"');
    // An intent the page does not have.
    expect((await plainPost(anna.cookie, { intent: "delete-everything" })).status).toBe(400);

    const rows = await auditOf(anna.userId);
    expect(rows.map((r) => [r.action, r.entity_type, r.entity_id, r.outcome])).toEqual([
      ["letterhead.update", "letterhead", id, "success"],
      ["letterhead.update", "letterhead", id, "success"],
      ["letterhead.remove", "letterhead", id, "success"],
    ]);
    const written = JSON.stringify(rows);
    for (const value of ["Südpark", "Weber", "123456789", "987654321", "praxis@suedpark", "kollegialen"])
      expect(written).not.toContain(value);
  });
});

describe("which letterhead a letter goes out on", () => {
  it("is the doctor's own, else the practice's, else the defaults", async () => {
    const anna = await doctor("anna.reihenfolge@praxis.example", "Dr. med. Anna Reihe");
    const admin = await signedInUser({ email: "ops.reihenfolge@skribent.example" });
    const request = new Request(`${APP_URL}/betrieb/letterhead`);
    await savePracticeLetterhead({
      admin: { id: admin.user.id, email: admin.user.email, emailVerified: true },
      fields: {
        practiceName: "MVZ Gemeinschaftspraxis",
        doctors: ["Praxisteam"],
        street: "Ring 1",
        postalCode: "10115",
        city: "Berlin",
        phone: "",
        email: "",
        bsnr: "111222333",
        lanr: null,
        closing: "",
        signature: [],
      },
      logo: { data: pngLogo(4, 4) },
      request,
    });
    const practice = await letterheadFor({ userId: anna.userId, language: "de-DE" });
    expect(practice).toMatchObject({
      practiceName: "MVZ Gemeinschaftspraxis",
      doctors: ["Praxisteam"],
      bsnr: "111222333",
      closing: "Mit freundlichen Grüßen",
      // The practice's letterhead is signed by the doctor whose letter it is.
      signature: ["Dr. med. Anna Reihe"],
    });
    expect(practice.logo?.mime).toBe("image/png");
    expect((await page(anna.cookie)).html).toContain('data-letterhead-source="practice"');
    // Every signed-in user may see the practice's logo their letters carry.
    expect((await serve(request_("/resources/letterhead-logo?scope=practice", anna.cookie))).status).toBe(200);
    expect((await serve(request_("/resources/letterhead-logo", anna.cookie))).status).toBe(404);

    expect((await save(anna.cookie, FULL)).status).toBe(302);
    const own = await letterheadFor({ userId: anna.userId, language: "de-DE" });
    expect(own.practiceName).toBe("Hausarztpraxis Am Südpark");
    // The own letterhead has no logo: it does not borrow the practice's.
    expect(own.logo).toBeNull();

    expect((await plainPost(anna.cookie, { intent: "remove" })).status).toBe(302);
    expect((await letterheadFor({ userId: anna.userId, language: "de-DE" })).practiceName).toBe(
      "MVZ Gemeinschaftspraxis",
    );
    await getDb().deleteFrom("letterheads").where("scope", "=", "practice").execute();
    expect((await letterheadFor({ userId: anna.userId, language: "en-GB" })).doctors).toEqual(["Dr. med. Anna Reihe"]);
  });

  it("falls back to the e-mail address when the account has no name", async () => {
    const { user } = await signedInUser({ email: "ohne.namen@praxis.example" });
    const letterhead = await letterheadFor({ userId: user.id, language: "de-DE" });
    expect(letterhead.doctors).toEqual(["ohne.namen@praxis.example"]);
    expect(letterhead.signature).toEqual(["ohne.namen@praxis.example"]);
  });
});

describe("another doctor", () => {
  it("sees nothing of the first one's letterhead, and cannot reach its logo", async () => {
    const anna = await doctor("anna.fremd@praxis.example");
    const jonas = await doctor("jonas.fremd@praxis.example", "Dr. med. Jonas Keller");
    expect((await save(anna.cookie, FULL, { bytes: pngLogo(8, 8), name: "l.png", type: "image/png" })).status).toBe(
      302,
    );
    const theirs = await page(jonas.cookie);
    expect(theirs.html).toContain('data-letterhead-source="defaults"');
    expect(theirs.html).not.toContain("Südpark");
    const logo = await serve(request_(`/resources/letterhead-logo?owner=${anna.userId}`, jonas.cookie));
    expect(logo.status).toBe(404);
    // Jonas's save is Jonas's, whatever ids the form names.
    const forged = await save(jonas.cookie, { ...FULL, practiceName: "Praxis Keller", owner_id: anna.userId, id: "x" });
    expect(forged.status).toBe(302);
    expect((await rowOf(jonas.userId))?.practice_name).toBe("Praxis Keller");
    expect((await rowOf(anna.userId))?.practice_name).toBe("Hausarztpraxis Am Südpark");
  });
});

function request_(path: string, cookie: string) {
  return request(path, { cookie });
}
