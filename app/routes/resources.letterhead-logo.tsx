import type { LoaderFunctionArgs } from "@remix-run/node";
import { ownLetterheadLogo, practiceLetterheadLogo } from "~/services/accounts/letterhead.server";
import { notFound } from "~/services/web/not-found.server";
import { requireUser } from "~/services/web/session.server";

// The letterhead logo's preview (issue 25): the caller's own logo, or with ?scope=practice the practice's (which
// every signed-in user's letters may carry). No id is taken, so no one else's logo can be named. The bytes were
// checked when stored; they are still served as an image that can do nothing: an SVG opened on its own runs no
// script, loads nothing and is never sniffed as anything else.

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const practice = new URL(request.url).searchParams.get("scope") === "practice";
  const logo = practice ? await practiceLetterheadLogo() : await ownLetterheadLogo({ userId: user.id });
  if (!logo) notFound();
  return new Response(new Uint8Array(logo.data), {
    headers: {
      "Content-Type": logo.mime,
      "Content-Length": String(logo.data.byteLength),
      "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
      "X-Content-Type-Options": "nosniff",
      "Content-Disposition": `inline; filename="${logo.mime === "image/png" ? "logo.png" : "logo.svg"}"`,
      "Cross-Origin-Resource-Policy": "same-origin",
      "Cache-Control": "private, no-cache",
    },
  });
}
