import { Form } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { button, quiet } from "~/components/ui/buttons";
import { DictationField } from "~/components/ui/voice-input";
import type { EditorActionData, EditorSection, SavedPromptView } from "./types";

// The letter itself (structured form or read-only text) and the refinement side panel. Without JavaScript
// every control is a plain form; letter.js adds copy, Save-only-when-changed, the instruction counter, filling
// a saved prompt in place and a warning before leaving unsaved text (ADR 0006).

const field = "mt-1 block w-full rounded border border-slate-300 px-2 py-1.5 text-sm";

function rowsFor(text: string) {
  return Math.min(20, Math.max(3, text.split("\n").length + 1));
}

function CopyButton({ target }: { target: string }) {
  const { t } = useTranslation("letters");
  return (
    <button
      type="button"
      className="rounded px-2 py-0.5 text-xs text-brand-700 hover:bg-brand-50"
      hidden
      data-action="copy"
      data-copy-target={target}
      data-copied-label={t("editor.copied")}
    >
      {t("editor.copy")}
    </button>
  );
}

/** SPEC §2 structured view: one labelled, copyable box per section, saved together as a new version. */
export function StructuredForm({
  sections,
  version,
  busy,
  saveError,
}: {
  sections: EditorSection[];
  version: number;
  busy: boolean;
  saveError: EditorActionData | null;
}) {
  const { t } = useTranslation("letters");
  // After a refused save, the form shows what the doctor typed, not the stored text.
  const submitted = saveError?.submitted;
  const shown = submitted
    ? submitted.titles.map((title, i) => ({ title, text: submitted.texts[i] ?? "", noInformation: false }))
    : sections;
  const dirty = Boolean(
    submitted && shown.some((s, i) => s.title !== sections[i]?.title || s.text !== sections[i]?.text),
  );
  return (
    <Form method="post" className="space-y-4" data-letter-form data-dirty={dirty ? "" : undefined}>
      <input type="hidden" name="intent" value="save" />
      <input type="hidden" name="base_version" value={version} />
      {shown.map((s, i) => (
        <div key={`${s.title}-${i}`} className="rounded-md border border-slate-200 bg-white p-3">
          <div className="flex items-center justify-between gap-2">
            <label htmlFor={`section-${i}`} className="text-sm font-medium text-slate-800">
              {s.title}
            </label>
            <CopyButton target={`section-${i}`} />
          </div>
          <input type="hidden" name="title" value={s.title} />
          <textarea
            id={`section-${i}`}
            name="text"
            defaultValue={s.text}
            rows={rowsFor(s.text)}
            readOnly={busy}
            className={`${field} leading-relaxed ${busy ? "bg-slate-50 text-slate-500" : ""}`}
            data-section={s.title}
          />
        </div>
      ))}
      {busy ? null : (
        <div className="flex items-center gap-3">
          {/* Enabled without JavaScript (the server answers "no changes"); letter.js enables it only when a
              section differs from what was loaded (SPEC §5). */}
          <button type="submit" className={`${button} disabled:opacity-50`} data-action="save">
            {t("editor.save")}
          </button>
          {dirty ? <span className="text-xs text-amber-700">{t("editor.unsaved")}</span> : null}
        </div>
      )}
    </Form>
  );
}

/** SPEC §2 read-only text view; its copy leaves out 'no information found' sections (SPEC §5). */
export function TextView({
  sections,
  plainText,
  copyText,
}: {
  sections: EditorSection[];
  plainText: string | null;
  copyText: string;
}) {
  const { t } = useTranslation("letters");
  return (
    <div className="space-y-4">
      <div className="flex items-center justify-between gap-2">
        <p className="text-xs text-slate-500">{t("editor.copyNote")}</p>
        <button
          type="button"
          className={quiet}
          hidden
          data-action="copy"
          data-copy-target="letter-copy-source"
          data-copied-label={t("editor.copied")}
        >
          {t("editor.copyAll")}
        </button>
      </div>
      <article className="space-y-4 rounded-md border border-slate-200 bg-white p-4 text-sm" data-letter-text>
        {plainText !== null ? (
          <div className="leading-relaxed whitespace-pre-wrap">{plainText}</div>
        ) : (
          sections.map((s, i) => (
            <section
              key={`${s.title}-${i}`}
              data-section={s.title}
              data-no-information={s.noInformation ? "" : undefined}
              className={s.noInformation ? "text-slate-400" : undefined}
            >
              <h4 className="font-semibold">{s.title}</h4>
              <p className="leading-relaxed whitespace-pre-wrap">{s.text}</p>
              {s.noInformation ? <p className="text-xs italic">{t("editor.notCopied")}</p> : null}
            </section>
          ))
        )}
      </article>
      {/* The copy text: the copy button's source, and selectable without JavaScript. */}
      <details className="text-sm">
        <summary className="cursor-pointer text-slate-600">{t("editor.copyHint")}</summary>
        <textarea
          id="letter-copy-source"
          readOnly
          rows={10}
          className="mt-2 w-full rounded border border-slate-300 p-2 font-mono text-xs"
          data-copy-source
          defaultValue={copyText}
        />
      </details>
    </div>
  );
}

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
  const scope = refine?.scope ?? (plain ? "__full__" : "__all__");
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
            {plain ? null : <option value="__all__">{t("refine.allSections")}</option>}
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
            value="refine"
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
              value="savePrompt"
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
                value="usePrompt"
                className="rounded px-2 py-0.5 text-xs text-brand-700 hover:bg-brand-50"
                data-action="use-prompt"
                data-prompt={p.text}
              >
                {t("prompts.use")}
              </button>
              <button
                type="submit"
                name="intent"
                value="deletePrompt"
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
