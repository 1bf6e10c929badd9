export type RecordingView = {
  key: string;
  /** The patient's consent as a sentence (consentSummary); null: "Einwilligung nicht dokumentiert". */
  consent: string | null;
  /** "Audio wird am 27.12.2026 gelöscht": its letter is released and audio retention is on. */
  audioDeletedOn: string | null;
  name: string;
  /** The name the user gave, if any ("Recording #n" is only shown). */
  displayName: string | null;
  fileName: string;
  createdAt: string;
  status: string;
  tags: string[];
  canReset: boolean;
  /** SPEC §4: the transcribe button is disabled while processing and once completed. */
  canTranscribe: boolean;
  /** Translated reason of a failed transcription. */
  failure: string | null;
  /** Translated "waiting for the model (43 %)" while its job waits for a model that is downloading. */
  waiting: string | null;
  letterStatus: "pending" | "processing" | "completed" | "failed" | "structure_error" | null;
  /** The retention sweep deleted the audio: nothing to play, transcript and letter stay. */
  audioDeleted: boolean;
};

export { button, quiet } from "~/components/ui/buttons";
