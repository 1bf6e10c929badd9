import { beforeAll, describe, expect, it } from "vitest";
import { languageCookie } from "~/services/web/i18n.server";
import { seedWorld, type World } from "../support/access-matrix-fixture";
import { screenRoutes } from "../support/access-matrix-screens";
import { sessionFor } from "../support/admin-pages";
import { serve } from "../support/remix-document";
import { request, setupTestApp } from "../setup/app";

// ASVS 5.0 7.4.4: logout is easy to reach on every authenticated page. Every screen the access matrix lists
// (generated from the route list, so a new screen is checked too), as its owner sees it, and every page of the admin
// dashboard: the whole document has the sign-out form (a POST to /logout, so no link or prefetch signs out) with its
// button, in German and in English.
const app = setupTestApp({ provider: true });

let world: World;
beforeAll(async () => {
  world = await seedWorld(app.issuer);
}, 120_000);

/** The paths of the screens' page reads (GET probes), as their owner makes them. */
function screenPaths() {
  return Object.values(screenRoutes).flatMap((check) =>
    check.kind === "owned" || check.kind === "own-data-only"
      ? check
          .probes(world.keys)
          .filter((probe) => probe.method === "loader" && probe.label.startsWith("GET /"))
          .map((probe) => probe.label.slice("GET ".length))
      : [],
  );
}

const LOGOUT = /<form method="post" action="\/logout"[^>]*>[\s\S]*?<button[^>]*>(?:<[^>]+>)*\s*(Abmelden|Log out)/;

async function logoutOn(path: string, cookie: string, language: "de" | "en") {
  const chosen = (await languageCookie().serialize(language)).split(";")[0];
  const response = await serve(request(path, { cookie: `${cookie}; ${chosen}` }));
  const html = await response.text();
  return { status: response.status, type: response.headers.get("Content-Type") ?? "", label: LOGOUT.exec(html)?.[1] };
}

describe("the sign-out form", () => {
  it("is on every screen a signed-in clinician can open, in German and English", async () => {
    const paths = screenPaths();
    const pages: string[] = [];
    const missing: string[] = [];
    for (const path of paths)
      for (const [language, label] of [
        ["de", "Abmelden"],
        ["en", "Log out"],
      ] as const) {
        const page = await logoutOn(path, world.anna.cookie, language);
        if (page.status !== 200 || !page.type.startsWith("text/html")) continue;
        pages.push(`${language} ${path}`);
        if (page.label !== label) missing.push(`${language} ${path}`);
      }
    expect(missing).toEqual([]);
    expect(pages.length).toBeGreaterThanOrEqual(40);
  });

  it("is on every page of the admin dashboard", async () => {
    const { cookie } = await sessionFor("admin@skribent.example");
    for (const path of ["/betrieb", "/betrieb/accounts", "/betrieb/audit", "/betrieb/sessions"]) {
      const page = await logoutOn(path, cookie, "de");
      expect(page.status, path).toBe(200);
      expect(page.label, path).toBe("Abmelden");
    }
  });
});
