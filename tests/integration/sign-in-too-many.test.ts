import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { getDb } from "~/models/db.server";
import { serve } from "../support/remix-document";
import { request, setupTestApp } from "../setup/app";

// Issue 22 (outside security check): too many sign-in starts answered a bare monospace text page. A browser gets
// the app's own sign-in page — server-rendered, in the user's language, with the wait and a way back to the sign-in
// start; any other client gets the JSON API's {detail}. Both carry Retry-After.
setupTestApp({ provider: true, env: { RATE_LIMIT_SIGNIN_PER_MINUTE: "2" } });

const BROWSER = { Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };
const ENGLISH = { Cookie: "skribent_lng=ImVuIg%3D%3D" };

beforeAll(() => {
  // The limit counts per minute: all requests of a test fall into one window, wherever the clock stands.
  vi.useFakeTimers({ toFake: ["Date"], now: Math.ceil(Date.now() / 60_000) * 60_000, shouldAdvanceTime: true });
});
beforeEach(() => getDb().deleteFrom("rate_limits").execute());
afterAll(() => vi.useRealTimers());

/** Uses up this minute's sign-in starts; returns the answer to the one past the limit. */
async function startPastTheLimit(path: string, headers: Record<string, string>) {
  for (let i = 0; i < 2; i++) expect((await serve(request(path, { headers }))).status).toBe(302);
  return serve(request(path, { headers }));
}

/** Follows the browser's way from the refused start to the page it shows. */
async function refusedPage(headers: Record<string, string>) {
  const refused = await startPastTheLimit("/auth/start?redirectTo=%2Farztbriefe", headers);
  expect(refused.status).toBe(303);
  const seconds = Number(refused.headers.get("Retry-After"));
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(60);
  const location = refused.headers.get("Location")!;
  expect(location).toBe(`/login?tooMany=${seconds}&redirectTo=%2Farztbriefe`);
  const page = await serve(request(location, { headers }));
  return { page, html: await page.text(), seconds };
}

describe("too many sign-in starts", () => {
  it("show a browser the app's sign-in page in German: the wait, a link back to the start, no script needed", async () => {
    const { page, html, seconds } = await refusedPage(BROWSER);
    expect(page.status).toBe(429);
    expect(page.headers.get("Retry-After")).toBe(String(seconds));
    expect(page.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
    expect(html).toMatch(/^<!DOCTYPE html><html lang="de"/);
    expect(html).toContain(
      `<p role="alert" data-login-reason="tooMany">Zu viele Anmeldeversuche. Bitte warten Sie ${seconds} Sekunden und versuchen Sie es dann erneut.</p>`,
    );
    expect(html).toMatch(/<a href="\/auth\/start\?redirectTo=%2Farztbriefe"[^>]*>Erneut versuchen<\/a>/);
    // The user decides when to try again: no refresh that would run into the limit once more.
    expect(html).not.toContain('http-equiv="refresh"');
    expect(html).not.toContain("monospace");
  });

  it("show it in English to a user who chose English", async () => {
    const { page, html, seconds } = await refusedPage({ ...BROWSER, ...ENGLISH });
    expect(page.status).toBe(429);
    expect(html).toMatch(/^<!DOCTYPE html><html lang="en"/);
    expect(html).toContain(`Too many sign-in attempts. Please wait ${seconds} seconds, then try again.`);
    expect(html).toMatch(/<a href="\/auth\/start\?redirectTo=%2Farztbriefe"[^>]*>Try again<\/a>/);
  });

  it("answer any other client with JSON {detail} and Retry-After, in the user's language", async () => {
    const cases: Array<[Record<string, string>, (seconds: string) => string]> = [
      [
        { Accept: "application/json" },
        (s) => `Zu viele Anmeldeversuche. Bitte warten Sie ${s} Sekunden und versuchen Sie es dann erneut.`,
      ],
      [{ Accept: "*/*", ...ENGLISH }, (s) => `Too many sign-in attempts. Please wait ${s} seconds, then try again.`],
    ];
    for (const [headers, expected] of cases) {
      await getDb().deleteFrom("rate_limits").execute();
      const refused = await startPastTheLimit("/auth/start", headers);
      expect(refused.status).toBe(429);
      expect(refused.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
      const seconds = refused.headers.get("Retry-After")!;
      expect(Number(seconds)).toBeGreaterThan(1);
      expect(await refused.json()).toEqual({ detail: expected(seconds) });
    }
  });

  it("escape what the page's address says: the wait is a number up to a minute, the return path stays on the site", async () => {
    const hostile = new URLSearchParams({
      tooMany: '<img src=x onerror="alert(1)">',
      redirectTo: 'https://evil.example/"><script>alert(1)</script>',
    });
    const page = await serve(request(`/login?${hostile}`, { headers: BROWSER }));
    const html = await page.text();
    expect(page.status).toBe(429);
    expect(page.headers.get("Retry-After")).toBe("60");
    expect(html).toContain("Bitte warten Sie 60 Sekunden");
    expect(html).not.toContain("<img src=x");
    expect(html).not.toContain("<script>alert(1)");
    expect(html).not.toContain("evil.example");
    expect(html).toMatch(/<a href="\/auth\/start\?redirectTo=%2F"[^>]*>Erneut versuchen<\/a>/);
    const long = await serve(request("/login?tooMany=999999", { headers: BROWSER }));
    expect(long.headers.get("Retry-After")).toBe("60");
    expect(await long.text()).toContain("Bitte warten Sie 60 Sekunden");
  });
});
