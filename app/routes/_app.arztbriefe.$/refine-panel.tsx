import { Form } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { button, quiet } from "~/components/ui/buttons";
import { DictationField } from "~/components/ui/voice-input";
import type { EditorActionData, EditorSection, SavedPromptView } from "./types";
import { ALL_SECTIONS, INTENT } from "./schema";

// The refinement side panel beside the letter. Without JavaScript every control is a plain form; letter.js
// adds the instruction counter and fills a saved prompt in place (ADR 0006).

const field = "mt-1 block w-full rounded border border-slate-300 px-2 py-1.5 text-sm";

/**
 * SPEC §2 side panel: section selector, a 500-character instruction, Update, voice input (issue 7), saved
 * prompts and the Save prompt dialog. "Update" asks for a proposal; nothing changes until it is accepted.
 */
export function RefinePanel({
  sections,
  plain,
  busy,
  prompts,
  limits,
  actionData,
}: {
  sections: EditorSection[];
  plain: boolean;
  busy: boolean;
  prompts: SavedPromptView[];
  limits: { instruction: number; promptTitle: number; prompts: number };
  actionData: EditorActionData | null;
}) {
  const { t } = useTranslation("letters");
  const refine = actionData?.form === "refine" ? actionData : null;
  const query = refine?.query ?? "";
  const scope = refine?.scope ?? (plain ? "__full__" : ALL_SECTIONS);
  const full = prompts.length >= limits.prompts;
  return (
    <aside aria-labelledby="refine-title" className="space-y-4" data-refine-panel>
      <h3 id="refine-title" className="text-base font-medium">
        {t("refine.title")}
      </h3>
      {refine?.error ? (
        <p role="alert" className="rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800" data-error>
          {refine.error}
        </p>
      ) : null}
      <Form method="post" className="space-y-3" data-refine-form noValidate>
        <label className="block text-sm font-medium text-slate-700">
          {t("refine.scope")}
          <select name="scope" defaultValue={scope} className={field} data-scope>
            {plain ? null : <option value={ALL_SECTIONS}>{t("refine.allSections")}</option>}
            <option value="__full__">{t("refine.fullText")}</option>
            {sections.map((s) => (
              <option key={s.title} value={s.title}>
                {s.title}
              </option>
            ))}
          </select>
        </label>
        <DictationField
          label={
            <span className="flex justify-between gap-2">
              {t("refine.instruction")}
              <span className="text-xs font-normal text-slate-500" data-counter>
                {query.length}/{limits.instruction}
              </span>
            </span>
          }
          name="query"
          rows={5}
          maxLength={limits.instruction}
          defaultValue={query}
          placeholder={t("refine.placeholder")}
          className={field}
        >
          <button
            type="submit"
            name="intent"
            value={INTENT.refine}
            className={`${button} disabled:opacity-50`}
            disabled={busy}
            data-action="refine"
          >
            {t("refine.update")}
          </button>
        </DictationField>
        <details
          className="rounded-md border border-slate-200 p-3"
          open={Boolean(refine?.promptError)}
          data-save-prompt
        >
          <summary className="cursor-pointer text-sm font-medium text-slate-700" data-action="open-save-prompt">
            {t("prompts.save")}
          </summary>
          <div className="mt-2 space-y-2">
            {refine?.promptError ? (
              <p role="alert" className="text-sm text-red-700" data-prompt-error>
                {refine.promptError}
              </p>
            ) : null}
            {full ? (
              <p className="text-sm text-amber-800" data-prompt-limit>
                {t("prompts.limitReached")}
              </p>
            ) : null}
            <label className="block text-sm text-slate-700">
              {t("prompts.titleLabel")}
              <input
                name="title"
                maxLength={limits.promptTitle}
                defaultValue={refine?.promptTitle ?? ""}
                disabled={full}
                className={field}
              />
            </label>
            <label className="block text-sm text-slate-700">
              {t("prompts.textLabel")}
              <textarea
                name="promptText"
                rows={3}
                maxLength={limits.instruction}
                defaultValue={refine?.promptText ?? query}
                disabled={full}
                className={field}
                data-prompt-text
              />
              <span className="text-xs text-slate-500">{t("prompts.textHelp")}</span>
            </label>
            <button
              type="submit"
              name="intent"
              value={INTENT.savePrompt}
              className={`${quiet} disabled:opacity-50`}
              disabled={full}
              data-action="save-prompt"
            >
              {t("prompts.save")}
            </button>
          </div>
        </details>
      </Form>
      <SavedPrompts prompts={prompts} scope={scope} error={actionData?.form === "prompts" ? actionData.error : null} />
    </aside>
  );
}

function SavedPrompts({
  prompts,
  scope,
  error,
}: {
  prompts: SavedPromptView[];
  scope: string;
  error: string | null | undefined;
}) {
  const { t } = useTranslation("letters");
  return (
    <section aria-labelledby="prompts-title" data-saved-prompts>
      <h4 id="prompts-title" className="text-sm font-medium text-slate-700">
        {t("prompts.title")}
      </h4>
      {error ? (
        <p role="alert" className="mt-1 text-sm text-red-700">
          {error}
        </p>
      ) : null}
      {prompts.length === 0 ? <p className="mt-1 text-sm text-slate-500">{t("prompts.empty")}</p> : null}
      <ul className="mt-2 space-y-2">
        {prompts.map((p) => (
          <li key={p.id} className="rounded-md border border-slate-200 p-2" data-saved-prompt={p.id}>
            <Form method="post" className="flex flex-wrap items-center gap-2">
              <input type="hidden" name="promptId" value={p.id} />
              <input type="hidden" name="scope" value={scope} />
              <span className="min-w-0 flex-1 truncate text-sm" title={p.text}>
                {p.title}
              </span>
              <button
                type="submit"
                name="intent"
                value={INTENT.usePrompt}
                className="rounded px-2 py-0.5 text-xs text-brand-700 hover:bg-brand-50"
                data-action="use-prompt"
                data-prompt={p.text}
              >
                {t("prompts.use")}
              </button>
              <button
                type="submit"
                name="intent"
                value={INTENT.deletePrompt}
                className="rounded px-2 py-0.5 text-xs text-red-700 hover:bg-red-50"
                data-action="delete-prompt"
                aria-label={t("prompts.deleteNamed", { title: p.title })}
              >
                {t("prompts.delete")}
              </button>
            </Form>
          </li>
        ))}
      </ul>
    </section>
  );
}
