export type RecordingView = {
  key: string;
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
  letterQueued: boolean;
};

export const button = "rounded-md bg-brand-600 px-4 py-2 text-sm font-medium text-white hover:bg-brand-700";
export const quiet = "rounded-md border border-slate-300 px-3 py-1.5 text-sm text-slate-700 hover:bg-slate-50";
