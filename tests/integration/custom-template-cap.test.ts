import { describe, expect, it } from "vitest";
import { insertCustomTemplate } from "~/models/template.server";
import { action as newAction, loader as newLoader } from "~/routes/_app.settings.new";
import { loader as settingsLoader } from "~/routes/_app.settings/route";
import { action as customApi } from "~/routes/api.structure.custom-template";
import { MAX_CUSTOM_TEMPLATES } from "~/services/templates/custom-templates.server";
import { getDb } from "~/models/db.server";
import { languageCookie } from "~/services/web/i18n.server";
import { serve } from "../support/remix-document";
import { APP_URL, callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// ASVS 2.4.1: a user has at most MAX_CUSTOM_TEMPLATES (20) custom templates per template language, refused on the
// server in both doors — the settings form and POST /api/structure/custom-template — with a translated message.
// Templates saved before the cap are all kept; only creating more is refused until the user deletes some.
setupTestApp();

const SAME_ORIGIN = { Origin: APP_URL, "Sec-Fetch-Site": "same-origin" };

function createByApi(cookie: string, name: string, language = "de-DE") {
  return callRoute(
    customApi,
    request("/api/structure/custom-template", {
      method: "POST",
      cookie,
      headers: { ...SAME_ORIGIN, "Content-Type": "application/json" },
      body: JSON.stringify({
        custom_name: name,
        language_code: language,
        structure_elements: [{ name: "Befund", description: "Kurzbefund" }],
        prompt: "",
      }),
    }),
  );
}

function deleteByApi(cookie: string, templateId: string) {
  return callRoute(
    customApi,
    request(`/api/structure/custom-template?template_id=${templateId}&language_code=de-DE`, {
      method: "DELETE",
      cookie,
      headers: SAME_ORIGIN,
    }),
  );
}

function newTemplateForm(name: string) {
  return new URLSearchParams({ name, "elements[0].name": "Befund", "elements[0].description": "Kurzbefund" });
}

async function customCount(ownerId: string) {
  const rows = await getDb().selectFrom("custom_templates").where("owner_id", "=", ownerId).select("name").execute();
  return rows.length;
}

/** Templates from before the cap existed: written straight to the table, as an older version left them. */
async function seedTemplates(ownerId: string, count: number) {
  for (let i = 1; i <= count; i++)
    await insertCustomTemplate(getDb(), {
      ownerId,
      templateId: `alt-${i}`,
      language: "de-DE",
      name: `Alte Vorlage ${i}`,
      description: "",
      elements: [{ id: "befund", name: "Befund", description: "Kurzbefund", isProtected: false }],
      prompt: "",
    });
}

describe("the JSON API", () => {
  it("creates 20 per language, then answers 409 with the message; other languages and users go on", async () => {
    expect(MAX_CUSTOM_TEMPLATES).toBe(20);
    const { user, cookie } = await signedInUser({ email: "viele-vorlagen@praxis.example" });
    const created: string[] = [];
    for (let i = 1; i <= MAX_CUSTOM_TEMPLATES; i++) {
      const response = await createByApi(cookie, `Vorlage ${i}`);
      expect(response.status).toBe(201);
      created.push((await response.json()).template_id);
    }
    const refused = await createByApi(cookie, "Vorlage 21");
    expect(refused.status).toBe(409);
    expect(await refused.json()).toEqual({
      detail: "You already have 20 custom templates in this language, the most allowed. Please delete one first.",
    });
    expect(await customCount(user.id)).toBe(20);

    expect((await createByApi(cookie, "Englische Vorlage", "en-GB")).status).toBe(201);
    const colleague = await signedInUser({ email: "kollegin-vorlagen@praxis.example" });
    expect((await createByApi(colleague.cookie, "Vorlage 21")).status).toBe(201);

    expect((await deleteByApi(cookie, created[0])).status).toBe(200);
    expect((await createByApi(cookie, "Vorlage 21")).status).toBe(201);
  }, 60_000);

  it("lets only one of two creations at the same moment take the last place", async () => {
    const { user, cookie } = await signedInUser({ email: "zwei-tabs@praxis.example" });
    await seedTemplates(user.id, MAX_CUSTOM_TEMPLATES - 1);
    const answers = await Promise.all([createByApi(cookie, "Tab eins"), createByApi(cookie, "Tab zwei")]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    expect(await customCount(user.id)).toBe(MAX_CUSTOM_TEMPLATES);
  });
});

describe("the settings screens", () => {
  it("offer no creation at the cap and say why; a crafted post is refused in German, nothing saved", async () => {
    const { user, cookie } = await signedInUser({ email: "am-limit@praxis.example" });
    await seedTemplates(user.id, MAX_CUSTOM_TEMPLATES - 1);
    const settings = () => serve(request("/settings?language=de-DE", { cookie })).then((r) => r.text());
    expect(await settings()).toContain('data-action="new-template"');

    expect((await createByApi(cookie, "Die zwanzigste")).status).toBe(201);
    const message = "Sie haben bereits 20 eigene Vorlagen in dieser Sprache, mehr sind nicht möglich.";
    const page = await settings();
    expect(page).not.toContain('data-action="new-template"');
    expect(page).toContain(message);
    const dialog = await (await serve(request("/settings/new?language=de-DE", { cookie }))).text();
    expect(dialog).toContain(message);
    expect(dialog).not.toContain('id="new-template"');

    // Posted anyway (an old tab, no JavaScript): refused with the form kept and the reason shown.
    const posted = await serve(
      request("/settings/new?language=de-DE", {
        method: "POST",
        cookie,
        headers: { ...SAME_ORIGIN, "Content-Type": "application/x-www-form-urlencoded" },
        body: newTemplateForm("Noch eine").toString(),
      }),
    );
    expect(posted.status).toBe(409);
    const html = await posted.text();
    expect(html).toMatch(new RegExp(`role="alert"[^>]*>${message}`));
    expect(html).toContain('value="Noch eine"');
    expect(await customCount(user.id)).toBe(MAX_CUSTOM_TEMPLATES);
  });

  it("keep every template saved before the cap; creation comes back once the user is below it", async () => {
    const { user, cookie } = await signedInUser({ email: "von-frueher@praxis.example" });
    await seedTemplates(user.id, MAX_CUSTOM_TEMPLATES + 2);
    const loaded = await (await callRoute(settingsLoader, request("/settings?language=de-DE", { cookie }))).json();
    expect(loaded.custom).toHaveLength(22);
    expect(loaded.customLimit).toBe(20);
    const english = (await languageCookie().serialize("en")).split(";")[0];
    const page = await (await serve(request("/settings?language=de-DE", { cookie: `${cookie}; ${english}` }))).text();
    expect(page).toContain("You already have 20 custom templates in this language, the most allowed.");
    expect(page.match(/Alte Vorlage \d+/g)?.length).toBeGreaterThanOrEqual(22);
    const create = () =>
      callRoute(
        newAction,
        request("/settings/new?language=de-DE", {
          method: "POST",
          cookie,
          headers: { ...SAME_ORIGIN, "Content-Type": "application/x-www-form-urlencoded" },
          body: newTemplateForm("Neue Vorlage").toString(),
        }),
      );
    const refused = await create();
    expect(refused.status).toBe(409);
    expect((await refused.json()).result.error[""]).toEqual(["templates:errors.templateLimit"]);
    expect(await customCount(user.id)).toBe(22);

    for (const id of ["alt-1", "alt-2", "alt-3"]) expect((await deleteByApi(cookie, id)).status).toBe(200);
    expect(
      (await (await callRoute(newLoader, request("/settings/new?language=de-DE", { cookie }))).json()).atLimit,
    ).toBe(false);
    expect((await create()).status).toBe(302);
    expect(await customCount(user.id)).toBe(20);
  });
});
