import { json, redirect, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { AuthCard, primaryButton, Spinner } from "~/components/ui/auth-card";
import { getUserByIdentity, upsertUserByIdentity } from "~/models/user.server";
import { auditAccess, auditAccount } from "~/services/audit/events.server";
import {
  AuthenticationStrengthError,
  clearStateCookies,
  getAuthenticator,
  isEmailVerificationError,
  returnToCookie,
} from "~/services/web/auth.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { safeRedirect } from "~/services/web/security.server";
import { endSession, startSession } from "~/services/web/session.server";

// The provider returns here. The code is exchanged and the ID token verified on
// the server; the browser receives only the session cookie. SPEC §2 "Preparing
// application..." is the page shown while the workspace loads.

export const meta: MetaFunction<typeof loader> = ({ data }) =>
  data ? [{ title: `${data.title} · Skribent` }, { httpEquiv: "refresh", content: `0;url=${data.redirectTo}` }] : [];

export async function loader({ request }: LoaderFunctionArgs) {
  const url = new URL(request.url);
  const error = url.searchParams.get("error");
  const cleanup = clearStateCookies(request);
  // OpenID Connect's own error for a provider that could not reach the acr_values asked for.
  if (error === "unmet_authentication_requirements") {
    throw await refuseWeakSignIn(request, null, cleanup);
  }
  if (error) {
    await auditAccess(request, null, "auth.signin", "failure");
    const target = isEmailVerificationError(error, url.searchParams.get("error_description"))
      ? "/verify-email"
      : "/login?failed=1";
    throw redirect(target, { headers: cookieHeaders(cleanup) });
  }

  let identity;
  try {
    identity = await (await getAuthenticator()).authenticate("oidc", request);
  } catch (failure) {
    if (failure instanceof AuthenticationStrengthError) throw await refuseWeakSignIn(request, failure, cleanup);
    console.warn("[auth] sign-in failed:", failure instanceof Error ? failure.message : failure);
    await auditAccess(request, null, "auth.signin", "failure");
    throw redirect("/login?failed=1", { headers: cookieHeaders(cleanup) });
  }

  const user = await upsertUserByIdentity({
    issuer: identity.issuer,
    subject: identity.subject,
    email: identity.email,
    emailVerified: identity.emailVerified,
    name: identity.name,
    locale: identity.locale,
    orgClaim: identity.orgClaim,
  });
  // A fresh id at every sign-in; whatever session this browser had is gone.
  const previous = await endSession(request);
  const setCookie = await startSession({
    userId: user.id,
    idToken: identity.idToken,
    userAgent: request.headers.get("User-Agent"),
  });
  await auditAccount(request, user.id, "auth.signin", user.id);
  if (previous.userId && previous.userId !== user.id) {
    await auditAccess(request, previous.userId, "auth.signout", "success");
  }

  const redirectTo = safeRedirect(await returnToCookie().parse(request.headers.get("Cookie")));
  const t = await getFixedTFor(await getLanguage(request));
  const headers = cookieHeaders([...cleanup, setCookie, await returnToCookie().serialize("", { maxAge: 0 })]);
  return json({ title: t("loading.preparing"), redirectTo }, { headers });
}

/**
 * OIDC_ACR_VALUES (ADR 0019): the provider signed the user in, but not as strongly as the deployment requires. No
 * account and no session are created; an account that already exists is named in the audit row.
 */
async function refuseWeakSignIn(request: Request, failure: AuthenticationStrengthError | null, cleanup: string[]) {
  console.warn("[auth] sign-in refused:", failure?.message ?? "the provider could not reach OIDC_ACR_VALUES");
  const known = failure ? await getUserByIdentity(failure.identity) : undefined;
  await auditAccess(request, known?.id ?? null, "auth.signin.acr", "denied");
  return redirect("/login?strength=1", { headers: cookieHeaders(cleanup) });
}

function cookieHeaders(cookies: string[]) {
  const headers = new Headers();
  for (const cookie of cookies) headers.append("Set-Cookie", cookie);
  return headers;
}

export default function Callback() {
  const { redirectTo } = useLoaderData<typeof loader>();
  const { t } = useTranslation();
  return (
    <AuthCard title={t("loading.preparing")}>
      <p aria-live="polite" className="flex items-center gap-2">
        <Spinner /> {t("loading.preparing")}
      </p>
      <a href={redirectTo} className={primaryButton}>
        {t("loading.continue")}
      </a>
    </AuthCard>
  );
}
