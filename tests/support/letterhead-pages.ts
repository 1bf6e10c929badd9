import { getDb } from "~/models/db.server";
import { languageCookie } from "~/services/web/i18n.server";
import { serve } from "./remix-document";
import { APP_URL, request, signedInUser } from "../setup/app";

// The letterhead pages (issue 25) as a browser without JavaScript uses them, through the whole app: pages in German or
// English, the save form posted as multipart with a logo file, the small remove forms posted plainly, and the
// answers read back (a field's value and its message).

export const HERE = "/settings/letterhead";
export const SAME_ORIGIN = { Origin: APP_URL, "Sec-Fetch-Site": "same-origin" };

export type Fields = Record<string, string>;

export const FULL: Fields = {
  practiceName: "Hausarztpraxis Am Südpark",
  doctors: "Dr. med. Anna Weber, Fachärztin für Allgemeinmedizin\r\nDr. med. Jörg Maaß, Internist",
  street: "Südparkstraße 12",
  postalCode: "50968",
  city: "Köln",
  phone: "+49 221 123456-0",
  email: "praxis@suedpark.example",
  bsnr: "123 456 789",
  lanr: "987654321",
  closing: "Mit kollegialen Grüßen",
  signature: "Dr. med. Anna Weber\nFachärztin für Allgemeinmedizin",
};

export async function doctor(email: string, name = "Dr. med. Anna Weber") {
  const { user, cookie } = await signedInUser({ email, name });
  return { userId: user.id, cookie };
}

export async function cookieFor(cookie: string, language: "de" | "en") {
  return language === "en" ? `${cookie}; ${(await languageCookie().serialize("en")).split(";")[0]}` : cookie;
}

export function decoded(html: string) {
  return html
    .replace(/&amp;/g, "&")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/<!-- -->/g, "");
}

export async function page(cookie: string, language: "de" | "en" = "de", path = HERE) {
  const response = await serve(request(path, { cookie: await cookieFor(cookie, language) }));
  return { status: response.status, html: decoded(await response.text()) };
}

/** The save form as the browser posts it: multipart, the logo as a file part when one is chosen. */
export async function save(
  cookie: string,
  fields: Fields,
  logo?: { bytes: Uint8Array; name: string; type: string },
  language: "de" | "en" = "de",
  path = HERE,
) {
  const body = new FormData();
  body.set("intent", "save");
  for (const [name, value] of Object.entries(fields)) body.set(name, value);
  body.set(
    "logo",
    logo
      ? new File([new Uint8Array(logo.bytes)], logo.name, { type: logo.type })
      : new File([], "", { type: "application/octet-stream" }),
  );
  const response = await serve(
    request(path, { method: "POST", cookie: await cookieFor(cookie, language), headers: SAME_ORIGIN, body }),
  );
  return {
    status: response.status,
    location: response.headers.get("Location"),
    toast: toastOf(response),
    html: decoded(await response.text()),
  };
}

/** The one-time toast cookie a redirect sets, for the next page's request. */
export function toastOf(response: Response) {
  return response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(";")[0])
    .join("; ");
}

export async function plainPost(cookie: string, fields: Fields, path = HERE) {
  const response = await serve(
    request(path, {
      method: "POST",
      cookie,
      headers: { ...SAME_ORIGIN, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    }),
  );
  return { status: response.status, location: response.headers.get("Location"), toast: toastOf(response) };
}

export async function rowOf(userId: string) {
  return getDb().selectFrom("letterheads").where("owner_id", "=", userId).selectAll().executeTakeFirst();
}

export async function auditOf(userId: string) {
  return getDb()
    .selectFrom("audit_events")
    .where("user_id", "=", userId)
    .where("action", "like", "letterhead.%")
    .selectAll()
    .orderBy("at")
    .execute();
}

export function valueOf(html: string, name: string) {
  const input = new RegExp(`<input[^>]*name="${name}"[^>]*>`).exec(html)?.[0];
  if (input) return /value="([^"]*)"/.exec(input)?.[1] ?? "";
  return new RegExp(`<textarea[^>]*name="${name}"[^>]*>([^<]*)</textarea>`).exec(html)?.[1] ?? null;
}

export function errorOf(html: string, name: string) {
  return new RegExp(`data-letterhead-error="${name}"[^>]*>(.*?)</p>`).exec(html)?.[1] ?? null;
}
