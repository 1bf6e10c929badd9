import type { Submission } from "@conform-to/react";
import { z } from "zod";

// Building blocks of the page forms' zod schemas (issue 23), shared by the components and the actions.
// They keep the reading the forms have always had (FormData.get): a field sent twice counts by its first value,
// so a forged second `key` or `intent` is never the one acted on; a missing or empty text is "". Conform
// hands a repeated name over as an array and an empty one as undefined, hence the preprocessing.

function firstValue(value: unknown) {
  return Array.isArray(value) ? (value as unknown[])[0] : value;
}

/** Any field schema, given the field's first value. */
export function firstOf<T extends z.ZodTypeAny>(schema: T) {
  return z.preprocess(firstValue, schema);
}

/**
 * A text field: its first value; "" when empty, and when missing `whenMissing` (""), for a field whose absence
 * has always meant something else than an empty value (the editor's refinement scope: the whole letter).
 */
export function textField(whenMissing = "") {
  return z.preprocess((value) => (value === undefined ? whenMissing : firstValue(value)), z.string().default(""));
}

/** A text field that must not be blank: trimmed, with `message` (an i18n key) when missing, empty or blank. */
export function requiredTextField(message: string) {
  return z.preprocess(firstValue, z.string({ required_error: message }).trim().min(1, message));
}

/** A confirmation checkbox (value "yes"): checked, or `message` (an i18n key). */
export function confirmField(message: string) {
  return z.preprocess(firstValue, z.literal("yes", { errorMap: () => ({ message }) }));
}

/** A checkbox whose checking is weighed by the action (value "yes"): true when checked. */
export function checkboxField() {
  return firstOf(z.string().optional()).transform((value) => value === "yes");
}

/** A text field whose absence is not the same as its being empty (FormData.get's null): null when missing. */
export function nullableTextField() {
  return z.preprocess((value) => (value === undefined ? null : firstValue(value)), z.string().default("").nullable());
}

/** Every value of a repeated field in order, empty ones kept, as FormData.getAll reads it. */
export function textListField() {
  return z.preprocess(
    (value) => (value === undefined ? [] : Array.isArray(value) ? value : [value]),
    z.array(z.string().default("")),
  );
}

/** A text field that may be missing: its first value, or undefined when missing or empty. */
export function optionalTextField() {
  return z.preprocess(firstValue, z.string().optional());
}

type IntentOption = z.ZodDiscriminatedUnionOption<"intent">;

/**
 * Several forms on one page (STYLE.md §7): one object schema per named intent, told apart by the `intent` button.
 * An intent the page does not know fails on `intent` (see isUnknownIntent), which the action answers with a 400.
 */
export function intentForms<T extends [IntentOption, ...IntentOption[]]>(options: T) {
  return z.preprocess(
    (value) =>
      value && typeof value === "object" && "intent" in value
        ? { ...value, intent: firstValue((value as { intent: unknown }).intent) }
        : value,
    z.discriminatedUnion("intent", options),
  );
}

/** The submission failed on its `intent`: a button the page does not have. */
export function isUnknownIntent(submission: Submission<unknown>) {
  return submission.status !== "success" && Boolean(submission.error?.intent);
}
