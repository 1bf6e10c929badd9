import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { quiet } from "~/components/ui/buttons";
import { liveMessageAttributes } from "~/live/client/messages";

const DICTATION_STATES = ["disconnected", "connecting", "connected", "disconnecting", "error"] as const;

/**
 * Dictation into the `[data-instruction]` field of the button's form (issue 7; the letter editor's refinement
 * panel and the chat): hidden without JavaScript; app/pe/voice.js shows it and loads public/live/dictation.js on
 * the first click, which then drives it through `data-state` (SPEC §4) and disables the field while dictating.
 * Used through DictationField, which adds `[data-dictation-partial]` and `[data-dictation-error]` for what it reports.
 */
function VoiceInput() {
  const { t, i18n } = useTranslation("live");
  return (
    <button
      type="button"
      className={`${quiet} disabled:opacity-50`}
      hidden
      aria-pressed="false"
      data-voice-input
      data-state="disconnected"
      data-language={i18n.language === "en" ? "en" : "de"}
      {...liveMessageAttributes(t)}
      {...Object.fromEntries(DICTATION_STATES.map((state) => [`data-msg-label-${state}`, t(`dictation.${state}`)]))}
    >
      {t("dictation.disconnected")}
    </button>
  );
}

/**
 * A text field to type or dictate into (the `[data-instruction]` of its form), the form's actions beside the
 * voice button, and below them where the dictation client shows what it hears (provisional) and what went wrong.
 */
export function DictationField({
  label,
  children,
  ...field
}: {
  label: ReactNode;
  children: ReactNode;
  name: string;
  rows: number;
  maxLength: number;
  defaultValue: string;
  placeholder: string;
  className: string;
}) {
  return (
    <>
      <label className="block text-sm font-medium text-slate-700">
        {label}
        <textarea {...field} data-instruction />
      </label>
      <div className="flex flex-wrap gap-2">
        {children}
        <VoiceInput />
      </div>
      <p className="text-sm text-slate-500 italic" aria-live="polite" hidden data-dictation-partial />
      <p role="alert" className="text-sm text-red-700" hidden data-dictation-error />
    </>
  );
}
