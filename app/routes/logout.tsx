import { redirect, type ActionFunctionArgs } from "@remix-run/node";
import { auditAccess, auditAccount } from "~/services/audit/events.server";
import { endSessionUrl } from "~/services/web/auth.server";
import { getConfig } from "~/services/config/config.server";
import { getLanguage } from "~/services/web/i18n.server";
import { isCrossSiteWrite } from "~/services/web/security.server";
import { endSession } from "~/services/web/session.server";

// Logout deletes the session row and, where the provider supports it, ends the
// provider's session too (RP-initiated logout).

export async function loader() {
  throw redirect("/");
}

export async function action({ request }: ActionFunctionArgs) {
  if (isCrossSiteWrite(request, getConfig().appUrl)) {
    await auditAccess(request, null, "csrf.rejected", "denied");
    throw new Response("Cross-site request refused", { status: 403 });
  }
  const { userId, idToken, setCookie } = await endSession(request);
  if (userId) await auditAccount(request, userId, "auth.signout", userId);
  let target = "/login?signedOut=1";
  try {
    target = (await endSessionUrl(idToken, await getLanguage(request))) ?? target;
  } catch (error) {
    // The local session is gone either way; the provider may be unreachable.
    console.warn("[auth] provider logout unavailable:", error instanceof Error ? error.message : error);
  }
  // What this browser kept for the signed-out user goes too (ASVS 14.3.1): cached pages and local storage (an
  // upload's resume key, panel settings). On a shared ward computer the next user starts clean.
  throw redirect(target, { headers: { "Set-Cookie": setCookie, "Clear-Site-Data": '"cache", "storage"' } });
}
