import { Form, Link } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { quiet } from "~/components/ui/buttons";
import { Spinner } from "./letter-status";
import type { EditorActionData, EditorSection } from "./types";
import { ALL_SECTIONS, INTENT } from "./schema";

// Regeneration from the corrected transcript (issue 24, ADR 0032), beside the refinement panel: the whole letter or
// one section, as a plain form (no JavaScript needed). The result is a proposal; the notices say while it runs, lead to
// the proposal once it is there, and say why it failed.

const field = "mt-1 block w-full rounded border border-slate-300 px-2 py-1.5 text-sm";

export type RegenerationView =
  | { state: "processing"; section: string | null }
  | { state: "ready"; proposalId: string }
  | { state: "failed"; errorKey: string }
  | null;

export function RegenerateForm({
  sections,
  plain,
  busy,
  actionData,
}: {
  sections: EditorSection[];
  plain: boolean;
  busy: boolean;
  actionData: EditorActionData | null;
}) {
  const { t } = useTranslation("letters");
  const failure = actionData?.form === "regenerate" ? actionData : null;
  return (
    <section aria-labelledby="regenerate-title" className="space-y-2 border-t border-slate-200 pt-4" data-regenerate>
      <h3 id="regenerate-title" className="text-base font-medium">
        {t("regenerate.title")}
      </h3>
      <p className="text-xs text-slate-600">{t("regenerate.intro")}</p>
      {failure?.error ? (
        <p role="alert" className="rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800" data-error>
          {failure.error}
        </p>
      ) : null}
      <Form method="post" className="space-y-2" data-regenerate-form>
        <input type="hidden" name="intent" value={INTENT.regenerate} />
        {plain ? (
          <input type="hidden" name="scope" value={ALL_SECTIONS} />
        ) : (
          <label className="block text-sm font-medium text-slate-700">
            {t("regenerate.scope")}
            <select name="scope" defaultValue={failure?.scope ?? ALL_SECTIONS} className={field} data-regenerate-scope>
              <option value={ALL_SECTIONS}>{t("regenerate.allSections")}</option>
              {sections.map((s) => (
                <option key={s.title} value={s.title}>
                  {s.title}
                </option>
              ))}
            </select>
          </label>
        )}
        <button type="submit" className={`${quiet} disabled:opacity-50`} disabled={busy} data-action="regenerate">
          {t("regenerate.submit")}
        </button>
      </Form>
    </section>
  );
}

/** The notice over the letter: running (instead of the generic busy line), ready with its link, or failed. */
export function RegenerationNotice({ view, base }: { view: RegenerationView; base: string }) {
  const { t } = useTranslation("letters");
  if (!view) return null;
  if (view.state === "processing") {
    return (
      <p
        role="status"
        className="flex items-center gap-2 rounded border border-sky-300 bg-sky-50 px-3 py-2 text-sm text-sky-900"
        data-busy
        data-regeneration="processing"
      >
        <Spinner /> {view.section ? t("regenerate.runningSection", { section: view.section }) : t("regenerate.running")}
      </p>
    );
  }
  if (view.state === "ready") {
    return (
      <p
        role="status"
        className="rounded border border-emerald-300 bg-emerald-50 px-3 py-2 text-sm text-emerald-900"
        data-regeneration="ready"
      >
        {t("regenerate.ready")}{" "}
        <Link
          to={`${base}?proposal=${encodeURIComponent(view.proposalId)}`}
          className="font-medium underline"
          data-action="open-regeneration"
        >
          {t("regenerate.open")}
        </Link>
      </p>
    );
  }
  return (
    <p
      role="alert"
      className="rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800"
      data-regeneration="failed"
    >
      {t("regenerate.failed", { reason: t(view.errorKey) })}
    </p>
  );
}
