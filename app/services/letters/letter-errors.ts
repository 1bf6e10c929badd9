// Expected failures of letter generation and refinement. `message` is for logs and is SPEC's exact wording
// where SPEC has one (§7 keeps 'Dies ist kein Patientengespräch' and 'Invalid medical letter structure' out
// of client retries); `userMessageKey` is what the clinician sees. Retrying cannot change any of these
// outcomes, so the job layer must not retry them — unlike transient LlmErrors, which pass through untouched.

export type LetterGenerationErrorCode = "not_patient_conversation" | "structure_error" | "template_switch_failed";

const GENERATION_ERRORS: Record<LetterGenerationErrorCode, { message: string; userMessageKey: string }> = {
  not_patient_conversation: {
    message: "Dies ist kein Patientengespräch",
    userMessageKey: "letters:errors.notPatientConversation",
  },
  structure_error: { message: "Invalid medical letter structure", userMessageKey: "letters:errors.invalidStructure" },
  template_switch_failed: {
    message: "Template switch failed; this does not seem to be a structured document or dictation",
    userMessageKey: "letters:errors.templateSwitchFailed",
  },
};

export class LetterGenerationError extends Error {
  readonly userMessageKey: string;
  constructor(
    readonly code: LetterGenerationErrorCode,
    options: { detail?: string; cause?: unknown } = {},
  ) {
    const { message, userMessageKey } = GENERATION_ERRORS[code];
    // The detail names what was wrong (a missing key, an unknown value), never the model's text.
    super(options.detail ? `${message}: ${options.detail}` : message, { cause: options.cause });
    this.name = "LetterGenerationError";
    this.userMessageKey = userMessageKey;
  }
}

export type RefineErrorCode =
  "instruction_required" | "instruction_too_long" | "too_long_to_refine" | "nothing_to_refine";

const REFINE_ERRORS: Record<RefineErrorCode, { message: string; userMessageKey: string }> = {
  instruction_required: {
    message: "Refinement instruction is required",
    userMessageKey: "letters:errors.instructionRequired",
  },
  instruction_too_long: {
    message: "Refinement instruction exceeds 500 characters",
    userMessageKey: "letters:errors.instructionTooLong",
  },
  too_long_to_refine: {
    message: "The letter text is too long to refine with this language model",
    userMessageKey: "letters:errors.tooLongToRefine",
  },
  nothing_to_refine: { message: "There is no letter text to refine", userMessageKey: "letters:errors.nothingToRefine" },
};

export class RefineError extends Error {
  readonly userMessageKey: string;
  constructor(readonly code: RefineErrorCode) {
    const { message, userMessageKey } = REFINE_ERRORS[code];
    super(message);
    this.name = "RefineError";
    this.userMessageKey = userMessageKey;
  }
}
