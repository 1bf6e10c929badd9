import { parseWithZod } from "@conform-to/zod";
import { redirect, type ActionFunctionArgs } from "@remix-run/node";
import { localeSchema } from "~/components/shell/locale.schema";
import { getConfig } from "~/services/config/config.server";
import { languageCookie } from "~/services/web/i18n.server";
import { isCrossSiteWrite, safeRedirect } from "~/services/web/security.server";
import { redirectWithToast } from "~/services/web/toast.server";

// The language switcher posts here: a cookie the server renders from, no
// JavaScript needed. SPEC §2: a notice tells the new default transcription language.

export async function loader() {
  throw redirect("/");
}

export async function action({ request }: ActionFunctionArgs) {
  if (isCrossSiteWrite(request, getConfig().appUrl)) throw new Response("Cross-site request refused", { status: 403 });
  const submission = parseWithZod(await request.formData(), { schema: localeSchema });
  // The schema cannot fail: an unknown language is no language.
  const { language, redirectTo: asked } = submission.status === "success" ? submission.value : {};
  const redirectTo = safeRedirect(asked);
  if (!language) throw redirect(redirectTo);
  throw await redirectWithToast(
    redirectTo,
    { type: "info", key: `notice.transcriptionLanguage_${language}` },
    { headers: { "Set-Cookie": await languageCookie().serialize(language) } },
  );
}
