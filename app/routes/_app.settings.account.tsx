import { parseWithZod } from "@conform-to/zod";
import { json, redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { danger } from "~/components/ui/buttons";
import type { RouteHandle } from "~/components/page-scripts";
import { Modal } from "~/components/ui/modal";
import { countOwned, deleteAccount } from "~/services/accounts/account-deletion.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { endSession, requireUser } from "~/services/web/session.server";
import { deleteAccountSchema } from "./_app.settings/account.schema";

// Settings › "Delete account" (issue 9 "Data lifecycle"; ADR 0016): a dialog over the settings page that says
// what will be lost, asks for an explicit confirmation, and then deletes the account with all its data. A plain
// form post, so it works without JavaScript. Afterwards the session is gone and the sign-in page says so.

export const handle: RouteHandle = { i18n: ["common", "templates", "account"] };

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  return { owned: await countOwned(user.id) };
}

export async function action({ request }: ActionFunctionArgs) {
  const user = await requireUser(request);
  const submission = parseWithZod(await request.formData(), { schema: deleteAccountSchema });
  const t = await getFixedTFor(await getLanguage(request), ["account"]);
  if (submission.status !== "success") {
    return json({ error: t(submission.error?.confirm?.[0] ?? "account:delete.confirmRequired") }, { status: 400 });
  }
  try {
    await deleteAccount({ userId: user.id, request });
  } catch (error) {
    // Nothing is half-gone that the user could still use: the rows go in one transaction.
    console.warn("[account] deletion failed:", error instanceof Error ? error.message : error);
    return json({ error: t("account:delete.failed") }, { status: 500 });
  }
  // The session row went with the account; the cookie goes too.
  const { setCookie } = await endSession(request);
  throw redirect("/login?deleted=1", { headers: { "Set-Cookie": setCookie } });
}

export default function DeleteAccount() {
  const { owned } = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const { t } = useTranslation("account");
  const items = [
    t("delete.recordings", { count: owned.recordings }),
    t("delete.letters", { count: owned.letters }),
    t("delete.templates", { count: owned.templates }),
    t("delete.prompts", { count: owned.prompts }),
    t("delete.chat", { count: owned.chatMessages }),
  ];
  return (
    <Modal title={t("delete.title")} closeTo="/settings" closeLabel={t("delete.cancel")}>
      <Form method="post" className="space-y-4 text-sm text-slate-700" data-account-delete>
        <p>{t("delete.intro")}</p>
        <ul className="list-disc space-y-1 pl-5" data-account-owned>
          {items.map((item) => (
            <li key={item}>{item}</li>
          ))}
        </ul>
        <p>{t("delete.after")}</p>
        {actionData?.error ? (
          <p role="alert" className="rounded border border-red-300 bg-red-50 px-3 py-2 text-red-800">
            {actionData.error}
          </p>
        ) : null}
        <label className="flex items-start gap-2">
          <input type="checkbox" name="confirm" value="yes" className="mt-0.5" required />
          <span>{t("delete.confirm")}</span>
        </label>
        <div className="flex justify-end gap-2">
          <Link to="/settings" className="rounded-md px-4 py-2 text-slate-700 hover:bg-slate-100">
            {t("delete.cancel")}
          </Link>
          <button type="submit" className={danger} data-action="confirm-account-delete">
            {t("delete.submit")}
          </button>
        </div>
      </Form>
    </Modal>
  );
}
