import { json, redirect, type HeadersFunction, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { AuthCard, primaryButton, Spinner } from "~/components/ui/auth-card";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { safeRedirect } from "~/services/web/security.server";
import { getOptionalUser } from "~/services/web/session.server";

// SPEC §2 "Authenticating...": the moment before the provider's sign-in page.
// Without JavaScript a meta refresh moves on; the button is the fallback.

export const meta: MetaFunction<typeof loader> = ({ data }) => {
  const tags: ReturnType<MetaFunction> = [{ title: data?.title ?? "Skribent" }];
  if (data?.autoContinue) tags.push({ httpEquiv: "refresh", content: `0;url=${data.startUrl}` });
  return tags;
};

// The sign-in start's limit counts per minute: a wait named in the address is at most that, whatever it says.
const MAX_WAIT_SECONDS = 60;

/** `?tooMany=<seconds>`, from /auth/start when this address started too many sign-ins (issue 22). */
function waitSeconds(url: URL) {
  const value = url.searchParams.get("tooMany");
  if (value === null) return null;
  const seconds = /^\d{1,6}$/.test(value) ? Number(value) : MAX_WAIT_SECONDS;
  return Math.min(Math.max(seconds, 1), MAX_WAIT_SECONDS);
}

export async function loader({ request }: LoaderFunctionArgs) {
  const url = new URL(request.url);
  const redirectTo = safeRedirect(url.searchParams.get("redirectTo"));
  if (await getOptionalUser(request)) throw redirect(redirectTo);
  const t = await getFixedTFor(await getLanguage(request));
  const wait = waitSeconds(url);
  const reason =
    wait !== null
      ? ("tooMany" as const)
      : ((["deleted", "signedOut", "expired", "failed", "strength"] as const).find((r) => url.searchParams.has(r)) ??
        null);
  const data = {
    title: `${t("login.title")} · Skribent`,
    reason,
    wait,
    // After sign-out, an expiry, a failure or too many attempts the user decides when to go on.
    autoContinue: reason === null,
    startUrl: `/auth/start?redirectTo=${encodeURIComponent(redirectTo)}`,
  };
  // Still refused while the wait lasts: the page says so with the status and the header a client reads.
  if (wait !== null) return json(data, { status: 429, headers: { "Retry-After": String(wait) } });
  return json(data);
}

export const headers: HeadersFunction = ({ loaderHeaders }) => {
  const headers = new Headers();
  const retryAfter = loaderHeaders.get("Retry-After");
  if (retryAfter) headers.set("Retry-After", retryAfter);
  return headers;
};

export default function Login() {
  const { reason, wait, autoContinue, startUrl } = useLoaderData<typeof loader>();
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
      {reason === "tooMany" ? (
        <p role="alert" data-login-reason={reason}>
          {t("login.tooManyWait", { count: wait ?? MAX_WAIT_SECONDS })}
        </p>
      ) : reason ? (
        <p role={reason === "failed" || reason === "strength" ? "alert" : "status"} data-login-reason={reason}>
          {t(`login.${reason}`)}
        </p>
      ) : null}
      <a href={startUrl} className={primaryButton}>
        {t(reason === "tooMany" ? "login.tryAgain" : "login.button")}
      </a>
    </AuthCard>
  );
}
