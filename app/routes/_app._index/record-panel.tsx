import { Link } from "@remix-run/react";
import { Fragment } from "react";
import { useTranslation } from "react-i18next";
import type { Language } from "~/i18n";
import { liveMessageAttributes } from "~/live/client/messages";
import { formatDuration, speakerNumber } from "~/live/client/transcript";
import { ADDITIONAL_CONTEXT_MAX, ADDITIONAL_CONTEXT_WARN_ABOVE } from "~/models/recording-rules";
import { ConsentFields } from "./consent-fields";
import { button, quiet } from "./shared";

type TemplateChoice = { id: string; name: string };

/** An unfinished live session the server still holds (found after a reload): offered to continue or save. */
export type LiveResume = {
  id: string;
  seconds: number;
  transcript: Array<{ speaker: string; text: string }>;
  /** The session's recognition language, when the server tells it. */
  language?: "de" | "en";
  /** Recorded while the speech model was downloading: saved without text, transcribed afterwards. */
  transcribeLater?: boolean;
};

/** relay: audio through Skribent (sessions kept on the server); direct: the browser talks to the provider. */
export type LiveMode = "relay" | "direct";

const STATES = ["loading", "ready", "connecting", "listening", "stopping", "paused", "saving", "error"] as const;
const field = "mt-1 block w-full rounded border border-slate-300 px-2 py-1.5 text-sm";

/**
 * SPEC §2 live recording widget, rendered by the server and driven by public/live/recorder.js (ADR 0013)
 * through its data attributes; app/pe/record.js shows it and loads the controller. Without JavaScript only
 * the explanation shows, with the way to the upload form.
 */
export function RecordPanel({
  language,
  templates,
  resume = null,
  mode = "relay",
  consentRequired = false,
}: {
  language: Language;
  templates: { system: TemplateChoice[]; custom: TemplateChoice[] };
  resume?: LiveResume | null;
  mode?: LiveMode;
  consentRequired?: boolean;
}) {
  const { t } = useTranslation("live");
  const sessionLanguage = resume?.language ?? language;
  return (
    <section
      aria-label={t("recorder.title")}
      data-live-recorder
      data-state="loading"
      data-live-mode={mode}
      data-resume-id={resume?.id}
      data-resume-seconds={resume?.seconds}
      data-resume-later={resume?.transcribeLater ? "" : undefined}
      {...liveMessageAttributes(t)}
      {...Object.fromEntries(STATES.map((state) => [`data-msg-label-${state}`, t(`labels.${state}`)]))}
      data-msg-speaker={t("recorder.speaker")}
      data-msg-speaker-unknown={t("recorder.speakerUnknown")}
      data-msg-system-templates={t("recorder.systemTemplates")}
      data-msg-custom-templates={t("recorder.customTemplates")}
    >
      <p className="text-sm text-slate-700" data-live-nojs>
        {t("recorder.nojs")}{" "}
        <Link to="/" className="font-medium text-brand-700 underline">
          {t("recorder.nojsLink")}
        </Link>
      </p>
      <div className="space-y-4" hidden data-live-widget>
        <div className="flex flex-wrap items-center gap-3">
          <button type="button" className={`${button} disabled:opacity-50`} disabled data-live-action="start">
            {t("recorder.start")}
          </button>
          <button
            type="button"
            className="rounded-md bg-red-600 px-4 py-2 text-sm font-medium text-white hover:bg-red-700 disabled:opacity-50"
            hidden
            data-live-action="stop"
          >
            {t("recorder.stop")}
          </button>
          <span className="text-sm font-medium text-slate-700" role="status" aria-live="polite" data-live-label>
            {t("labels.loading")}
          </span>
          <span className="text-sm text-slate-500 tabular-nums" data-live-elapsed>
            {formatDuration(resume?.seconds ?? 0)}
          </span>
        </div>
        <p className="text-xs text-slate-500" data-live-tip>
          {t("recorder.tip")}
        </p>
        <p
          className="rounded-md border border-sky-300 bg-sky-50 px-4 py-3 text-sm text-sky-900"
          role="status"
          hidden={!resume?.transcribeLater}
          data-live-later
        >
          {t("recorder.transcribeLater")}
        </p>
        <div
          className="flex items-start justify-between gap-4 rounded-md border border-red-300 bg-red-50 px-4 py-3"
          role="alert"
          hidden
          data-live-error
        >
          <p className="text-sm text-red-900" data-live-error-text />
          <button type="button" className={quiet} data-live-action="retry">
            {t("recorder.retry")}
          </button>
        </div>
        <div className="space-y-2 rounded-md border border-amber-300 bg-amber-50 px-4 py-3" hidden data-live-paused>
          <p className="text-sm text-amber-900">
            {resume ? t("recorder.resumeNote", { duration: formatDuration(resume.seconds) }) : t("recorder.pausedNote")}
          </p>
          <div className="flex flex-wrap gap-2">
            <button type="button" className={`${button} disabled:opacity-50`} data-live-action="save">
              {t("recorder.save")}
            </button>
            <button type="button" className={`${quiet} disabled:opacity-50`} data-live-action="continue">
              {t("recorder.continue")}
            </button>
            <button
              type="button"
              className="rounded-md border border-red-300 px-3 py-1.5 text-sm text-red-700 hover:bg-red-50 disabled:opacity-50"
              data-live-action="discard"
              data-msg-confirm={t("recorder.discardConfirm")}
            >
              {t("recorder.discard")}
            </button>
          </div>
        </div>
        <div
          className="flex items-start justify-between gap-4 rounded-md border border-red-300 bg-red-50 px-4 py-3"
          role="alert"
          hidden
          data-live-save-error
        >
          <p className="text-sm text-red-900" data-live-save-error-text />
          <button type="button" className="text-sm text-red-900 underline" data-live-action="dismiss">
            {t("recorder.dismiss")}
          </button>
        </div>
        <div className="grid gap-4 md:grid-cols-2" data-live-options>
          <label className="block text-sm font-medium text-slate-700">
            {t("recorder.language")}
            <select name="language" defaultValue={sessionLanguage} className={field}>
              <option value="de">{t("recorder.languageDe")}</option>
              <option value="en">{t("recorder.languageEn")}</option>
            </select>
          </label>
          <label className="block text-sm font-medium text-slate-700">
            {t("recorder.template")}
            <select name="template_id" className={field}>
              {(
                [
                  ["systemTemplates", templates.system],
                  ["customTemplates", templates.custom],
                ] as const
              )
                .filter(([, list]) => list.length > 0)
                .map(([group, list]) => (
                  <optgroup key={group} label={t(`recorder.${group}`)}>
                    {list.map((tpl) => (
                      <option key={tpl.id} value={tpl.id}>
                        {tpl.name}
                      </option>
                    ))}
                  </optgroup>
                ))}
            </select>
          </label>
          <div className="md:col-span-2">
            <ConsentFields required={consentRequired} />
          </div>
          <fieldset className="text-sm">
            <legend className="font-medium text-slate-700">{t("recorder.mode")}</legend>
            <label className="mt-1 flex items-center gap-2">
              <input type="radio" name="transcription_mode" value="transcript_and_letter" defaultChecked />
              {t("recorder.modeLetter")}
            </label>
            <label className="flex items-center gap-2">
              <input type="radio" name="transcription_mode" value="transcript" />
              {t("recorder.modeTranscript")}
            </label>
          </fieldset>
          <details className="text-sm">
            <summary className="cursor-pointer font-medium text-slate-700">{t("recorder.context")}</summary>
            <label className="mt-2 block">
              <span className="flex justify-between text-xs text-slate-500">
                {t("recorder.contextHelp")}
                <span data-counter data-max={ADDITIONAL_CONTEXT_MAX} data-warn-above={ADDITIONAL_CONTEXT_WARN_ABOVE}>
                  0/{ADDITIONAL_CONTEXT_MAX}
                </span>
              </span>
              <textarea name="additional_context" rows={4} maxLength={ADDITIONAL_CONTEXT_MAX} className={field} />
            </label>
          </details>
        </div>
        <div>
          <h3 className="text-sm font-medium text-slate-700">{t("recorder.transcript")}</h3>
          <div
            className="mt-1 max-h-96 overflow-y-auto rounded-md border border-slate-200 bg-slate-50 p-3 text-sm leading-relaxed"
            aria-live="polite"
            data-live-transcript
          >
            {/* The markup recorder.js appends: one inline element per segment, a label where the speaker changes. */}
            {resume?.transcript.map((segment, i) => {
              const n = speakerNumber(segment.speaker);
              const labelled = segment.speaker && resume.transcript[i - 1]?.speaker !== segment.speaker;
              return (
                <Fragment key={i}>
                  {labelled ? (
                    <strong className={`block font-medium text-slate-600 ${i > 0 ? "mt-2" : ""}`} data-speaker-label>
                      {n === null ? t("recorder.speakerUnknown") : t("recorder.speakerNumber", { n })}
                    </strong>
                  ) : null}
                  <span data-speaker={segment.speaker}>{`${segment.text} `}</span>
                </Fragment>
              );
            })}
          </div>
          <p
            className="mt-1 text-xs text-slate-500"
            hidden={Boolean(resume?.transcript.length)}
            data-live-transcript-empty
          >
            {t("recorder.transcriptEmpty")}
          </p>
        </div>
      </div>
    </section>
  );
}
