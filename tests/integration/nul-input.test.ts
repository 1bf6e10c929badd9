import { describe, expect, it } from "vitest";
import { stripNul } from "~/models/db.server";
import { serve } from "../support/remix-document";
import { APP_URL, request, setupTestApp, signedInUser } from "../setup/app";

// A NUL pasted into a field (PostgreSQL text and jsonb cannot hold one) used to fail the statement and answer
// 500 on template, prompt and chat forms. Now every statement's parameters lose their NULs: the rest is saved,
// and a lookup with one finds nothing.
setupTestApp();

const post = (path: string, cookie: string, body: unknown) =>
  serve(
    request(path, {
      cookie,
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: APP_URL, "Sec-Fetch-Site": "same-origin" },
      body: JSON.stringify(body),
    }),
  );

describe("a NUL in what a user sends", () => {
  it("is dropped from text and from JSON values, and an escaped backslash stays", () => {
    expect(stripNul("Kar\u0000dio")).toBe("Kardio");
    expect(stripNul(JSON.stringify({ name: "Be\u0000fund" }))).toBe('{"name":"Befund"}');
    expect(stripNul(JSON.stringify(["a\\u0000"]))).toBe(JSON.stringify(["a\\u0000"])); // the text \u0000, not a NUL
    expect(stripNul("plain \\u0000 text")).toBe("plain \\u0000 text"); // not JSON: typed as it is
    expect(stripNul(42)).toBe(42);
  });

  it("saves a prompt and a custom template without it, and finds no letter by a key with one", async () => {
    const { user, cookie } = await signedInUser({ email: "nul@praxis.example" });
    const prompt = await post("/api/prompts", cookie, { title: "Kur\u0000z", prompt_text: "Bitte\u0000 kürzer." });
    expect(prompt.status).toBe(201);
    const prompts = await (await serve(request("/api/prompts", { cookie }))).json();
    expect(prompts.prompts.map((p: { title: string; prompt_text: string }) => [p.title, p.prompt_text])).toEqual([
      ["Kurz", "Bitte kürzer."],
    ]);

    const template = await post("/api/structure/custom-template", cookie, {
      template_id: "nul-vorlage",
      custom_name: "Nullbrief",
      language_code: "de-DE",
      structure_elements: [{ name: "Befund", description: "kurz\u0000 und knapp" }],
      prompt: "Knapp.\u0000",
    });
    expect(template.status, await template.clone().text()).toBeLessThan(300);
    const templates = await (await serve(request("/api/structure/templates?language=de-DE", { cookie }))).text();
    expect(templates).toContain("kurz und knapp");
    expect(templates).not.toContain("\\u0000");

    const missing = await post("/api/delete-arztbrief", cookie, {
      key: `arztbriefe/${user.id}/20260101-000000-00000000-0000-4000-8000-000000000000.json\u0000`,
    });
    expect(missing.status).toBe(404);
  });
});
