import { createCookie, type CookieOptions } from "@remix-run/node";
import { getConfig } from "../config/config.server";

// Every cookie the app sets belongs to this host and the whole site (ASVS 3.3.3). With Secure cookies (an https
// APP_URL) its name carries the `__Host-` prefix: the browser then takes it only from this exact host, over https,
// with Path=/ and no Domain, so a sibling subdomain or a plain-http answer cannot plant or overwrite it (cookie
// tossing). Browsers refuse the prefix without Secure, so on plain-http development the names stay as they are.
// A cookie under its old name is simply no longer read: a session from before needs a new sign-in.

export function cookieName(name: string) {
  return getConfig().secureCookies ? `__Host-${name}` : name;
}

/** A host-only cookie for the whole site: Path=/, no Domain, Secure and `__Host-` whenever APP_URL is https. */
export function siteCookie(name: string, options: Omit<CookieOptions, "path" | "domain" | "secure">) {
  return createCookie(cookieName(name), { ...options, path: "/", secure: getConfig().secureCookies });
}
