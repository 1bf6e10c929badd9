import { redirect } from "@remix-run/node";
import { z } from "zod";
import { getConfig } from "../config/config.server";
import { siteCookie } from "./cookies.server";

// One-time messages across a redirect (SPEC §8 "Presentation"), so that banners
// and toasts work without JavaScript. The cookie carries an i18n key, never text.

export const toastKeys = [
  "errors.loadingFailed",
  "errors.refreshFailed",
  "errors.forceCleanupFailed",
  "errors.deleteAudioFailed",
  "errors.transcriptionFailed",
  "errors.updateAfterUploadFailed",
  "fileIdentifier.renameError",
  "transcription.createLetterFailed",
  "transcription.autoCreateFailed",
  "transcription.notPatientConversation",
  "toast.signedIn",
  "toast.signedOut",
  "toast.sessionExpired",
  "toast.languageChanged",
  "toast.pendingPostKept",
  "notice.transcriptionLanguage_de",
  "notice.transcriptionLanguage_en",
  "templates:toast.structureSaved",
  "templates:toast.structureReset",
  "templates:toast.ragOn",
  "templates:toast.ragOff",
  "templates:toast.templateAdded",
  "templates:toast.templateRemoved",
  "templates:toast.customCreated",
  "templates:toast.customDeleted",
  "templates:errors.addTemplate",
  "templates:errors.removeTemplate",
  "templates:errors.userTemplatesDisabled",
  "templates:errors.saveStructure",
  "templates:errors.resetStructure",
  "templates:errors.ragSettings",
  "recordings:audio.uploaded",
  "recordings:audio.deleted",
  "recordings:consent.withdrawn",
  "recordings:audio.resetDone",
  "recordings:audio.renamed",
  "recordings:audio.tagsSaved",
  "recordings:audio.uploadedTranscribing",
  "recordings:audio.autoTranscriptionFailed",
  "transcriptions:toast.started",
  "transcriptions:toast.deleted",
  "transcriptions:corrections.toast.correctedOne",
  "transcriptions:corrections.toast.correctedMany",
  "transcriptions:corrections.toast.correctedVocabulary",
  "transcriptions:corrections.toast.confirmedVocabulary",
  "transcriptions:corrections.toast.vocabularyFull",
  "transcriptions:corrections.toast.confirmedOne",
  "transcriptions:corrections.toast.confirmedMany",
  "transcriptions:corrections.toast.speakerNamed",
  "transcriptions:corrections.toast.speakersMerged",
  "transcriptions:corrections.toast.segmentMoved",
  "letters:toast.deleted",
  "letters:toast.released",
  "letters:toast.creating",
  "letters:toast.exists",
  "letters:toast.createFailed",
  "letters:toast.redoStarted",
  "letters:toast.regenerateStarted",
  "letters:toast.saved",
  "letters:toast.noChanges",
  "letters:toast.accepted",
  "letters:toast.rejected",
  "letters:toast.restored",
  "letters:toast.promptSaved",
  "letters:toast.promptDeleted",
  "letters:toast.flagConfirmed",
  "letters:toast.omissionProposed",
  "account:admin.deletedOne",
  "account:admin.deletedMany",
  "account:sessions.ended",
  "account:sessions.endedOthers",
  "account:vocabulary.toastAdded",
  "account:vocabulary.toastRemoved",
  "account:letterhead.toast.saved",
  "account:letterhead.toast.logoRemoved",
  "account:letterhead.toast.removed",
  "admin:sessions.account.endedNone",
  "admin:sessions.account.endedOne",
  "admin:sessions.account.endedMany",
  "admin:sessions.all.endedNone",
  "admin:sessions.all.endedOne",
  "admin:sessions.all.endedMany",
  "admin:letterhead.toast.saved",
  "admin:letterhead.toast.logoRemoved",
  "admin:letterhead.toast.removed",
] as const;

/** The longest value a toast carries (the cookie stays small). */
const MAX_VALUE = 200;

const toastSchema = z.object({
  type: z.enum(["error", "success", "info"]),
  key: z.enum(toastKeys),
  values: z.record(z.string(), z.string().max(MAX_VALUE)).optional(),
});
export type Toast = z.infer<typeof toastSchema>;

function toastCookie() {
  return siteCookie("skribent_toast", {
    httpOnly: true,
    sameSite: "lax",
    secrets: getConfig().cookieSecrets,
    maxAge: 60,
  });
}

/**
 * A value longer than the cookie keeps (an e-mail address may have 320 characters) is shortened with an ellipsis:
 * the reader would otherwise drop the whole toast, and the user would not learn that the action was done.
 */
export async function setToast(toast: Toast) {
  const shorten = (value: string) => (value.length > MAX_VALUE ? `${value.slice(0, MAX_VALUE - 1)}…` : value);
  const values = toast.values
    ? Object.fromEntries(Object.entries(toast.values).map(([name, value]) => [name, shorten(value)]))
    : undefined;
  return toastCookie().serialize({ ...toast, ...(values ? { values } : {}) });
}

/**
 * The one way to redirect with a toast (issue 23): the toast's Set-Cookie is appended after any the caller passes
 * in `init.headers` (a language cookie, say). Return it, or throw it from a helper.
 */
export async function redirectWithToast(to: string, toast: Toast, init: ResponseInit = {}) {
  const headers = new Headers(init.headers);
  headers.append("Set-Cookie", await setToast(toast));
  return redirect(to, { ...init, headers });
}

/** Reads the pending toast and the Set-Cookie that consumes it. */
export async function readToast(request: Request) {
  const raw = await toastCookie().parse(request.headers.get("Cookie"));
  if (!raw) return { toast: null, setCookie: null };
  const parsed = toastSchema.safeParse(raw);
  return {
    toast: parsed.success ? parsed.data : null,
    setCookie: await toastCookie().serialize("", { maxAge: 0 }),
  };
}
