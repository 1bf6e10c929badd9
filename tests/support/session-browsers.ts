import { expect } from "vitest";
import { getDb } from "~/models/db.server";
import { languageCookie } from "~/services/web/i18n.server";
import { signInAtDevProvider } from "./oidc-client";
import { serve } from "./remix-document";
import { APP_URL, request } from "../setup/app";

// Browsers for Settings › "Aktive Sitzungen" (active-sessions.test.ts, session-policy.test.ts): each signs in
// through /auth/start, the development provider and /auth/callback with its own User-Agent, keeps its cookies,
// and loads pages and posts forms through the whole app, as a browser without JavaScript does.

export const AGENTS = {
  firefoxWindows: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0",
  chromiumLinux:
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Ubuntu Chromium/83.0.4103.61 " +
    "Chrome/83.0.4103.61 Safari/537.36",
  safariIphone:
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) " +
    "Version/17.4 Mobile/15E148 Safari/604.1",
};

export const ACCOUNTS = {
  anna: { id: "anna-berger", email: "anna.berger@praxis-berger.example" },
  jonas: { id: "jonas-keller", email: "jonas.keller@klinikum-nord.example" },
};
type Account = (typeof ACCOUNTS)[keyof typeof ACCOUNTS];

const cookiesOf = (response: Response) => response.headers.getSetCookie().map((c) => c.split(";")[0]);

/** A browser holding these cookies: it keeps what the app sets (the one-time toast too) and drops what it ends. */
export async function browserWith(cookies: string[], userAgent: string) {
  const jar = new Set(cookies);
  const keep = (response: Response) => {
    for (const set of response.headers.getSetCookie()) {
      const [pair] = set.split(";");
      const name = pair.slice(0, pair.indexOf("=") + 1);
      for (const held of jar) if (held.startsWith(name)) jar.delete(held);
      if (!/max-age=0/i.test(set)) jar.add(pair);
    }
    return response;
  };
  const english = (await languageCookie().serialize("en")).split(";")[0];
  const headers = { "User-Agent": userAgent };
  const cookie = (language: "de" | "en" = "de") => [...jar, ...(language === "en" ? [english] : [])].join("; ");
  return {
    get: async (path: string, language: "de" | "en" = "de") =>
      keep(await serve(request(path, { cookie: cookie(language), headers }))),
    post: async (path: string, fields: URLSearchParams | Record<string, string>) => {
      const post = { ...headers, Origin: APP_URL, "Sec-Fetch-Site": "same-origin" };
      const body = new URLSearchParams(fields).toString();
      return keep(
        await serve(
          request(path, {
            method: "POST",
            cookie: cookie(),
            headers: { ...post, "Content-Type": "application/x-www-form-urlencoded" },
            body,
          }),
        ),
      );
    },
  };
}
export type Browser = Awaited<ReturnType<typeof browserWith>>;

/** Signs in through the app's own sign-in (the callback derives the device label from this User-Agent). */
export async function signIn(
  args: { issuer: string; clientId: string; clientSecret: string },
  account: Account,
  userAgent: string,
) {
  const headers = { "User-Agent": userAgent };
  const start = await serve(request("/auth/start?redirectTo=%2Fsettings", { headers }));
  const { code, state } = await signInAtDevProvider({
    ...args,
    redirectUri: `${APP_URL}/auth/callback`,
    accountId: account.id,
    authorizationUrl: start.headers.get("Location")!,
  });
  const callback = await serve(
    request(`/auth/callback?code=${code}&state=${state}`, { cookie: cookiesOf(start).join("; "), headers }),
  );
  expect(callback.status).toBe(200);
  return browserWith(
    cookiesOf(callback).filter((c) => c.startsWith("skribent_sid=")),
    userAgent,
  );
}

export async function sessionsPage(browser: Browser, language: "de" | "en" = "de") {
  const response = await browser.get("/settings/sessions", language);
  expect(response.status).toBe(200);
  return response.text();
}

/** The rows of the list as a user reads them: the device, whether it is this session, the two times. */
export function rowsOf(html: string) {
  return [...html.matchAll(/<li[^>]*data-session="(current|other)"[^>]*>([\s\S]*?)<\/li>/g)].map(([, kind, row]) => ({
    device: /data-device="?[^>]*>([^<]*)</.exec(row)![1],
    current: kind === "current",
    marked: /data-current/.test(row),
    times: [...row.matchAll(/<time[^>]*>([^<]*)<\/time>/g)].map((m) => m[1]),
  }));
}

/** The forms of the dialog as a browser without JavaScript submits them: where to, and every field. */
export function formsOf(html: string) {
  const dialog = html.includes('role="dialog"') ? html.slice(html.indexOf('role="dialog"')) : html;
  return [...dialog.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)].map(([, attributes, body]) => {
    const fields = new URLSearchParams();
    for (const [input] of body.matchAll(/<input\b[^>]*>/g))
      fields.append(/name="([^"]*)"/.exec(input)![1], /value="([^"]*)"/.exec(input)?.[1] ?? "");
    return {
      method: /method="([^"]*)"/.exec(attributes)?.[1],
      action: /action="([^"]*)"/.exec(attributes)?.[1],
      fields,
    };
  });
}

/** The page's form that ends the session shown under `device`. */
export function endFormFor(html: string, device: string) {
  const row = [...html.matchAll(/<li[^>]*data-session="other"[^>]*>([\s\S]*?)<\/li>/g)].find(([, r]) =>
    r.includes(`>${device}<`),
  );
  expect(row, device).toBeDefined();
  return formsOf(row![1])[0];
}

export async function userIdOf(account: Account) {
  const row = await getDb().selectFrom("users").where("email", "=", account.email).select("id").executeTakeFirst();
  return row!.id;
}

export async function sessionsOf(account: Account) {
  return getDb()
    .selectFrom("sessions")
    .where("user_id", "=", await userIdOf(account))
    .selectAll()
    .execute();
}

/** Signed out: the next page request goes to sign-in, with the way back ("expired" when the limits ended it). */
export async function expectSignedOut(browser: Browser, reason = "") {
  const response = await browser.get("/settings");
  expect(response.status).toBe(302);
  expect(response.headers.get("Location")).toBe(`/login?redirectTo=%2Fsettings${reason}`);
}

export async function expectSignedIn(browser: Browser) {
  expect((await browser.get("/settings")).status).toBe(200);
}
