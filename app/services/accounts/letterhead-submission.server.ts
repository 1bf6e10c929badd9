import type { SubmissionResult } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import {
  LETTERHEAD_INTENT,
  LETTERHEAD_LIMITS,
  letterheadActionSchema,
  letterheadErrorValues,
  type LetterheadFields,
} from "~/components/letterhead/schema";
import type { Language } from "~/i18n";
import { DomainError } from "../web/domain-error.server";
import { getFixedTFor } from "../web/i18n.server";
import { readLetterheadForm } from "./letterhead-form.server";
import type { LogoUpload } from "./letterhead.server";

// One post to a letterhead page (issue 25), the doctor's own or the practice's: read, parsed by the form's schema,
// and handed to the page's save, remove-logo or remove. A refusal comes back with every message translated into the
// reader's language and every typed field as it was typed (a browser never keeps a chosen file: the logo's message
// asks for it again). Nothing is written when anything is refused.

export type LetterheadIntent = (typeof LETTERHEAD_INTENT)[keyof typeof LETTERHEAD_INTENT];

export type LetterheadDoors = {
  save: (fields: LetterheadFields, logo: LogoUpload) => Promise<unknown>;
  removeLogo: () => Promise<boolean>;
  remove: () => Promise<boolean>;
};

type Reply = SubmissionResult<string[]>;

export type LetterheadOutcome =
  | { kind: "done"; intent: LetterheadIntent }
  | { kind: "unknown-intent" }
  | { kind: "refused"; status: 400; result: Reply };

export async function submitLetterhead(
  request: Request,
  language: Language,
  doors: LetterheadDoors,
): Promise<LetterheadOutcome> {
  const t = await getFixedTFor(language, ["account"]);
  let form: Awaited<ReturnType<typeof readLetterheadForm>>;
  try {
    form = await readLetterheadForm(request);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    // The form could not be read at all: nothing typed to give back.
    const empty = parseWithZod(new FormData(), { schema: letterheadActionSchema });
    return { kind: "refused", status: 400, result: empty.reply({ formErrors: [t(error.message, error.values)] }) };
  }
  const submission = parseWithZod(form.fields, { schema: letterheadActionSchema });
  const errors = submission.status === "success" ? {} : (submission.error ?? {});
  const translated = (extra: Record<string, string[]> = {}) => {
    const fieldErrors: Record<string, string[]> = {};
    for (const [field, keys] of Object.entries(errors))
      if (keys) fieldErrors[field] = keys.map((key) => t(key, letterheadErrorValues(field)));
    return submission.reply({ fieldErrors: { ...fieldErrors, ...extra } });
  };
  if (submission.status !== "success") {
    if (errors.intent) return { kind: "unknown-intent" };
    const logo = form.logo === "tooLarge" ? logoMessage(t, "tooLarge") : {};
    return { kind: "refused", status: 400, result: translated(logo) };
  }
  const value = submission.value;
  if (value.intent === LETTERHEAD_INTENT.removeLogo) {
    await doors.removeLogo();
    return { kind: "done", intent: value.intent };
  }
  if (value.intent === LETTERHEAD_INTENT.remove) {
    await doors.remove();
    return { kind: "done", intent: value.intent };
  }
  if (form.logo === "tooLarge") return { kind: "refused", status: 400, result: translated(logoMessage(t, "tooLarge")) };
  try {
    const { intent: _intent, ...fields } = value;
    await doors.save(fields, form.logo ? { data: form.logo } : null);
  } catch (error) {
    if (!(error instanceof DomainError) || error.kind !== "invalid") throw error;
    const field = error.issues[0]?.path[0] === "logo" ? "logo" : "";
    return { kind: "refused", status: 400, result: translated({ [field]: [t(error.message, error.values)] }) };
  }
  return { kind: "done", intent: value.intent };
}

function logoMessage(t: Awaited<ReturnType<typeof getFixedTFor>>, reason: string) {
  return { logo: [t(`account:letterhead.errors.logo.${reason}`, { max: String(LETTERHEAD_LIMITS.logoBytes / 1024) })] };
}
