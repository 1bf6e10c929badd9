import { Form, Link } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { Language } from "~/i18n";
import { ADDITIONAL_CONTEXT_MAX, ADDITIONAL_CONTEXT_WARN_ABOVE } from "~/models/recording-rules";
import { ConsentFields } from "./consent-fields";
import { RecordPanel, type LiveMode, type LiveResume } from "./record-panel";
import { button, quiet } from "./shared";
import { TemplateRadio } from "~/components/forms/template-radio";

type TemplateChoice = { id: string; name: string };

/** SPEC §2 upload panel: collapsible, two tabs; the upload is a plain multipart form. */
export function UploadPanel({
  tab,
  language,
  templates,
  patientRecords,
  resume = null,
  liveMode = "relay",
  autoStart = true,
  consentRequired = false,
}: {
  tab: "record" | "upload";
  language: Language;
  templates: { system: TemplateChoice[]; custom: TemplateChoice[] };
  /** Only when disable_mfiles is 0. */
  patientRecords: boolean;
  /** An unfinished live session to offer on the record tab. */
  resume?: LiveResume | null;
  /** How live audio travels (SPEECH_LIVE_MODE, ADR 0013). */
  liveMode?: LiveMode;
  /** AUTO_START_TRANSCRIPTION: whether an upload is transcribed without a click. */
  autoStart?: boolean;
  /** CONSENT_REQUIRED: the patient's consent must be confirmed before audio is accepted. */
  consentRequired?: boolean;
}) {
  const { t } = useTranslation("recordings");
  const tabClass = (active: boolean) =>
    `rounded-t-md px-4 py-2 text-sm font-medium ${active ? "bg-white text-brand-700" : "text-slate-600 hover:text-slate-900"}`;
  return (
    <details open className="mb-8 rounded-lg border border-slate-200 bg-slate-100" data-audio-panel>
      <summary className="cursor-pointer px-4 py-3 font-medium">{t("audio.panel")}</summary>
      <nav className="flex gap-1 px-3" aria-label={t("audio.panel")}>
        <Link
          to="/?tab=record"
          className={tabClass(tab === "record")}
          aria-current={tab === "record" ? "page" : undefined}
        >
          {t("audio.tabRecord")}
        </Link>
        <Link to="/" className={tabClass(tab === "upload")} aria-current={tab === "upload" ? "page" : undefined}>
          {t("audio.tabUpload")}
        </Link>
      </nav>
      <div className="rounded-b-lg bg-white p-4">
        {tab === "record" ? (
          <RecordPanel
            language={language}
            templates={templates}
            resume={resume}
            mode={liveMode}
            consentRequired={consentRequired}
          />
        ) : (
          <Form
            method="post"
            encType="multipart/form-data"
            className="space-y-4"
            data-upload-form
            {...Object.fromEntries(
              (
                [
                  "unsupported",
                  "empty",
                  "tooLarge",
                  "network",
                  "timeout",
                  "status",
                  "invalidResponse",
                  "generic",
                  "loadingTemplates",
                  "templatesFailed",
                  "retry",
                  "paused",
                  "dismiss",
                ] as const
              ).map((name) => [`data-msg-${name.toLowerCase()}`, t(`upload.${name}`)]),
            )}
            data-msg-system={t("audio.systemTemplates")}
            data-msg-custom={t("audio.customTemplates")}
          >
            <label
              className="block rounded-md border-2 border-dashed border-slate-300 p-4 text-sm font-medium text-slate-700"
              data-drop-zone
            >
              {t("audio.file")}
              <span className="mt-1 block text-xs font-normal text-slate-500">{t("upload.dropHint")}</span>
              <input
                type="file"
                name="audio"
                required
                accept=".mp3,.wav,audio/mpeg,audio/wav,audio/x-wav"
                className="mt-2 block w-full text-sm"
              />
            </label>
            <label className="block text-sm font-medium text-slate-700 md:w-1/2">
              {t("audio.language")}
              <select
                name="language"
                defaultValue={language === "en" ? "en-GB" : "de-DE"}
                className="mt-1 block w-full rounded border border-slate-300 px-2 py-1.5"
              >
                <option value="de-DE">{t("audio.languageDe")}</option>
                <option value="en-GB">{t("audio.languageEn")}</option>
              </select>
            </label>
            {/* Inline without JavaScript; upload.js turns it into the template dialog that opens once a valid
                file is chosen (SPEC §2). */}
            <div className="space-y-4" data-template-dialog-body>
              <h2 id="upload-dialog-title" className="text-lg font-semibold" hidden data-dialog-only>
                {t("upload.dialogTitle")}
              </h2>
              <fieldset className="text-sm">
                <legend className="font-medium text-slate-700">{t("audio.template")}</legend>
                <div
                  className={`mt-1 grid gap-4 ${templates.custom.length ? "md:grid-cols-2" : ""}`}
                  data-template-choice
                >
                  {(
                    [
                      ["system", templates.system],
                      ["custom", templates.custom],
                    ] as const
                  )
                    .filter(([, list]) => list.length > 0)
                    .map(([kind, list]) => (
                      <div key={kind}>
                        <p className="mb-1 text-xs tracking-wide text-slate-500 uppercase">
                          {kind === "system" ? t("audio.systemTemplates") : t("audio.customTemplates")}
                        </p>
                        {list.map((tpl, i) => (
                          <TemplateRadio key={tpl.id} template={tpl} defaultChecked={kind === "system" && i === 0} />
                        ))}
                      </div>
                    ))}
                </div>
              </fieldset>
              <ConsentFields required={consentRequired} />
              <fieldset className="text-sm">
                <legend className="font-medium text-slate-700">{t("audio.mode")}</legend>
                <label className="mt-1 flex items-center gap-2">
                  <input type="radio" name="mode" value="transcript_and_letter" defaultChecked />{" "}
                  {t("audio.modeLetter")}
                </label>
                <label className="flex items-center gap-2">
                  <input type="radio" name="mode" value="transcript" /> {t("audio.modeTranscript")}
                </label>
              </fieldset>
              <details className="text-sm">
                <summary className="cursor-pointer font-medium text-slate-700">{t("audio.context")}</summary>
                <label className="mt-2 block">
                  <span className="flex justify-between text-xs text-slate-500">
                    {t("audio.contextHelp")}
                    <span
                      data-counter
                      data-max={ADDITIONAL_CONTEXT_MAX}
                      data-warn-above={ADDITIONAL_CONTEXT_WARN_ABOVE}
                    >
                      0/{ADDITIONAL_CONTEXT_MAX}
                    </span>
                  </span>
                  <textarea
                    name="additionalContext"
                    rows={4}
                    className="mt-1 block w-full rounded border border-slate-300 px-2 py-1.5"
                  />
                </label>
                <label className="mt-3 block text-xs text-slate-600">
                  {t("audio.contextPdfs")}
                  <input
                    type="file"
                    name="contextPdf"
                    accept="application/pdf,.pdf"
                    multiple
                    className="mt-1 block w-full text-sm"
                  />
                </label>
                {patientRecords ? (
                  <label className="mt-3 block text-xs text-slate-600">
                    {t("audio.patientId")}
                    <input
                      name="patientId"
                      pattern="[A-Za-z0-9][A-Za-z0-9\-]{0,31}"
                      maxLength={32}
                      autoComplete="off"
                      className="mt-1 block w-full rounded border border-slate-300 px-2 py-1.5 text-sm"
                    />
                  </label>
                ) : null}
              </details>
              <div className="flex flex-wrap gap-2">
                <button type="submit" className={button} data-upload-start>
                  {t("audio.submit")}
                </button>
                <button type="button" className={quiet} hidden data-dialog-only data-dialog-cancel>
                  {t("audio.cancel")}
                </button>
              </div>
            </div>
            <progress max={100} value={0} hidden aria-label={t("upload.progress")} className="w-full" />
            <div className="space-y-2 text-sm" aria-live="polite" hidden data-upload-paused>
              <p data-upload-status />
              <div className="flex flex-wrap gap-2">
                <button type="button" className={button} data-upload-resume>
                  {t("upload.resume")}
                </button>
                <button type="button" className={quiet} data-upload-abort>
                  {t("upload.abort")}
                </button>
              </div>
            </div>
            <p className="text-xs text-slate-500" data-upload-note>
              {t(autoStart ? "audio.afterUploadAuto" : "audio.afterUploadManual")}
            </p>
          </Form>
        )}
      </div>
    </details>
  );
}
