import { createCookie } from "@remix-run/node";
import { getConfig } from "~/services/config.server";

// SPEC §3 "letter structured-view preference", kept in a cookie instead of browser storage so that it works
// without JavaScript too. It holds one word ("structured" or "text"), never clinical data, so it is not signed.

export const letterViews = ["structured", "text"] as const;
export type LetterView = (typeof letterViews)[number];

export function isLetterView(value: unknown): value is LetterView {
  return typeof value === "string" && (letterViews as readonly string[]).includes(value);
}

function viewCookie() {
  return createCookie("skribent_letter_view", {
    path: "/arztbriefe",
    sameSite: "lax",
    httpOnly: true,
    secure: getConfig().secureCookies,
    maxAge: 60 * 60 * 24 * 365,
  });
}

export async function readViewPreference(request: Request): Promise<LetterView | null> {
  const value: unknown = await viewCookie().parse(request.headers.get("Cookie"));
  return isLetterView(value) ? value : null;
}

export function rememberView(view: LetterView) {
  return viewCookie().serialize(view);
}
