import { parseWithZod } from "@conform-to/zod";
import { json, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, Link, useLoaderData, useRouteLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { RouteHandle } from "~/components/page-scripts";
import { ToastMessage } from "~/components/shell/toast";
import { danger, quiet } from "~/components/ui/buttons";
import { Modal } from "~/components/ui/modal";
import { formatDateTime, type Language } from "~/i18n";
import { getConfig } from "~/services/config/config.server";
import { getLanguage } from "~/services/web/i18n.server";
import { requireUserSession } from "~/services/web/session.server";
import {
  endAllOtherSessions,
  endOtherSession,
  listSessions,
  MAX_SESSIONS_PER_USER,
  type SessionListItem,
} from "~/services/accounts/session-list.server";
import { redirectWithToast } from "~/services/web/toast.server";
import { isUnknownIntent } from "~/components/forms/fields";
import { notFound } from "~/services/web/not-found.server";
import type { loader as workspaceLoader } from "./_app";
import { INTENT, sessionsActionSchema } from "./_app.settings/sessions.schema";

// Settings › "Aktive Sitzungen" (ASVS 5.0 7.5.2): a dialog over the settings page listing where the user is signed
// in, with plain form posts to end one other session or all others — no JavaScript. The current session ends with
// the logout (which also ends the provider's session), so it is offered here as that. Sessions are named by their
// public id only; one that is not the caller's (another user's, made up, or the current one) is a 404.

export const handle: RouteHandle = { i18n: ["common", "templates", "account"], ownsToast: true };

const HERE = "/settings/sessions";

export async function loader({ request }: LoaderFunctionArgs) {
  const { user, currentIdHash } = await requireUserSession(request);
  const { idleMs, absoluteMs } = getConfig().session;
  return {
    language: await getLanguage(request),
    sessions: await listSessions({ userId: user.id, currentIdHash }),
    policy: { idle: idleMs / 60_000, absolute: absoluteMs / 3_600_000, max: MAX_SESSIONS_PER_USER },
  };
}

export async function action({ request }: ActionFunctionArgs) {
  const { user, currentIdHash } = await requireUserSession(request);
  const submission = parseWithZod(await request.formData(), { schema: sessionsActionSchema });
  if (isUnknownIntent(submission)) throw new Response("Unknown intent", { status: 400 });
  if (submission.status !== "success") return json({ result: submission.reply() }, { status: 400 });
  const form = submission.value;
  const args = { userId: user.id, currentIdHash, request };
  if (form.intent === INTENT.end) {
    const ended = await endOtherSession({ ...args, publicId: form.session });
    if (!ended) notFound();
    return backToList("account:sessions.ended");
  }
  await endAllOtherSessions(args);
  return backToList("account:sessions.endedOthers");
}

function backToList(key: "account:sessions.ended" | "account:sessions.endedOthers") {
  return redirectWithToast(HERE, { type: "success", key });
}

export default function ActiveSessions() {
  const { sessions, language, policy } = useLoaderData<typeof loader>();
  const workspace = useRouteLoaderData<typeof workspaceLoader>("routes/_app");
  const { t } = useTranslation("account");
  const others = sessions.filter((session) => !session.current).length;
  return (
    <Modal title={t("sessions.title")} closeTo="/settings" closeLabel={t("sessions.close")}>
      {/* The workspace shows the toast behind this dialog too; here it is readable. */}
      <ToastMessage toast={workspace?.toast ?? null} />
      <div className="space-y-4 text-sm text-slate-700">
        <p>{t("sessions.intro")}</p>
        <ul className="divide-y divide-slate-200 rounded-lg border border-slate-200" data-sessions>
          {sessions.map((session) => (
            <SessionRow key={session.id} session={session} language={language} />
          ))}
        </ul>
        {others > 0 ? (
          <Form method="post" className="flex justify-end">
            <input type="hidden" name="intent" value={INTENT.endOthers} />
            <button type="submit" className={danger} data-action="end-other-sessions">
              {t("sessions.endOthers")}
            </button>
          </Form>
        ) : (
          <p data-empty>{t("sessions.none")}</p>
        )}
        <p className="text-xs text-slate-500" data-session-policy>
          {t("sessions.policy", policy)}
        </p>
        <div className="flex justify-end">
          <Link to="/settings" className="rounded-md px-4 py-2 text-slate-700 hover:bg-slate-100">
            {t("sessions.close")}
          </Link>
        </div>
      </div>
    </Modal>
  );
}

function SessionRow({ session, language }: { session: SessionListItem; language: Language }) {
  const { t } = useTranslation("account");
  const nameId = `session-${session.id}`;
  return (
    <li className="flex flex-wrap items-center gap-3 px-4 py-3" data-session={session.current ? "current" : "other"}>
      {/* Wide enough for a label and a date on one line; on a phone the button moves below instead. */}
      <div className="min-w-0 flex-[1_1_14rem]">
        <p id={nameId} className="font-medium text-slate-900">
          <span data-device>{session.device ?? t("sessions.unknownDevice")}</span>
          {session.current ? (
            <span
              className="ml-2 rounded-full bg-brand-50 px-2 py-0.5 text-xs whitespace-nowrap text-brand-700"
              data-current
            >
              {t("sessions.current")}
            </span>
          ) : null}
        </p>
        <dl className="mt-1 grid grid-cols-[auto_1fr] gap-x-3 text-xs text-slate-600 [&_dt]:whitespace-nowrap">
          <dt>{t("sessions.started")}</dt>
          <dd>
            <time dateTime={session.startedAt}>{formatDateTime(session.startedAt, language)}</time>
          </dd>
          <dt>{t("sessions.lastActive")}</dt>
          <dd>
            <time dateTime={session.lastSeenAt}>{formatDateTime(session.lastSeenAt, language)}</time>
          </dd>
        </dl>
      </div>
      {session.current ? (
        <Form method="post" action="/logout" reloadDocument>
          <button type="submit" className={quiet} aria-describedby={nameId} data-action="logout">
            {t("sessions.signOut")}
          </button>
        </Form>
      ) : (
        <Form method="post">
          <input type="hidden" name="intent" value={INTENT.end} />
          <input type="hidden" name="session" value={session.id} />
          <button type="submit" className={quiet} aria-describedby={nameId} data-action="end-session">
            {t("sessions.end")}
          </button>
        </Form>
      )}
    </li>
  );
}
