import { describe, expect, it, vi } from "vitest";
import { loader as repositoryLoader } from "~/routes/_app.settings.repository";
import { action as settingsAction, loader as settingsLoader } from "~/routes/_app.settings/route";
import { readToast } from "~/services/web/toast.server";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// SPEC §8 "Templates and settings": when the storage behind a screen fails,
// the user sees the named message (and nothing already saved is touched).
vi.mock("~/services/templates/templates.server", async (importOriginal) => {
  const original = await importOriginal<typeof import("~/services/templates/templates.server")>();
  const down = () => Promise.reject(new Error("database unavailable"));
  return {
    ...original,
    listUserTemplates: vi.fn(down),
    getRepository: vi.fn(down),
    saveUserStructure: vi.fn(down),
    resetUserStructure: vi.fn(down),
  };
});

setupTestApp();

async function toastOf(response: Response) {
  const cookie = response.headers
    .getSetCookie()
    .find((c) => c.startsWith("skribent_toast="))!
    .split(";")[0];
  return (await readToast(request("/", { cookie }))).toast;
}

const post = (fields: Record<string, string>, cookie: string) =>
  request("/settings", {
    cookie,
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin" },
    body: new URLSearchParams({ language: "de-DE", ...fields }).toString(),
  });

describe("failures on the Settings screens", () => {
  it("says 'Failed to load templates' with a retry, and the rest of the page works", async () => {
    const { cookie } = await signedInUser({ email: "fail@praxis.example" });
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const page = await (await callRoute(settingsLoader, request("/settings", { cookie }))).json();
    expect(page.loadError).toBe("templates:errors.loadTemplates");
    expect(page.ragAgreed).toBe(false);
    const repo = await (await callRoute(repositoryLoader, request("/settings/repository", { cookie }))).json();
    expect(repo.loadError).toBe("templates:errors.loadRepository");
    warn.mockRestore();
  });

  it("turns a failed save or reset into its message", async () => {
    const { cookie } = await signedInUser({ email: "fail2@praxis.example" });
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const save = await callRoute(
      settingsAction,
      post(
        { intent: "structure", templateId: "soap", "elements[0].name": "Plan", "elements[0].description": "x" },
        cookie,
      ),
    );
    expect(save.status).toBe(302);
    expect(await toastOf(save)).toMatchObject({ type: "error", key: "templates:errors.saveStructure" });
    const reset = await callRoute(settingsAction, post({ intent: "reset", templateId: "soap" }, cookie));
    expect(await toastOf(reset)).toMatchObject({ type: "error", key: "templates:errors.resetStructure" });
    warn.mockRestore();
  });
});
