import { parseWithZod } from "@conform-to/zod";
import { json, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { danger } from "~/components/ui/buttons";
import type { RouteHandle } from "~/components/page-scripts";
import { findUsersByEmail } from "~/models/account.server";
import { AccountEmailField, ConfirmCheckbox } from "~/components/admin/account-fields";
import { adminFormGate, adminFormLoader } from "~/services/admin/admin.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { endEveryonesSessions, endSessionsOfAccounts } from "~/services/accounts/session-list.server";
import { redirectWithToast, type Toast } from "~/services/web/toast.server";
import { isUnknownIntent } from "~/components/forms/fields";
import { adminSessionsSchema, INTENT, MAX_EMAIL, type AdminSessionsIntent } from "./schema";

// Admins end sessions (ASVS 5.0 7.4.5; ADR 0003): every session of the account named by its exact e-mail address,
// or every session of everyone. Sessions are rows looked up on every request, so an ended one is a signed-out
// browser at its next request. The admin's current session always stays. Two plain forms, no JavaScript; of the
// posted fields only `intent`, `email` and `confirm` are read.

export const handle: RouteHandle = { i18n: ["common", "admin"] };

type ActionData = { intent: AdminSessionsIntent | null; error: string | null; email: string };

export async function loader({ request, params }: LoaderFunctionArgs) {
  return adminFormLoader(request, params, "admin.sessions");
}

export async function action({ request, params }: ActionFunctionArgs) {
  const gate = await adminFormGate(request, params, "admin.sessions-end");
  if (!gate) return json<ActionData>({ intent: null, error: null, email: "" }, { status: 403 });
  const submission = parseWithZod(await request.formData(), { schema: adminSessionsSchema });
  if (isUnknownIntent(submission)) throw new Response("Unknown intent", { status: 400 });
  if (submission.status !== "success") return json({ result: submission.reply() }, { status: 400 });
  const form = submission.value;
  const { intent } = form;
  const email = form.intent === INTENT.endAccount ? form.email : "";
  const t = await getFixedTFor(await getLanguage(request), ["admin"]);
  const refuse = (key: string, status: number) => json<ActionData>({ intent, error: t(key), email }, { status });
  const args = { adminId: gate.user.id, currentIdHash: gate.currentIdHash, request };

  if (form.intent === INTENT.endAccount) {
    const accounts = email ? await findUsersByEmail(email) : [];
    if (accounts.length === 0) return refuse("admin:sessions.account.notFound", 404);
    const count = await endSessionsOfAccounts({ ...args, userIds: accounts.map((account) => account.id) });
    return ended(request, "account", count, { email: email.toLowerCase() });
  }
  if (!form.confirm) return refuse("admin:sessions.all.confirmRequired", 400);
  return ended(request, "all", await endEveryonesSessions(args), {});
}

async function ended(request: Request, form: "account" | "all", count: number, values: Record<string, string>) {
  const amount = count === 0 ? "endedNone" : count === 1 ? "endedOne" : "endedMany";
  throw await redirectWithToast(new URL(request.url).pathname, {
    type: "success",
    key: `admin:sessions.${form}.${amount}` satisfies Toast["key"],
    values: { ...values, count: String(count) },
  });
}

export default function AdminSessions() {
  const { denied } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  // A refusal names its form and reason; a malformed post only its parse result.
  const actionData = answer && "error" in answer ? answer : undefined;
  const { t } = useTranslation("admin");
  if (denied) return null;
  const errorOf = (intent: AdminSessionsIntent) =>
    actionData?.intent === intent && actionData.error ? (
      <p role="alert" className="rounded border border-red-300 bg-red-50 px-3 py-2 text-red-800">
        {actionData.error}
      </p>
    ) : null;
  return (
    <section aria-labelledby="sessions-title" className="max-w-2xl space-y-6">
      <div>
        <h2 id="sessions-title" className="text-lg font-semibold">
          {t("sessions.title")}
        </h2>
        <p className="text-sm text-slate-600">{t("sessions.intro")}</p>
      </div>
      <Form
        method="post"
        aria-labelledby="sessions-account-title"
        className="space-y-4 rounded-lg border border-slate-200 bg-white p-4 text-sm"
        data-admin-sessions="account"
      >
        <h3 id="sessions-account-title" className="font-semibold">
          {t("sessions.account.title")}
        </h3>
        <p className="text-slate-600">{t("sessions.account.intro")}</p>
        {errorOf(INTENT.endAccount)}
        <input type="hidden" name="intent" value={INTENT.endAccount} />
        <AccountEmailField
          label={t("sessions.account.email")}
          maxLength={MAX_EMAIL}
          defaultValue={actionData?.intent === INTENT.endAccount ? actionData.email : ""}
        />
        <button type="submit" className={danger} data-action="admin-end-account-sessions">
          {t("sessions.account.submit")}
        </button>
      </Form>
      <Form
        method="post"
        aria-labelledby="sessions-all-title"
        className="space-y-4 rounded-lg border border-red-200 bg-white p-4 text-sm"
        data-admin-sessions="all"
      >
        <h3 id="sessions-all-title" className="font-semibold">
          {t("sessions.all.title")}
        </h3>
        <p className="text-slate-600">{t("sessions.all.intro")}</p>
        {errorOf(INTENT.endAll)}
        <input type="hidden" name="intent" value={INTENT.endAll} />
        <ConfirmCheckbox label={t("sessions.all.confirm")} />
        <button type="submit" className={danger} data-action="admin-end-all-sessions">
          {t("sessions.all.submit")}
        </button>
      </Form>
    </section>
  );
}
