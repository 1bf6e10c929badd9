import { useTranslation } from "react-i18next";

// SPEC §4 letter status, shared by the Arztbriefe list, the Transcriptions list and the transcript viewer.
// While a letter is processing the label carries a CSS spinner and `data-processing`, which letter.js (and the
// noscript refresh) use to refresh the list every 5 s.

export type LetterStatusView = {
  status: "pending" | "processing" | "completed" | "failed" | "structure_error";
  /** The status says processing, or a letter job (create or redo) is queued or running. */
  processing: boolean;
  /** Why the last letter job failed (an i18n key), e.g. a failed redo: 'Template switch failed; …'. */
  errorKey: string | null;
};

export const NOT_PATIENT_CONVERSATION = "letters:errors.notPatientConversation";

export function Spinner({ label }: { label?: string }) {
  return (
    <span
      className="inline-block size-3.5 shrink-0 animate-spin rounded-full border-2 border-slate-300 border-t-brand-600"
      role={label ? "img" : undefined}
      aria-label={label}
      aria-hidden={label ? undefined : true}
      data-spinner
    />
  );
}

export function LetterStatusLabel({ view }: { view: LetterStatusView }) {
  const { t } = useTranslation("letters");
  const failed = view.status === "failed" || view.status === "structure_error";
  const shown = view.processing ? "processing" : view.status;
  return (
    <span
      className="block text-sm"
      data-letter-status={shown}
      data-processing={view.processing ? "" : undefined}
      aria-busy={view.processing || undefined}
    >
      <span className={`inline-flex items-center gap-2 ${failed ? "font-medium text-red-700" : ""}`}>
        {view.processing ? <Spinner /> : null}
        {t(`common:status.letter.${shown}`)}
      </span>
      {view.errorKey && !view.processing ? (
        view.errorKey === NOT_PATIENT_CONVERSATION ? (
          // SPEC §8: not a patient conversation is a dedicated notice, not a generic error.
          <span
            className="mt-1 block rounded border border-amber-300 bg-amber-50 px-2 py-1 text-xs text-amber-900"
            data-not-patient
          >
            {t(NOT_PATIENT_CONVERSATION)}
          </span>
        ) : (
          <span className="block text-xs text-red-700" data-job-error>
            {t(view.errorKey)}
          </span>
        )
      ) : null}
    </span>
  );
}
