import type { WordDiffOp } from "~/services/letters/letter-content";

// What the editor's loader and action hand to its components (no server imports: the components use them).

export type DiffSection = {
  title: string;
  status: "added" | "removed" | "changed" | "unchanged";
  /** Word diff of the section: joined "same"+"del" give the old text, "same"+"add" the new one. */
  ops: WordDiffOp[];
};

export type EditorSection = { title: string; text: string; noInformation: boolean };

export type SavedPromptView = { id: string; title: string; text: string };

/** Which form answered (failures and the no-JavaScript prompt fill re-render the page with what was sent). */
export type EditorActionData = {
  form: "save" | "refine" | "prompts" | "proposal" | "versions" | "check" | "regenerate";
  error?: string;
  /** The letter changed since the doctor loaded it: their text is re-rendered, never lost. */
  conflict?: boolean;
  submitted?: { titles: string[]; texts: string[] };
  query?: string;
  scope?: string;
  promptError?: string;
  promptTitle?: string;
  promptText?: string;
};

/**
 * The evidence of each sentence of the structured editor, for its caret panel (sentence-evidence.server.ts): per
 * section (in the form's order) the sentences as stored, with their status and source ids; the cited segments once.
 */
export type SentenceEvidence = {
  transcriptPath: string;
  audioUrl: string | null;
  /** Segment id → [speaker, start in seconds, words]. */
  segments: Record<string, [string, number, string]>;
  sections: Array<
    Array<{ text: string; status: "supported" | "unsupported" | "neutral" | "doctor"; sources: string[] }>
  >;
};
