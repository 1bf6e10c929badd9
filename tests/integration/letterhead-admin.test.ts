import { describe, expect, it } from "vitest";
import { getDb } from "~/models/db.server";
import { letterheadFor, savePracticeLetterhead } from "~/services/accounts/letterhead.server";
import { DomainError } from "~/services/web/domain-error.server";
import { sessionFor } from "../support/admin-pages";
import { pngLogo, SAFE_SVG } from "../support/letterhead-fixtures";
import { errorOf, FULL, page, plainPost, save, valueOf } from "../support/letterhead-pages";
import { serve } from "../support/remix-document";
import { request, setupTestApp, signedInUser } from "../setup/app";

// The practice's letterhead (issue 25) on the admin area's hidden path: an operator admin sets it, with the form of
// Settings › "Briefkopf"; every doctor without a letterhead of their own writes on it. Anyone else gets the admin
// area's refusal — 403 with SPEC §8's message and nothing of the page — on the page and on its posts, and the service
// refuses them too. Saving and removing are audited as the practice's, by the admin, without content.
setupTestApp();

const ADMIN_PAGE = "/betrieb/letterhead";
const DENIED_DE = "Zugriff verweigert - nicht autorisierte Domain";
const svg = { bytes: new TextEncoder().encode(SAFE_SVG), name: "praxis.svg", type: "image/svg+xml" };

async function practiceRows() {
  return getDb().selectFrom("letterheads").where("scope", "=", "practice").selectAll().execute();
}

async function letterheadAudit(userId: string) {
  return getDb()
    .selectFrom("audit_events")
    .where("user_id", "=", userId)
    .where((eb) => eb.or([eb("action", "like", "letterhead.%"), eb("action", "=", "admin.letterhead")]))
    .select(["action", "entity_type", "entity_id", "outcome"])
    .orderBy("at")
    .execute();
}

describe("the practice letterhead", () => {
  it("is set by an admin, used by a doctor without their own, and audited without its content", async () => {
    const admin = await sessionFor("admin@skribent.example", { name: "Ops Admin" });
    const anna = await signedInUser({ email: "anna.praxiskopf@praxis.example", name: "Dr. med. Anna Praxis" });

    const empty = await page(admin.cookie, "de", ADMIN_PAGE);
    expect(empty.status).toBe(200);
    expect(empty.html).toContain("Briefkopf der Praxis");
    expect(empty.html).toContain('data-letterhead-source="none"');
    expect(empty.html).toMatch(/<a[^>]*href="\/betrieb\/letterhead"[^>]*>Briefkopf der Praxis<\/a>/);

    const refused = await save(admin.cookie, { ...FULL, lanr: "12" }, svg, "de", ADMIN_PAGE);
    expect(refused.status).toBe(400);
    expect(errorOf(refused.html, "lanr")).toBe("Genau neun Ziffern, oder leer lassen.");
    expect(valueOf(refused.html, "practiceName")).toBe(FULL.practiceName);
    expect(await practiceRows()).toEqual([]);

    const saved = await save(admin.cookie, { ...FULL, signature: "" }, svg, "de", ADMIN_PAGE);
    expect(saved).toMatchObject({ status: 302, location: ADMIN_PAGE });
    const shown = await page(`${admin.cookie}; ${saved.toast}`, "de", ADMIN_PAGE);
    expect(shown.html).toContain("Der Briefkopf der Praxis wurde gespeichert.");
    expect(shown.html).toContain('data-letterhead-source="practice"');
    expect(shown.html).toMatch(/<img[^>]*src="\/resources\/letterhead-logo\?scope=practice&v=\d+"/);
    // Saved twice: still one practice letterhead.
    expect((await save(admin.cookie, { ...FULL, signature: "" }, undefined, "de", ADMIN_PAGE)).status).toBe(302);
    const rows = await practiceRows();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ owner_id: null, practice_name: FULL.practiceName, logo_mime: "image/svg+xml" });

    // A doctor without a letterhead of their own writes on it, signing with their own name, and sees its logo.
    const letterhead = await letterheadFor({ userId: anna.user.id, language: "de-DE" });
    expect(letterhead).toMatchObject({ practiceName: FULL.practiceName, signature: ["Dr. med. Anna Praxis"] });
    expect(new TextDecoder().decode(letterhead.logo!.data)).toBe(SAFE_SVG);
    const preview = await serve(request("/resources/letterhead-logo?scope=practice", { cookie: anna.cookie }));
    expect(preview.status).toBe(200);
    expect(preview.headers.get("Content-Type")).toBe("image/svg+xml");
    expect(preview.headers.get("Content-Security-Policy")).toBe("default-src 'none'; style-src 'unsafe-inline'");
    expect(preview.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect((await page(anna.cookie)).html).toContain('data-letterhead-source="practice"');

    expect(await plainPost(admin.cookie, { intent: "remove-logo" }, ADMIN_PAGE)).toMatchObject({ status: 302 });
    expect((await practiceRows())[0].logo).toBeNull();
    expect(await plainPost(admin.cookie, { intent: "remove" }, ADMIN_PAGE)).toMatchObject({ status: 302 });
    expect(await practiceRows()).toEqual([]);
    expect((await letterheadFor({ userId: anna.user.id, language: "de-DE" })).practiceName).toBe("");

    const id = rows[0].id;
    const audit = await letterheadAudit(admin.user.id);
    expect(audit.filter((row) => row.action !== "admin.letterhead")).toEqual([
      { action: "letterhead.practice.update", entity_type: "letterhead", entity_id: id, outcome: "success" },
      { action: "letterhead.practice.update", entity_type: "letterhead", entity_id: id, outcome: "success" },
      { action: "letterhead.practice.update", entity_type: "letterhead", entity_id: id, outcome: "success" },
      { action: "letterhead.practice.remove", entity_type: "letterhead", entity_id: id, outcome: "success" },
    ]);
    expect(JSON.stringify(audit)).not.toContain("Südpark");
  });

  it("is one row at most, whatever writes it", async () => {
    await getDb()
      .insertInto("letterheads")
      .values({ scope: "practice", owner_id: null, doctors: "[]", signature: "[]" })
      .execute();
    await expect(
      getDb()
        .insertInto("letterheads")
        .values({ scope: "practice", owner_id: null, doctors: "[]", signature: "[]" })
        .execute(),
    ).rejects.toThrow();
    // A practice row owned by someone, or a user's row owned by no one, is no letterhead either.
    const { user } = await signedInUser({ email: "besitz@praxis.example" });
    await expect(
      getDb()
        .insertInto("letterheads")
        .values({ scope: "practice", owner_id: user.id, doctors: "[]", signature: "[]" })
        .execute(),
    ).rejects.toThrow();
    await expect(
      getDb()
        .insertInto("letterheads")
        .values({ scope: "user", owner_id: null, doctors: "[]", signature: "[]" })
        .execute(),
    ).rejects.toThrow();
    await getDb().deleteFrom("letterheads").where("scope", "=", "practice").execute();
  });
});

describe("a clinician on the practice letterhead", () => {
  it("is refused with 403 on the page and its posts, changes nothing, and is audited", async () => {
    const admin = await sessionFor("admin@skribent.example");
    expect((await save(admin.cookie, FULL, undefined, "de", ADMIN_PAGE)).status).toBe(302);
    const before = await practiceRows();
    const jonas = await sessionFor("jonas.keller@klinikum-nord.example", { name: "Dr. med. Jonas Keller" });

    const shown = await page(jonas.cookie, "de", ADMIN_PAGE);
    expect(shown.status).toBe(403);
    expect(shown.html).toContain(DENIED_DE);
    expect(shown.html).not.toContain("data-letterhead-form");
    expect(shown.html).not.toContain(FULL.practiceName);

    const posted = await save(jonas.cookie, { ...FULL, practiceName: "Übernommen" }, { ...svg }, "de", ADMIN_PAGE);
    expect(posted.status).toBe(403);
    expect(await plainPost(jonas.cookie, { intent: "remove" }, ADMIN_PAGE)).toMatchObject({ status: 403 });
    expect(await practiceRows()).toEqual(before);

    // The service decides for itself too: no other door reaches the practice's letterhead.
    await expect(
      savePracticeLetterhead({
        admin: { id: jonas.user.id, email: jonas.user.email, emailVerified: true },
        fields: { ...emptyFields(), practiceName: "Hintertür" },
        logo: { data: pngLogo(2, 2) },
        request: request(ADMIN_PAGE),
      }),
    ).rejects.toSatisfy((error: unknown) => error instanceof DomainError && error.kind === "forbidden");
    expect(await practiceRows()).toEqual(before);

    const audit = await letterheadAudit(jonas.user.id);
    // The page once, each post twice: its refusal, and the page's loader as Remix renders the answer.
    expect(audit.map((row) => [row.action, row.outcome])).toEqual(Array(5).fill(["admin.letterhead", "denied"]));
    // Only the hidden path leads there.
    expect((await page(admin.cookie, "de", "/admin/letterhead")).status).toBe(404);
    await getDb().deleteFrom("letterheads").where("scope", "=", "practice").execute();
  });
});

function emptyFields() {
  return {
    practiceName: "",
    doctors: [],
    street: "",
    postalCode: "",
    city: "",
    phone: "",
    email: "",
    bsnr: null,
    lanr: null,
    closing: "",
    signature: [],
  };
}
