import { json, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { LetterheadForm, LetterheadRemoveForms } from "~/components/letterhead/letterhead-form";
import { LETTERHEAD_INTENT } from "~/components/letterhead/schema";
import type { RouteHandle } from "~/components/page-scripts";
import {
  readPracticeLetterhead,
  removePracticeLetterhead,
  removePracticeLetterheadLogo,
  savePracticeLetterhead,
} from "~/services/accounts/letterhead.server";
import { submitLetterhead } from "~/services/accounts/letterhead-submission.server";
import { adminFormGate, adminGate } from "~/services/admin/admin.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { redirectWithToast } from "~/services/web/toast.server";

// The practice's letterhead (issue 25): set by an admin, used for the letters of every doctor who has none of their
// own (accounts/letterhead.server.ts letterheadFor). The same form as Settings › "Briefkopf"; behind the admin gate
// like every page here (403 and nothing else for anyone who is not an operator admin), and the service checks again.

export const handle: RouteHandle = { i18n: ["common", "admin", "account"] };

const TOAST = {
  [LETTERHEAD_INTENT.save]: "admin:letterhead.toast.saved",
  [LETTERHEAD_INTENT.removeLogo]: "admin:letterhead.toast.logoRemoved",
  [LETTERHEAD_INTENT.remove]: "admin:letterhead.toast.removed",
} as const;

export async function loader({ request, params }: LoaderFunctionArgs) {
  const gate = await adminGate(request, params, "admin.letterhead");
  if (!gate.admin) return json({ denied: true as const }, { status: 403 });
  const practice = await readPracticeLetterhead({ admin: gate.user });
  const t = await getFixedTFor(await getLanguage(request), ["account", "admin"]);
  return json({
    denied: false as const,
    values: practice.values,
    hasLetterhead: practice.letterhead !== null,
    logoSrc: practice.letterhead?.logo
      ? `/resources/letterhead-logo?scope=practice&v=${practice.letterhead.logo.version}`
      : null,
    placeholders: {
      closing: t("account:letterhead.defaultClosing"),
      signature: t("admin:letterhead.signaturePlaceholder"),
    },
  });
}

export async function action({ request, params }: ActionFunctionArgs) {
  const gate = await adminFormGate(request, params, "admin.letterhead");
  if (!gate) return json({ denied: true as const }, { status: 403 });
  const admin = gate.user;
  const outcome = await submitLetterhead(request, await getLanguage(request), {
    save: (fields, logo) => savePracticeLetterhead({ admin, fields, logo, request }),
    removeLogo: () => removePracticeLetterheadLogo({ admin, request }),
    remove: () => removePracticeLetterhead({ admin, request }),
  });
  if (outcome.kind === "unknown-intent") throw new Response("Unknown intent", { status: 400 });
  if (outcome.kind === "refused") return json({ result: outcome.result }, { status: outcome.status });
  throw await redirectWithToast(new URL(request.url).pathname, { type: "success", key: TOAST[outcome.intent] });
}

export default function PracticeLetterhead() {
  const data = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  const { t } = useTranslation("admin");
  if (data.denied) return null;
  const result = answer && "result" in answer ? answer.result : undefined;
  return (
    <section aria-labelledby="letterhead-title" className="max-w-3xl space-y-4 text-sm">
      <div>
        <h2 id="letterhead-title" className="text-lg font-semibold">
          {t("letterhead.title")}
        </h2>
        <p className="text-slate-600">{t("letterhead.intro")}</p>
        <p className="mt-2 text-slate-900" data-letterhead-source={data.hasLetterhead ? "practice" : "none"}>
          {data.hasLetterhead ? t("letterhead.inUse") : t("letterhead.none")}
        </p>
      </div>
      <div className="rounded-lg border border-slate-200 bg-white p-4">
        <LetterheadForm
          id="practice-letterhead"
          values={data.values}
          lastResult={result}
          logoSrc={data.logoSrc}
          placeholders={data.placeholders}
          saveLabel={t("letterhead.save")}
        />
        <LetterheadRemoveForms
          hasLogo={data.logoSrc !== null}
          hasLetterhead={data.hasLetterhead}
          labels={{ removeLogo: t("letterhead.removeLogo"), remove: t("letterhead.remove") }}
        />
      </div>
    </section>
  );
}
