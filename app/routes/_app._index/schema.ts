import { z } from "zod";
import { intentForms, optionalTextField, textField } from "~/components/forms/fields";
import { INTENT, type AudioIntent } from "./intents";

// The Audio page's forms (issue 23): one schema, read by the action, whose intents name the buttons. The names
// and tags themselves are checked by the recording rules the JSON API shares (recording-rules.ts, ADR 0009), so an
// empty or too long name still comes back as the dialog's message, with or without JavaScript.

/** A button that acts on one recording: its storage key. */
function onRecording<I extends AudioIntent>(intent: I) {
  return z.object({ intent: z.literal(intent), key: textField() });
}

export const audioActionSchema = intentForms([
  onRecording(INTENT.rename).extend({ displayName: textField() }),
  // The tag typed in, or the one whose × was pressed.
  onRecording(INTENT.addTag).extend({ tag: textField() }),
  onRecording(INTENT.removeTag).extend({ tag: textField() }),
  onRecording(INTENT.uploaded),
  onRecording(INTENT.transcribe),
  onRecording(INTENT.delete),
  onRecording(INTENT.withdrawConsent),
  onRecording(INTENT.reset),
]);

/** The upload form without JavaScript (multipart; the audio and PDF parts are streamed apart, not read here). */
export const uploadSchema = z.object({
  mode: textField(),
  language: textField(),
  templateId: optionalTextField(),
  additionalContext: textField(),
  patientId: optionalTextField(),
  consentKind: optionalTextField(),
  consentGivenBy: optionalTextField(),
});
