import { siteCookie } from "~/services/web/cookies.server";

// SPEC §3 "letter structured-view preference", kept in a cookie instead of browser storage so that it works
// without JavaScript too. It holds one word ("structured" or "text"), never clinical data, so it is not signed. It is
// sent on every page, not only the letters', because a `__Host-` cookie must have Path=/ (web/cookies.server.ts).

export const letterViews = ["structured", "text"] as const;
export type LetterView = (typeof letterViews)[number];

export function isLetterView(value: unknown): value is LetterView {
  return typeof value === "string" && (letterViews as readonly string[]).includes(value);
}

function viewCookie() {
  return siteCookie("skribent_letter_view", {
    sameSite: "lax",
    httpOnly: true,
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
