// What the live client can report. Each key names a data-msg-* text the server renders in the clinician's
// language (public/locales/*/live.json, under "messages"); SPEC §8 "Live recording and dictation" gives the
// wording. `{name}` placeholders are filled in by the client.

export const LIVE_MESSAGE_KEYS = [
  "micDenied",
  "micNotFound",
  "unsupported",
  "constraints",
  "startFailed",
  "stopFailed",
  "saveFailed",
  "authFailed",
  "signedOut",
  "connectTimeout",
  "transcriptionError",
  "connectionError",
  "connectionLost",
  "noAudio",
  "blobEmpty",
  "recordingError",
  "recorderUnsupported",
  "setupFailed",
  "noContent",
  "httpsRequired",
  "micUnavailable",
  "apisMissing",
  "deviceUnsupported",
  "loadFailed",
  "modelsLoading",
  "consentRequired",
] as const;

export type LiveMessageKey = (typeof LIVE_MESSAGE_KEYS)[number];

/** `cause`: what went wrong underneath, for texts that quote it ('Error stopping transcription: …'). */
export type LiveFailure = { key: LiveMessageKey; values?: Record<string, string>; cause?: LiveFailure };

/** A failure on its way through promises; the UI translates `failure`, never shows `message`. */
export class LiveError extends Error {
  constructor(readonly failure: LiveFailure) {
    super(failure.key + (failure.values ? ` ${JSON.stringify(failure.values)}` : ""));
    this.name = "LiveError";
  }
}

export function asFailure(error: unknown, fallback: LiveMessageKey): LiveFailure {
  return error instanceof LiveError ? error.failure : { key: fallback };
}

/** `micDenied` → `data-msg-mic-denied` (lower case: React warns about capitals in data attributes). */
export function messageAttribute(key: string) {
  return `data-msg-${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** Reads a data-msg-* text from `root` and fills its `{name}` placeholders. */
export function messageFrom(root: Element, key: string, values: Record<string, string | number> = {}) {
  let text = root.getAttribute(messageAttribute(key)) ?? key;
  for (const [name, value] of Object.entries(values)) text = text.split(`{${name}}`).join(String(value));
  return text;
}

/** A failure in the clinician's language; a `cause` becomes the `{reason}` of its parent. */
export function describe(root: Element, failure: LiveFailure): string {
  const values: Record<string, string> = { ...failure.values };
  if (failure.cause) values.reason = describe(root, failure.cause);
  return messageFrom(root, failure.key, values);
}

/** The data-msg-* attributes a server component renders for the client (t: the "live" namespace). */
export function liveMessageAttributes(t: (key: string) => string): Record<string, string> {
  return Object.fromEntries(LIVE_MESSAGE_KEYS.map((key) => [messageAttribute(key), t(`messages.${key}`)]));
}
