import { Form } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { button, quiet } from "~/components/ui/buttons";
import type { EditorActionData, EditorSection, SentenceEvidence } from "./types";
import { INTENT } from "./schema";

// The letter itself: the structured form or the read-only text. Without JavaScript every control is a plain
// form; letter.js adds copy, Save-only-when-changed and a warning before leaving unsaved text (ADR 0006). The
// refinement side panel is in refine-panel.tsx.

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

/**
 * The evidence of the sentence at the caret (issue 24), filled in by letter-evidence.js: its status, where the
 * transcript says it (a link to that paragraph) and the audio from that second. Hidden without JavaScript, where
 * the check (`?check=1`) shows the same for every sentence. The status styles are the check's.
 */
function SentencePanel({ evidence }: { evidence: SentenceEvidence }) {
  const { t } = useTranslation("letters");
  return (
    <aside
      hidden
      aria-live="polite"
      aria-label={t("editor.sentenceEvidence.title")}
      className="mt-2 rounded border border-slate-200 bg-slate-50 px-2 py-1.5 text-xs"
      data-sentence-panel
      data-evidence={JSON.stringify(evidence)}
      data-label-supported={t("evidence.status.supported")}
      data-label-unsupported={t("evidence.status.unsupported")}
      data-label-doctor={t("evidence.status.doctor")}
      data-label-changed={t("editor.sentenceEvidence.changed")}
      data-label-none={t("evidence.noSources")}
      data-label-source={t("evidence.source", { speaker: "{{speaker}}", time: "{{time}}" })}
      data-label-open={t("evidence.openInTranscript")}
      data-label-listen={t("evidence.listen", { time: "{{time}}" })}
    >
      <p className="flex flex-wrap items-center gap-2">
        <span className="font-medium text-slate-700">{t("editor.sentenceEvidence.title")}</span>
        <span
          className="rounded-full px-2 py-0.5 data-[status=changed]:bg-amber-100 data-[status=changed]:text-amber-900 data-[status=doctor]:bg-sky-100 data-[status=doctor]:text-sky-900 data-[status=supported]:bg-emerald-100 data-[status=supported]:text-emerald-900 data-[status=unsupported]:bg-red-100 data-[status=unsupported]:text-red-900"
          data-panel-status
        />
      </p>
      <ul className="mt-1 space-y-1.5" data-panel-sources />
      <audio controls preload="none" hidden className="mt-1 h-8 w-full max-w-xs" data-panel-audio />
    </aside>
  );
}

/** SPEC §2 structured view: one labelled, copyable box per section, saved together as a new version. */
export function StructuredForm({
  sections,
  version,
  busy,
  saveError,
  evidence,
}: {
  sections: EditorSection[];
  version: number;
  busy: boolean;
  saveError: EditorActionData | null;
  /** The stored sentences' evidence, for the caret panel; null when there is none to show. */
  evidence: SentenceEvidence | null;
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
      <input type="hidden" name="intent" value={INTENT.save} />
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
      {evidence && !submitted ? <SentencePanel evidence={evidence} /> : null}
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
