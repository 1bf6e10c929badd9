import { describe, expect, it } from "vitest";
import { action as newAction, loader as newLoader } from "~/routes/_app.settings.new";
import { action as removeAction, loader as removeLoader } from "~/routes/_app.settings.remove.$templateId";
import { loader as repositoryLoader } from "~/routes/_app.settings.repository";
import { action as settingsAction, loader as settingsLoader } from "~/routes/_app.settings/route";
import { loader as apiRepository } from "~/routes/api.structure.repository";
import { getFixedTFor } from "~/services/web/i18n.server";
import { setConfig } from "~/services/config/config.server";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// The Settings screens' server path: crafted posts that skip every browser
// check get the SPEC §5 messages (keys translated in both languages).
const app = setupTestApp();

function form(fields: Record<string, string>) {
  return {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin" },
    body: new URLSearchParams(fields).toString(),
  };
}

function structureForm(elements: Array<{ id?: string; name: string; description: string }>, prompt = "") {
  const fields: Record<string, string> = { intent: "structure", templateId: "soap", language: "de-DE", prompt };
  elements.forEach((e, i) => {
    if (e.id) fields[`elements[${i}].id`] = e.id;
    fields[`elements[${i}].name`] = e.name;
    fields[`elements[${i}].description`] = e.description;
  });
  return fields;
}

const soap = [
  { id: "subjektiv", name: "Subjektiv", description: "Beschwerden" },
  { id: "objektiv", name: "Objektiv", description: "Befunde" },
  { id: "beurteilung", name: "Beurteilung", description: "Einschätzung" },
  { id: "plan", name: "Plan", description: "Vorgehen" },
];

async function errorsOf(response: Response) {
  const body = await response.json();
  return JSON.stringify(body.result.error);
}

const rules: Array<[string, Array<{ id?: string; name: string; description: string }>, string, string, string]> = [
  [
    "characters",
    [...soap, { name: "Labor 2", description: "x" }],
    "templates:errors.elementNameChars",
    "Only alphabetic characters, hyphens, and spaces are allowed",
    "Nur Buchstaben, Bindestriche und Leerzeichen sind erlaubt",
  ],
  [
    "empty name",
    [...soap, { name: " ", description: "x" }],
    "templates:errors.elementNameEmpty",
    "Element name cannot be empty",
    "Der Elementname darf nicht leer sein",
  ],
  [
    "duplicate",
    [...soap, { name: "PLAN", description: "x" }],
    "templates:errors.elementNameDuplicate",
    "An element with this name already exists",
    "Ein Element mit diesem Namen existiert bereits",
  ],
  [
    "description required",
    [...soap, { name: "Labor", description: "" }],
    "templates:errors.descriptionRequired",
    "Description is required",
    "Eine Beschreibung ist erforderlich",
  ],
  [
    "description length",
    [...soap, { name: "Labor", description: "d".repeat(101) }],
    "templates:errors.descriptionTooLong",
    "Description cannot exceed 100 characters",
    "Die Beschreibung darf höchstens 100 Zeichen lang sein",
  ],
  [
    "too many",
    [...soap, ..."abcdefg".split("").map((c) => ({ name: `Teil ${c}`, description: "x" }))],
    "templates:errors.maxElements",
    "Maximum 10 elements allowed",
    "Maximal 10 Elemente erlaubt",
  ],
  [
    "protected",
    soap.slice(1),
    "templates:errors.protectedRemoved",
    "Default elements are required and cannot be removed",
    "Standardelemente sind erforderlich und können nicht entfernt werden",
  ],
];

describe("Settings: structure editor on the server path", () => {
  it.each(rules)("%s", async (_label, elements, key, en, de) => {
    const { cookie } = await signedInUser({ email: "editor@praxis.example" });
    const response = await callRoute(
      settingsAction,
      request("/settings", { cookie, ...form(structureForm(elements)) }),
    );
    expect(response.status).toBe(400);
    expect(await errorsOf(response)).toContain(key);
    expect((await getFixedTFor("en", ["templates"]))(key)).toBe(en);
    expect((await getFixedTFor("de", ["templates"]))(key)).toBe(de);
  });

  it("refuses a prompt over 1000 characters", async () => {
    const { cookie } = await signedInUser({ email: "editor@praxis.example" });
    const response = await callRoute(
      settingsAction,
      request("/settings", { cookie, ...form(structureForm(soap, "p".repeat(1001))) }),
    );
    expect(await errorsOf(response)).toContain("templates:errors.promptTooLong");
  });

  it("adds an element through the server (no JavaScript) and keeps the draft unsaved", async () => {
    const { cookie } = await signedInUser({ email: "editor@praxis.example" });
    const fields = structureForm(soap);
    fields.__intent__ = JSON.stringify({
      type: "insert",
      payload: { name: "elements", defaultValue: { name: "", description: "" } },
    });
    const response = await callRoute(settingsAction, request("/settings", { cookie, ...form(fields) }));
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.templateId).toBe("soap");
    expect(body.result.initialValue.elements).toHaveLength(5);
    const page = await (await callRoute(settingsLoader, request("/settings?language=de-DE", { cookie }))).json();
    expect(page.system.find((t: { id: string }) => t.id === "soap").elements).toHaveLength(4);
  });

  it("saves for this user only and an unknown intent is a 400", async () => {
    const anna = await signedInUser({ email: "anna@praxis.example" });
    const ben = await signedInUser({ email: "ben@praxis.example" });
    const saved = await callRoute(
      settingsAction,
      request("/settings", {
        cookie: anna.cookie,
        ...form(structureForm([...soap, { name: "Labor", description: "Laborwerte" }])),
      }),
    );
    expect(saved.status).toBe(302);
    const annas = await (
      await callRoute(settingsLoader, request("/settings?language=de-DE", { cookie: anna.cookie }))
    ).json();
    const bens = await (
      await callRoute(settingsLoader, request("/settings?language=de-DE", { cookie: ben.cookie }))
    ).json();
    expect(annas.system.find((t: { id: string }) => t.id === "soap").elements).toHaveLength(5);
    expect(bens.system.find((t: { id: string }) => t.id === "soap").elements).toHaveLength(4);
    const unknown = await callRoute(
      settingsAction,
      request("/settings", { cookie: anna.cookie, ...form({ intent: "nope" }) }),
    );
    expect(unknown.status).toBe(400);
  });
});

describe("custom templates on the server path", () => {
  it("validates the name and isolates owners", async () => {
    const owner = await signedInUser({ email: "owner@praxis.example" });
    const other = await signedInUser({ email: "other@praxis.example" });
    const base = { "elements[0].name": "Befund", "elements[0].description": "Kurzbefund" };
    const missing = await callRoute(
      newAction,
      request("/settings/new?language=de-DE", { cookie: owner.cookie, ...form({ ...base, name: "" }) }),
    );
    expect(await errorsOf(missing)).toContain("templates:errors.templateNameRequired");
    const long = await callRoute(
      newAction,
      request("/settings/new?language=de-DE", { cookie: owner.cookie, ...form({ ...base, name: "n".repeat(101) }) }),
    );
    expect(await errorsOf(long)).toContain("templates:errors.nameTooLong");
    const created = await callRoute(
      newAction,
      request("/settings/new?language=de-DE", { cookie: owner.cookie, ...form({ ...base, name: "Kurzbefund" }) }),
    );
    expect(created.status).toBe(302);
    const id = new URL(created.headers.get("Location")!, "http://x").searchParams.get("open")!;
    const dup = await callRoute(
      newAction,
      request("/settings/new?language=de-DE", { cookie: owner.cookie, ...form({ ...base, name: "KURZBEFUND" }) }),
    );
    expect(await errorsOf(dup)).toContain("templates:errors.templateNameDuplicate");

    // Another user can neither see nor delete it.
    const peek = await callRoute(
      removeLoader,
      request(`/settings/remove/${id}?language=de-DE`, { cookie: other.cookie }),
      { templateId: id },
    );
    expect(peek.status).toBe(404);
    const steal = await callRoute(
      removeAction,
      request(`/settings/remove/${id}?language=de-DE`, { cookie: other.cookie, ...form({}) }),
      { templateId: id },
    );
    expect(steal.status).toBe(404);
    const mine = await callRoute(
      removeAction,
      request(`/settings/remove/${id}?language=de-DE`, { cookie: owner.cookie, ...form({}) }),
      { templateId: id },
    );
    expect(mine.status).toBe(302);
  });
});

describe("disable_user_templates=1", () => {
  it("refuses the repository and creation on the server", async () => {
    const { cookie } = await signedInUser({ email: "flag@praxis.example" });
    setConfig({ ...app.config, flags: { ...app.config.flags, disableUserTemplates: true } });
    try {
      expect((await callRoute(repositoryLoader, request("/settings/repository", { cookie }))).status).toBe(404);
      expect((await callRoute(newLoader, request("/settings/new", { cookie }))).status).toBe(404);
      const post = await callRoute(
        newAction,
        request("/settings/new", {
          cookie,
          ...form({ name: "X", "elements[0].name": "A", "elements[0].description": "b" }),
        }),
      );
      expect(post.status).toBe(404);
      const page = await (await callRoute(settingsLoader, request("/settings", { cookie }))).json();
      expect(page.userTemplatesEnabled).toBe(false);
      const api = await callRoute(apiRepository, request("/api/structure/repository?language=de", { cookie }));
      expect(api.status).toBe(403);
      expect((await api.json()).detail).toBe(
        "Custom templates and the template repository are switched off for this organisation",
      );
    } finally {
      setConfig(app.config);
    }
  });
});
