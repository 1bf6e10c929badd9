import { beforeAll, describe, expect, it } from "vitest";
import { getStorage, setStorage } from "~/services/storage/storage.server";
import { sessionFor } from "../support/admin-pages";
import { setupChatModel } from "../support/chat-fixtures";
import { nonceOf } from "../support/injection-payloads";
import { screens, type Page } from "../support/injection-screens";
import { browserFor, seedHostileWorld, type Browser, type HostileWorld } from "../support/injection-world";
import { expectConsoleError } from "../setup/console";
import { setupTestApp } from "../setup/app";

// Issue "hardening — injection": every HTML answer of the app — each screen, the sign-in pages, the admin pages,
// the 404/403/500 error pages — carries an enforced Content-Security-Policy whose scripts run only with a nonce
// that is new for every response, and which forbids plugins, <base> rewrites and framing. A payload that got into
// a page as markup would still not run.
setupTestApp();
const llm = setupChatModel();

let world: HostileWorld;
let operator: Browser;
let clinician: Browser;
let anonymous: Browser;
beforeAll(async () => {
  world = await seedHostileWorld(llm);
  operator = await browserFor((await sessionFor("admin@skribent.example")).cookie);
  clinician = await browserFor((await sessionFor("aerztin@praxis.example")).cookie);
  anonymous = await browserFor("");
}, 120_000);

/** What is missing from a document's policy (an empty list for a sound one). */
function cspProblems(response: Response): string[] {
  const problems: string[] = [];
  if (response.headers.has("Content-Security-Policy-Report-Only")) problems.push("a Report-Only policy");
  const csp = response.headers.get("Content-Security-Policy");
  if (!csp) return [...problems, "no Content-Security-Policy"];
  const directives = new Map(
    csp.split(";").map((part) => {
      const [name, ...values] = part.trim().split(/\s+/);
      return [name.toLowerCase(), values] as const;
    }),
  );
  const scripts = directives.get("script-src") ?? directives.get("default-src") ?? [];
  if (!scripts.some((source) => /^'nonce-[A-Za-z0-9+/=_-]{22,}'$/.test(source))) problems.push("no script nonce");
  for (const loose of ["'unsafe-inline'", "'unsafe-eval'", "*", "http:", "https:", "data:"])
    if (scripts.includes(loose)) problems.push(`script-src allows ${loose}`);
  if (directives.get("object-src")?.join(" ") !== "'none'") problems.push("object-src is not 'none'");
  if (!["'none'", "'self'"].includes(directives.get("base-uri")?.join(" ") ?? "")) problems.push("no base-uri");
  if (directives.get("frame-ancestors")?.join(" ") !== "'none'") problems.push("frame-ancestors is not 'none'");
  return problems;
}

type Seen = { label: string; response: Response };

async function htmlPage(label: string, answer: Promise<Response>): Promise<Seen> {
  const response = await answer;
  expect(response.headers.get("Content-Type"), label).toBe("text/html; charset=utf-8");
  return { label, response };
}

function screenPages(): Array<{ label: string; page: Page }> {
  return Object.entries(screens).flatMap(([name, entry]) =>
    "pages" in entry ? entry.pages(world.keys).map((page) => ({ label: `${name} ${page.path}`, page })) : [],
  );
}

const browserOf = (page: Page) =>
  page.who === "operator" ? operator : page.who === "anonymous" ? anonymous : world.browser;

/** Every screen, then the error and refusal pages; each requested twice. */
async function everyPageTwice(): Promise<Seen[][]> {
  const pages: Array<[string, () => Promise<Response>]> = [
    ...screenPages().map(({ label, page }): [string, () => Promise<Response>] => [
      label,
      () => browserOf(page).get(page.path),
    ]),
    ["404 signed in", () => world.browser.get("/keine-solche-seite")],
    ["404 signed out", () => anonymous.get("/keine-solche-seite")],
    ["404 from a loader", () => world.browser.get("/?play=audio%2Fnicht-da.wav")],
    ["404 of a kept form", () => world.browser.get("/resume/nicht-da")],
    ["admin page for a clinician", () => clinician.get("/betrieb")],
    ["login after sign-out", () => anonymous.get("/login?signedOut=1")],
  ];
  const seen: Seen[][] = [];
  for (const [label, load] of pages) seen.push([await htmlPage(label, load()), await htmlPage(label, load())]);
  return seen;
}

describe("the policy check", () => {
  it("finds a policy that is missing, only reported, or loose", () => {
    const page = (headers: Record<string, string>) => new Response("<!DOCTYPE html>", { headers });
    const sound =
      "default-src 'self'; script-src 'nonce-AAAAAAAAAAAAAAAAAAAAAA==' 'strict-dynamic'; object-src 'none'; " +
      "base-uri 'none'; frame-ancestors 'none'";
    expect(cspProblems(page({ "Content-Security-Policy": sound }))).toEqual([]);
    expect(cspProblems(page({}))).not.toEqual([]);
    expect(cspProblems(page({ "Content-Security-Policy-Report-Only": sound }))).not.toEqual([]);
    for (const loose of [
      sound.replace("'strict-dynamic'", "'unsafe-inline'"),
      sound.replace(/'nonce-[^']+'/, "'self'"),
      sound.replace("object-src 'none'; ", ""),
      sound.replace("base-uri 'none'; ", ""),
      sound.replace("frame-ancestors 'none'", "frame-ancestors *"),
    ])
      expect(cspProblems(page({ "Content-Security-Policy": loose })), loose).not.toEqual([]);
  });
});

describe("every HTML response", () => {
  it("has an enforced policy with a script nonce, no plugins, no <base>, no framing", async () => {
    const problems: string[] = [];
    for (const pair of await everyPageTwice())
      for (const { label, response } of pair) problems.push(...cspProblems(response).map((p) => `${label}: ${p}`));
    expect(problems).toEqual([]);
  });

  it("gets a new nonce every time, and every script of the page carries it", async () => {
    const problems: string[] = [];
    const nonces = new Set<string>();
    let count = 0;
    for (const [first, second] of await everyPageTwice()) {
      for (const { label, response } of [first, second]) {
        const nonce = nonceOf(response.headers.get("Content-Security-Policy"));
        nonces.add(nonce ?? "");
        count++;
        const scripts = (await response.text()).match(/<script\b[^>]*>/gi) ?? [];
        const stray = scripts.filter((tag) => !tag.includes(` nonce="${nonce}"`));
        if (stray.length > 0) problems.push(`${label}: ${stray.join(" ")}`);
      }
    }
    expect(problems).toEqual([]);
    expect(nonces.size).toBe(count);
  });

  it("has the same policy on the 500 page of a loader that failed", async () => {
    const logged = expectConsoleError();
    const real = getStorage();
    const failing = new Proxy(real, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        return typeof value === "function" ? () => Promise.reject(new Error("storage is down")) : value;
      },
    });
    setStorage(failing);
    try {
      const { response } = await htmlPage("500", world.browser.get(`/transcriptions/${world.keys.transcriptParam}`));
      expect(response.status).toBe(500);
      expect(cspProblems(response)).toEqual([]);
      // The page says something went wrong, and nothing of the failure itself.
      expect(await response.text()).not.toContain("storage is down");
    } finally {
      setStorage(real);
    }
    expect(logged).toHaveBeenCalled();
  });

  it("and a screen's data request (?_data) gets the locked-down policy of a non-document", async () => {
    const response = await world.browser.get("/chat?_data=routes%2F_app.chat");
    expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(response.headers.get("Content-Security-Policy")).toBe("default-src 'none'; frame-ancestors 'none'");
  });
});
