import { json, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { LogoutButton } from "~/components/shell/top-bar";
import { AuthCard, primaryButton } from "~/components/ui/auth-card";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { notFound } from "~/services/web/not-found.server";
import { discardPendingPost, findPendingPost } from "~/services/web/pending-post.server";
import { requireUser } from "~/services/web/session.server";

// After a session expired during a form post, the kept fields come back here
// and the user sends them again with one click (works without JavaScript).

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? "Skribent" }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const t = await getFixedTFor(await getLanguage(request));
  const pending = await findPendingPost({ id: params.id ?? "", userId: user.id });
  // Gone, expired or someone else's: the same page, with a 404 that says nothing about which (issue 9).
  return json({ title: `${t("resume.title")} · Skribent`, pending }, { status: pending ? 200 : 404 });
}

export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireUser(request);
  const discarded = await discardPendingPost({ id: params.id ?? "", userId: user.id });
  if (!discarded) notFound();
  throw redirect("/");
}

export default function Resume() {
  const { pending } = useLoaderData<typeof loader>();
  const { t } = useTranslation();
  if (!pending) {
    return (
      <AuthCard title={t("resume.title")}>
        <p>{t("resume.gone")}</p>
        <div className="flex items-center justify-between gap-3">
          <a href="/" className={primaryButton}>
            {t("errors.backHome")}
          </a>
          <LogoutButton />
        </div>
      </AuthCard>
    );
  }
  return (
    <AuthCard title={t("resume.title")}>
      <p>{t("resume.body")}</p>
      <div className="flex gap-3">
        <form method="post" action={pending.path}>
          {pending.fields.map(([name, value], i) => (
            <input key={i} type="hidden" name={name} value={value} />
          ))}
          <button type="submit" className={primaryButton}>
            {t("resume.submit")}
          </button>
        </form>
        <form method="post">
          <button type="submit" className="rounded-md px-4 py-2 text-sm text-slate-700 hover:bg-slate-100">
            {t("resume.discard")}
          </button>
        </form>
      </div>
      <div className="flex justify-end border-t border-slate-200 pt-3">
        <LogoutButton />
      </div>
    </AuthCard>
  );
}
