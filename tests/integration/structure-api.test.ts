import { describe, expect, it } from "vitest";
import { loader as repositoryLoader } from "~/routes/api.structure.repository";
import { action as customAction } from "~/routes/api.structure.custom-template";
import { loader as templatesLoader } from "~/routes/api.structure.templates";
import { action as userAction, loader as userLoader } from "~/routes/api.structure.user";
import { action as addAccess } from "~/routes/api.structure.user_.add-access";
import { action as ragAction, loader as ragLoader } from "~/routes/api.structure.user_.rag-permission";
import { action as removeAccess } from "~/routes/api.structure.user_.remove-access";
import { action as resetAction } from "~/routes/api.structure.user_.reset";
import { apiClientFor } from "../support/api-client";
import { callRoute, setupTestApp } from "../setup/app";

// One contract test per SPEC §7 /api/structure/* row: a real bearer token, the
// exact answer fields, and the user isolation the issue asks for.
const app = setupTestApp({ provider: true });

function as(accountId: string) {
  return apiClientFor(app.issuer, accountId);
}

const templateFields = [
  "description",
  "id",
  "isCustomized",
  "isSystem",
  "language_code",
  "name",
  "organization",
  "prompt",
  "structure_elements",
  "template_id",
  "template_name",
];

describe("/api/structure/*", () => {
  it("GET templates needs a language and lists the user's collection without base", async () => {
    const anna = await as("anna-berger");
    const missing = await callRoute(templatesLoader, anna("/api/structure/templates"));
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ detail: "Language parameter is required" });

    const response = await callRoute(templatesLoader, anna("/api/structure/templates?language=de"));
    expect(response.status).toBe(200);
    const { templates } = await response.json();
    expect(Object.keys(templates[0]).sort()).toEqual(templateFields);
    expect(Object.keys(templates[0].structure_elements[0]).sort()).toEqual([
      "description",
      "id",
      "isProtected",
      "name",
    ]);
    const ids = templates.map((t: { id: string }) => t.id);
    expect(ids[0]).toBe("default");
    expect(ids).not.toContain("base");
    expect(templates.every((t: { language_code: string }) => t.language_code === "de-DE")).toBe(true);
  });

  it("GET repository gives element names only, grouped data and the added state", async () => {
    const anna = await as("anna-berger");
    const { templates } = await (
      await callRoute(repositoryLoader, anna("/api/structure/repository?language=en"))
    ).json();
    expect(templates.length).toBeGreaterThanOrEqual(12);
    expect(Object.keys(templates[0]).sort()).toEqual(
      [
        "added",
        "description",
        "id",
        "isSystem",
        "language_code",
        "name",
        "organization",
        "structure_elements",
        "template_id",
        "template_name",
      ].sort(),
    );
    expect(Object.keys(templates[0].structure_elements[0])).toEqual(["name"]);
    expect(templates.find((t: { id: string }) => t.id === "default").added).toBe(true);
    expect(templates.some((t: { id: string }) => t.id === "base")).toBe(false);
  });

  it("POST add-access / remove-access change only this user's collection", async () => {
    const anna = await as("anna-berger");
    const jonas = await as("jonas-keller");
    const repo = await (await callRoute(repositoryLoader, anna("/api/structure/repository?language=de"))).json();
    const notAdded = repo.templates.find((t: { added: boolean }) => !t.added).id as string;

    const added = await callRoute(
      addAccess,
      anna("/api/structure/user/add-access", {
        method: "POST",
        json: { template_id: notAdded, language_code: "de-DE" },
      }),
    );
    expect(await added.json()).toEqual({ success: true });
    const mine = (
      await (await callRoute(templatesLoader, anna("/api/structure/templates?language=de"))).json()
    ).templates.map((t: { id: string }) => t.id);
    const his = (
      await (await callRoute(templatesLoader, jonas("/api/structure/templates?language=de"))).json()
    ).templates.map((t: { id: string }) => t.id);
    expect(mine).toContain(notAdded);
    expect(his).not.toContain(notAdded);

    const removed = await callRoute(
      removeAccess,
      anna("/api/structure/user/remove-access", {
        method: "POST",
        json: { template_id: "default", language_code: "de-DE" },
      }),
    );
    expect(removed.status).toBe(200);
    const after = (
      await (await callRoute(templatesLoader, anna("/api/structure/templates?language=de"))).json()
    ).templates.map((t: { id: string }) => t.id);
    expect(after).not.toContain("default");
    // The other language is a separate collection; the repository offers it again.
    const repoAfter = await (await callRoute(repositoryLoader, anna("/api/structure/repository?language=de"))).json();
    expect(repoAfter.templates.find((t: { id: string }) => t.id === "default").added).toBe(false);

    const unknown = await callRoute(
      addAccess,
      anna("/api/structure/user/add-access", { method: "POST", json: { template_id: "base", language_code: "de-DE" } }),
    );
    expect(unknown.status).toBe(404);
  });

  it("GET/PUT user structure, per user, with the SPEC §5 rules on the server", async () => {
    const anna = await as("anna-berger");
    const jonas = await as("jonas-keller");
    const original = await (
      await callRoute(userLoader, anna("/api/structure/user?template=entlassbrief&language=de"))
    ).json();
    expect(Object.keys(original).sort()).toEqual(["elements", "prompt"]);

    const put = (json: unknown) =>
      callRoute(userAction, anna("/api/structure/user?template=entlassbrief&language=de", { method: "PUT", json }));
    const elements = original.elements.map((e: { id: string; name: string; description: string }) => ({
      id: e.id,
      name: e.name,
      description: e.description,
    }));

    const cases: Array<[unknown, string]> = [
      [
        { structure: [...elements.slice(0, -1), { name: "Labor 2", description: "x" }], prompt: "" },
        "Only alphabetic characters, hyphens, and spaces are allowed",
      ],
      [{ structure: [...elements, { name: "  ", description: "x" }], prompt: "" }, "Element name cannot be empty"],
      [
        { structure: [...elements, { name: elements[0].name.toUpperCase(), description: "x" }], prompt: "" },
        "An element with this name already exists",
      ],
      [{ structure: [...elements, { name: "Neu", description: "" }], prompt: "" }, "Description is required"],
      [
        { structure: [...elements, { name: "Neu", description: "d".repeat(101) }], prompt: "" },
        "Description cannot exceed 100 characters",
      ],
      [{ structure: elements, prompt: "p".repeat(1001) }, "Prompt cannot exceed 1000 characters"],
      [
        {
          structure: Array.from({ length: 11 }, (_, i) => ({ name: `Teil ${"abcdefghijk"[i]}`, description: "x" })),
          prompt: "",
        },
        "Maximum 10 elements allowed",
      ],
      [
        { structure: elements.filter((e: { id: string }) => e.id !== "diagnosen"), prompt: "" },
        "Default elements are required and cannot be removed",
      ],

      // Values of the wrong type get the API's own messages, never Zod's English defaults.
      [{ structure: { 0: elements[0] }, prompt: "" }, "Elements must be given as a list"],
      [{ structure: [...elements, "Neu"], prompt: "" }, "Each element needs a name and a description"],
      [{ structure: [...elements, { name: 7, description: "x" }], prompt: "" }, "Element name cannot be empty"],
      [{ structure: elements, prompt: 42 }, "A text is expected here"],
    ];
    for (const [body, detail] of cases) {
      const response = await put(body);
      expect(response.status, detail).toBe(400);
      expect(await response.json()).toEqual({ detail });
    }

    const renamed = [...elements, { name: "Sozialanamnese", description: "Wohnsituation, Versorgung" }];
    const saved = await put({ structure: renamed, prompt: "Kurz und knapp." });
    expect(saved.status).toBe(200);
    const mine = await (
      await callRoute(userLoader, anna("/api/structure/user?template=entlassbrief&language=de"))
    ).json();
    expect(mine.prompt).toBe("Kurz und knapp.");
    expect(mine.elements.at(-1)).toEqual({
      id: "sozialanamnese",
      name: "Sozialanamnese",
      description: "Wohnsituation, Versorgung",
      isProtected: false,
    });
    // A protected flag from the client is ignored.
    expect(mine.elements.find((e: { id: string }) => e.id === "diagnosen").isProtected).toBe(true);

    const his = await (
      await callRoute(userLoader, jonas("/api/structure/user?template=entlassbrief&language=de"))
    ).json();
    expect(his).toEqual(original);

    const reset = await callRoute(
      resetAction,
      anna("/api/structure/user/reset?template=entlassbrief&language=de", { method: "POST" }),
    );
    expect(await reset.json()).toEqual({ success: true });
    const back = await (
      await callRoute(userLoader, anna("/api/structure/user?template=entlassbrief&language=de"))
    ).json();
    expect(back).toEqual(original);
  });

  it("POST/DELETE custom-template: owner only, unique names, another user's is a 404", async () => {
    const anna = await as("anna-berger");
    const jonas = await as("jonas-keller");
    const body = {
      template_id: "mein-kurzbrief",
      custom_name: "Mein Kurzbrief",
      language_code: "de-DE",
      structure_elements: [
        { name: "Befund", description: "Kurzbefund" },
        { name: "Procedere", description: "Weiteres Vorgehen" },
      ],
      prompt: "Sehr knapp.",
    };
    const created = await callRoute(
      customAction,
      anna("/api/structure/custom-template", { method: "POST", json: body }),
    );
    expect(created.status).toBe(201);
    expect(await created.json()).toEqual({ success: true, template_id: "mein-kurzbrief" });

    const duplicate = await callRoute(
      customAction,
      anna("/api/structure/custom-template", {
        method: "POST",
        json: { ...body, template_id: "x", custom_name: "mein KURZBRIEF" },
      }),
    );
    expect(await duplicate.json()).toEqual({ detail: "A template with this name already exists" });
    const nameless = await callRoute(
      customAction,
      anna("/api/structure/custom-template", { method: "POST", json: { ...body, custom_name: " " } }),
    );
    expect(await nameless.json()).toEqual({ detail: "Template name is required" });
    const long = await callRoute(
      customAction,
      anna("/api/structure/custom-template", { method: "POST", json: { ...body, custom_name: "n".repeat(101) } }),
    );
    expect(await long.json()).toEqual({ detail: "Name is too long" });
    const notAList = await callRoute(
      customAction,
      anna("/api/structure/custom-template", {
        method: "POST",
        json: { ...body, structure_elements: { name: "Befund", description: "Kurzbefund" } },
      }),
    );
    expect(notAList.status).toBe(400);
    expect(await notAList.json()).toEqual({ detail: "Elements must be given as a list" });

    const listed = (await (await callRoute(templatesLoader, anna("/api/structure/templates?language=de"))).json())
      .templates;
    expect(listed.find((t: { id: string }) => t.id === "mein-kurzbrief")).toMatchObject({
      isSystem: false,
      name: "Mein Kurzbrief",
    });
    const hisStructure = await callRoute(userLoader, jonas("/api/structure/user?template=mein-kurzbrief&language=de"));
    expect(hisStructure.status).toBe(404);
    const hisDelete = await callRoute(
      customAction,
      jonas("/api/structure/custom-template?template_id=mein-kurzbrief&language_code=de-DE", { method: "DELETE" }),
    );
    expect(hisDelete.status).toBe(404);

    const deleted = await callRoute(
      customAction,
      anna("/api/structure/custom-template?template_id=mein-kurzbrief&language_code=de-DE", { method: "DELETE" }),
    );
    expect(await deleted.json()).toEqual({ success: true });
    const gone = await callRoute(userLoader, anna("/api/structure/user?template=mein-kurzbrief&language=de"));
    expect(gone.status).toBe(404);
  });

  it("GET/POST rag-permission reads and writes the consent", async () => {
    const anna = await as("anna-berger");
    expect(await (await callRoute(ragLoader, anna("/api/structure/user/rag-permission"))).json()).toEqual({
      rag_agreed: false,
    });
    const set = await callRoute(
      ragAction,
      anna("/api/structure/user/rag-permission", { method: "POST", json: { rag_agreed: true } }),
    );
    expect(await set.json()).toEqual({ success: true, rag_agreed: true });
    expect(await (await callRoute(ragLoader, anna("/api/structure/user/rag-permission"))).json()).toEqual({
      rag_agreed: true,
    });
    const bad = await callRoute(
      ragAction,
      anna("/api/structure/user/rag-permission", { method: "POST", json: { rag_agreed: "yes" } }),
    );
    expect(bad.status).toBe(400);
  });
});
