import { afterEach, describe, expect, it } from "vitest";
import { setConfig } from "~/services/config/config.server";
import { serve } from "../support/remix-document";
import { request, setupTestApp, signedInUser } from "../setup/app";

// Issue 22, "Intended use, written down": the help page says what Skribent is for and not for, and who besides this
// server processes the clinician's data — for the engines this installation actually uses (docs/intended-use.md).
const app = setupTestApp();
afterEach(() => setConfig(app.config));

async function helpPage() {
  const { cookie } = await signedInUser({ email: "hilfe@praxis.example" });
  const response = await serve(request("/help", { cookie }));
  expect(response.status).toBe(200);
  return response.text();
}

describe("the help page's intended use", () => {
  it("says what Skribent is not for, and that on the embedded engines nothing leaves the server", async () => {
    const html = await helpPage();
    expect(html).toContain('id="intendedUse"');
    expect(html).toContain("Keine Diagnosen");
    expect(html).toContain("Keine Triage");
    expect(html).toMatch(/data-processors[\s\S]*Niemand außer diesem Server/);
  });

  it("names the vendors of the engines configured instead", async () => {
    const { speech, llm } = app.config;
    setConfig({
      ...app.config,
      speech: { ...speech, engine: "speechmatics" },
      llm: { ...llm, engine: "openai" },
    });
    const html = await helpPage();
    expect(html).toContain("Speechmatics Ltd erkennt die Sprache");
    expect(html).toContain("Der eingestellte Sprachmodell-Dienst");
    expect(html).not.toContain("Niemand außer diesem Server");
  });
});
