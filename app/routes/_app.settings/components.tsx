import type { SubmissionResult } from "@conform-to/react";
import { Form, Link } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { StoredElement } from "~/models/schema";
import type { TemplateLanguage } from "~/models/template-rules";
import { StructureEditor, useStructureForm } from "./editor";
import { INTENT } from "./schema";

export type CardTemplate = {
  id: string;
  name: string;
  description: string;
  isSystem: boolean;
  isCustomized: boolean;
  organizationLabel: string | null;
  elements: StoredElement[];
  prompt: string;
};

/** A collapsible template with its inline structure editor (SPEC §2, §4 "Template card"). */
export function TemplateCard({
  template,
  language,
  open,
  draft,
}: {
  template: CardTemplate;
  language: TemplateLanguage;
  open: boolean;
  draft?: SubmissionResult<string[]>;
}) {
  const { t } = useTranslation("templates");
  const dirty = Boolean(draft);
  const form = useStructureForm(template, draft);
  return (
    <details
      id={`tpl-${template.id}`}
      open={open || dirty}
      className="group rounded-lg border border-slate-200 bg-white"
      data-template={template.id}
      data-dirty={dirty ? "true" : "false"}
    >
      <summary className="flex cursor-pointer list-none items-center gap-3 px-4 py-3">
        <span className="text-slate-400 transition-transform group-open:rotate-90" aria-hidden="true">
          ▸
        </span>
        <span className="font-medium">{template.name}</span>
        {template.organizationLabel ? (
          <span className="rounded-full bg-slate-100 px-2 py-0.5 text-xs text-slate-600">
            {template.organizationLabel}
          </span>
        ) : null}
        {template.isCustomized ? (
          <span className="rounded-full bg-brand-50 px-2 py-0.5 text-xs text-brand-700">
            {t("settings.customized")}
          </span>
        ) : null}
        <span className="ml-auto text-xs text-slate-500">
          {t("settings.elementCount", { count: template.elements.length })}
        </span>
        <span
          data-dirty-indicator
          hidden={!dirty}
          className="rounded-full bg-amber-100 px-2 py-0.5 text-xs font-medium text-amber-800"
        >
          {t("settings.unsavedChanges")}
        </span>
      </summary>
      <div className="border-t border-slate-100 px-4 py-4">
        {template.description ? <p className="mb-4 text-sm text-slate-600">{template.description}</p> : null}
        <StructureEditor form={form} template={template} language={language} />
        <div className="mt-3 flex flex-wrap gap-2 border-t border-slate-100 pt-3">
          <Link
            to={`edit/${encodeURIComponent(template.id)}?language=${language}`}
            className="rounded-md border border-slate-300 px-3 py-2 text-sm text-slate-700 hover:bg-slate-50"
          >
            {t("settings.openEditor")}
          </Link>
          {template.isSystem ? (
            <Form method="post">
              <input type="hidden" name="intent" value={INTENT.reset} />
              <input type="hidden" name="templateId" value={template.id} />
              <input type="hidden" name="language" value={language} />
              <button
                type="submit"
                className="rounded-md border border-slate-300 px-3 py-2 text-sm text-slate-700 hover:bg-slate-50"
                disabled={!template.isCustomized && !dirty}
              >
                {t("settings.reset")}
              </button>
            </Form>
          ) : null}
          <Link
            to={`remove/${encodeURIComponent(template.id)}?language=${language}`}
            className="rounded-md border border-red-200 px-3 py-2 text-sm text-red-700 hover:bg-red-50"
          >
            {template.isSystem ? t("settings.removeFromCollection") : t("settings.deleteTemplate")}
          </Link>
        </div>
      </div>
    </details>
  );
}

/** The AI Learning toggle = the user's data-use consent (rag_agreed). */
export function RagToggle({ agreed, language }: { agreed: boolean; language: TemplateLanguage }) {
  const { t } = useTranslation("templates");
  return (
    <section
      id="ai-learning"
      aria-labelledby="ai-learning-title"
      className="rounded-lg border border-slate-200 bg-white p-4"
    >
      <h2 id="ai-learning-title" className="text-lg font-medium">
        {t("settings.aiLearning")}
      </h2>
      <p className="mt-2 text-sm text-slate-700">{t("settings.aiLearningExplained")}</p>
      <p className="mt-1 text-sm text-slate-700">{t("settings.aiLearningWithdraw")}</p>
      <Form method="post" className="mt-3 flex items-center gap-3">
        <input type="hidden" name="intent" value={INTENT.rag} />
        <input type="hidden" name="language" value={language} />
        <input type="hidden" name="ragAgreed" value={agreed ? "false" : "true"} />
        <span className="text-sm" data-rag-state={agreed ? "on" : "off"}>
          {agreed ? t("settings.aiLearningOn") : t("settings.aiLearningOff")}
        </span>
        <button
          type="submit"
          role="switch"
          aria-checked={agreed}
          className="rounded-md border border-brand-600 px-3 py-1.5 text-sm font-medium text-brand-700 hover:bg-brand-50"
        >
          {agreed ? t("settings.aiLearningTurnOff") : t("settings.aiLearningTurnOn")}
        </button>
      </Form>
    </section>
  );
}

/** A section whose one link opens a dialog route over the settings page (the dialog does the work). */
function DialogSection(props: { id: string; title: string; body: string; to: string; open: string; danger?: boolean }) {
  const tone = props.danger
    ? { section: "border-red-200", link: "border-red-600 text-red-700 hover:bg-red-50" }
    : { section: "border-slate-200", link: "border-brand-600 text-brand-700 hover:bg-brand-50" };
  return (
    <section aria-labelledby={`${props.id}-title`} className={`mt-8 rounded-lg border bg-white p-4 ${tone.section}`}>
      <h2 id={`${props.id}-title`} className="text-lg font-medium">
        {props.title}
      </h2>
      <p className="mt-2 text-sm text-slate-700">{props.body}</p>
      <Link
        to={props.to}
        className={`mt-3 inline-block rounded-md border px-3 py-1.5 text-sm font-medium ${tone.link}`}
        data-action={props.id}
      >
        {props.open}
      </Link>
    </section>
  );
}

/** "Active sessions": the way to the list of sessions (_app.settings.sessions.tsx). */
export function SessionsSection() {
  const { t } = useTranslation("account");
  const text = { title: t("sessions.sectionTitle"), body: t("sessions.sectionBody"), open: t("sessions.open") };
  return <DialogSection id="active-sessions" to="/settings/sessions" {...text} />;
}

/** "My vocabulary": the way to the doctor's own terms (_app.settings.vocabulary.tsx). */
export function VocabularySection() {
  const { t } = useTranslation("account");
  const text = { title: t("vocabulary.sectionTitle"), body: t("vocabulary.sectionBody"), open: t("vocabulary.open") };
  return <DialogSection id="my-vocabulary" to="/settings/vocabulary" {...text} />;
}

/** "Letterhead": the way to the doctor's letterhead for exported letters (_app.settings.letterhead.tsx). */
export function LetterheadSection() {
  const { t } = useTranslation("account");
  const text = { title: t("letterhead.sectionTitle"), body: t("letterhead.sectionBody"), open: t("letterhead.open") };
  return <DialogSection id="letterhead" to="/settings/letterhead" {...text} />;
}

/** "Delete account": the way to the confirmation dialog (_app.settings.account.tsx). */
export function AccountSection() {
  const { t } = useTranslation("account");
  const text = { title: t("section.title"), body: t("section.body"), open: t("section.open") };
  return <DialogSection id="delete-account" to="/settings/account" danger {...text} />;
}
