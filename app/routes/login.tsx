import { redirect, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { AuthCard, primaryButton, Spinner } from "~/components/ui/auth-card";
import { getFixedTFor, getLanguage } from "~/services/i18n.server";
import { safeRedirect } from "~/services/security.server";
import { getOptionalUser } from "~/services/session.server";

// SPEC §2 "Authenticating...": the moment before the provider's sign-in page.
// Without JavaScript a meta refresh moves on; the button is the fallback.

export const meta: MetaFunction<typeof loader> = ({ data }) => {
  const tags: ReturnType<MetaFunction> = [{ title: data?.title ?? "Skribent" }];
  if (data?.autoContinue) tags.push({ httpEquiv: "refresh", content: `0;url=${data.startUrl}` });
  return tags;
};

export async function loader({ request }: LoaderFunctionArgs) {
  const url = new URL(request.url);
  const redirectTo = safeRedirect(url.searchParams.get("redirectTo"));
  if (await getOptionalUser(request)) throw redirect(redirectTo);
  const t = await getFixedTFor(await getLanguage(request));
  const reason =
    (["deleted", "signedOut", "expired", "failed", "strength"] as const).find((r) => url.searchParams.has(r)) ?? null;
  return {
    title: `${t("login.title")} · Skribent`,
    reason,
    // After sign-out, an expiry or a failure the user decides when to go on.
    autoContinue: reason === null,
    startUrl: `/auth/start?redirectTo=${encodeURIComponent(redirectTo)}`,
  };
}

export default function Login() {
  const { reason, autoContinue, startUrl } = useLoaderData<typeof loader>();
  const { t } = useTranslation();
  if (autoContinue) {
    return (
      <AuthCard title={t("loading.authenticating")}>
        <p aria-live="polite" className="flex items-center gap-2">
          <Spinner /> {t("loading.authenticating")}
        </p>
        <a href={startUrl} className={primaryButton}>
          {t("loading.continue")}
        </a>
      </AuthCard>
    );
  }
  return (
    <AuthCard title={t("login.title")}>
      {reason ? (
        <p role={reason === "failed" || reason === "strength" ? "alert" : "status"} data-login-reason={reason}>
          {t(`login.${reason}`)}
        </p>
      ) : null}
      <a href={startUrl} className={primaryButton}>
        {t("login.button")}
      </a>
    </AuthCard>
  );
}
