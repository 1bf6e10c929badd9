import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useTranslation } from "react-i18next";
import { AuthCard, primaryButton } from "~/components/ui/auth-card";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";

// SPEC §2: the provider answered access_denied because the e-mail is unverified.
export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? "Skribent" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const t = await getFixedTFor(await getLanguage(request));
  return { title: `${t("verifyEmail.title")} · Skribent` };
}

export default function VerifyEmail() {
  const { t } = useTranslation();
  return (
    <AuthCard title={t("verifyEmail.title")}>
      <p>{t("verifyEmail.body")}</p>
      <a href="/login?signedOut=1" className={primaryButton} data-return-to-login>
        {t("verifyEmail.returnToLogin")}
      </a>
    </AuthCard>
  );
}
