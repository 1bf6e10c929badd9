import { parseWithZod } from "@conform-to/zod";
import { json, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { danger } from "~/components/ui/buttons";
import type { RouteHandle } from "~/components/page-scripts";
import { findUsersByEmail } from "~/models/account.server";
import { deleteAccount } from "~/services/accounts/account-deletion.server";
import { AccountEmailField, ConfirmCheckbox } from "~/components/admin/account-fields";
import { adminFormGate, adminFormLoader } from "~/services/admin/admin.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { redirectWithToast } from "~/services/web/toast.server";
import { adminDeleteAccountSchema, MAX_EMAIL } from "./schema";

// The admin's account deletion (issue 9 "Data lifecycle"; ADR 0016): an account named by its exact e-mail
// address goes with all its data, as when its user deletes it from Settings. A plain form with an explicit
// confirmation; an admin's own account is deleted from Settings, never here.

export const handle: RouteHandle = { i18n: ["common", "admin", "account"] };

export async function loader({ request, params }: LoaderFunctionArgs) {
  return adminFormLoader(request, params, "admin.accounts");
}

export async function action({ request, params }: ActionFunctionArgs) {
  const gate = await adminFormGate(request, params, "admin.account-delete");
  if (!gate) return json({ error: null, email: "" }, { status: 403 });
  const submission = parseWithZod(await request.formData(), { schema: adminDeleteAccountSchema });
  if (submission.status !== "success") return json({ result: submission.reply() }, { status: 400 });
  const { email, confirm } = submission.value;
  const t = await getFixedTFor(await getLanguage(request), ["account"]);
  const refuse = (key: string, status: number) => json({ error: t(key), email }, { status });
  if (!confirm) return refuse("account:admin.confirmRequired", 400);
  const accounts = email ? await findUsersByEmail(email) : [];
  if (accounts.length === 0) return refuse("account:admin.notFound", 404);
  if (accounts.some((account) => account.id === gate.user.id)) return refuse("account:admin.self", 400);
  for (const account of accounts) await deleteAccount({ userId: account.id, adminId: gate.user.id, request });
  throw await redirectWithToast(new URL(request.url).pathname, {
    type: "success",
    key: accounts.length === 1 ? "account:admin.deletedOne" : "account:admin.deletedMany",
    values: { email: email.toLowerCase(), count: String(accounts.length) },
  });
}

export default function AdminAccounts() {
  const { denied } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  // A refusal names its reason and keeps the address typed; a malformed post only its parse result.
  const actionData = answer && "error" in answer ? answer : undefined;
  const { t } = useTranslation("account");
  if (denied) return null;
  return (
    <section aria-labelledby="accounts-title" className="max-w-2xl">
      <h2 id="accounts-title" className="text-lg font-semibold">
        {t("admin.title")}
      </h2>
      <p className="mb-4 text-sm text-slate-600">{t("admin.intro")}</p>
      <Form method="post" className="space-y-4 rounded-lg border border-red-200 bg-white p-4 text-sm" data-admin-delete>
        {actionData?.error ? (
          <p role="alert" className="rounded border border-red-300 bg-red-50 px-3 py-2 text-red-800">
            {actionData.error}
          </p>
        ) : null}
        <AccountEmailField label={t("admin.email")} maxLength={MAX_EMAIL} defaultValue={actionData?.email ?? ""} />
        <ConfirmCheckbox label={t("admin.confirm")} />
        <button type="submit" className={danger} data-action="admin-delete-account">
          {t("admin.submit")}
        </button>
      </Form>
    </section>
  );
}
