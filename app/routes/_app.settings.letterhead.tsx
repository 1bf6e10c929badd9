import { json, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Link, useActionData, useLoaderData, useRouteLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { LetterheadForm, LetterheadRemoveForms } from "~/components/letterhead/letterhead-form";
import { LETTERHEAD_INTENT } from "~/components/letterhead/schema";
import type { RouteHandle } from "~/components/page-scripts";
import { ToastMessage } from "~/components/shell/toast";
import { Modal } from "~/components/ui/modal";
import {
  readOwnLetterhead,
  removeOwnLetterhead,
  removeOwnLetterheadLogo,
  saveOwnLetterhead,
} from "~/services/accounts/letterhead.server";
import { submitLetterhead } from "~/services/accounts/letterhead-submission.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { requireUser } from "~/services/web/session.server";
import { redirectWithToast } from "~/services/web/toast.server";
import type { loader as workspaceLoader } from "./_app";

// Settings › "Briefkopf" (issue 25): the doctor's own letterhead for the letters that leave Skribent — practice,
// doctors, address, BSNR/LANR, closing and signature, and a logo (PNG or SVG, checked before it is stored; the
// preview is served by resources.letterhead-logo). The page says which letterhead the letters use now: this one,
// the practice's or the defaults. Plain form posts, no JavaScript; the letterhead is found by the caller alone.

export const handle: RouteHandle = { i18n: ["common", "templates", "account"], ownsToast: true };

const HERE = "/settings/letterhead";

const TOAST = {
  [LETTERHEAD_INTENT.save]: "account:letterhead.toast.saved",
  [LETTERHEAD_INTENT.removeLogo]: "account:letterhead.toast.logoRemoved",
  [LETTERHEAD_INTENT.remove]: "account:letterhead.toast.removed",
} as const;

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const [own, language] = await Promise.all([readOwnLetterhead({ userId: user.id }), getLanguage(request)]);
  const t = await getFixedTFor(language, ["account"]);
  return {
    values: own.values,
    source: own.source,
    hasLetterhead: own.letterhead !== null,
    logoSrc: own.letterhead?.logo ? `/resources/letterhead-logo?v=${own.letterhead.logo.version}` : null,
    placeholders: { closing: t("letterhead.defaultClosing"), signature: user.name ?? user.email ?? "" },
  };
}

export async function action({ request }: ActionFunctionArgs) {
  const user = await requireUser(request);
  const outcome = await submitLetterhead(request, await getLanguage(request), {
    save: (fields, logo) => saveOwnLetterhead({ userId: user.id, fields, logo, request }),
    removeLogo: () => removeOwnLetterheadLogo({ userId: user.id, request }),
    remove: () => removeOwnLetterhead({ userId: user.id, request }),
  });
  if (outcome.kind === "unknown-intent") throw new Response("Unknown intent", { status: 400 });
  if (outcome.kind === "refused") return json({ result: outcome.result }, { status: outcome.status });
  return redirectWithToast(HERE, { type: "success", key: TOAST[outcome.intent] });
}

export default function MyLetterhead() {
  const { values, source, hasLetterhead, logoSrc, placeholders } = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const workspace = useRouteLoaderData<typeof workspaceLoader>("routes/_app");
  const { t } = useTranslation("account");
  return (
    <Modal title={t("letterhead.title")} closeTo="/settings" closeLabel={t("letterhead.close")} wide>
      <ToastMessage toast={workspace?.toast ?? null} />
      <div className="space-y-4 text-sm text-slate-700">
        <p>{t("letterhead.intro")}</p>
        <p
          className="rounded-md border border-brand-100 bg-brand-50 px-3 py-2 text-slate-900"
          data-letterhead-source={source}
        >
          {t(`letterhead.source.${source}`)}
        </p>
        <LetterheadForm
          id="letterhead"
          values={values}
          lastResult={actionData?.result}
          logoSrc={logoSrc}
          placeholders={placeholders}
          saveLabel={t("letterhead.save")}
        />
        <LetterheadRemoveForms
          hasLogo={logoSrc !== null}
          hasLetterhead={hasLetterhead}
          labels={{ removeLogo: t("letterhead.removeLogo"), remove: t("letterhead.remove") }}
        />
        <div className="flex justify-end">
          <Link to="/settings" className="rounded-md px-4 py-2 text-slate-700 hover:bg-slate-100">
            {t("letterhead.close")}
          </Link>
        </div>
      </div>
    </Modal>
  );
}
