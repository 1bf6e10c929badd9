import { parseWithZod } from "@conform-to/zod";
import { releaseLetter } from "~/models/letter.server";
import { json, redirect, type ActionFunctionArgs } from "@remix-run/node";
import { isUnknownIntent } from "~/components/forms/fields";
import type { AuditOutcome } from "~/services/audit/audit.server";
import { auditLetter, auditPrompt } from "~/services/audit/events.server";
import { DomainError, statusFor } from "~/services/web/domain-error.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import {
  baseVersionFrom,
  getLetter,
  letterContentFrom,
  letterKeyFrom,
  restoreVersion,
  saveLetter,
} from "~/services/letters/editing.server";
import { decideRefinement, instructionFrom, proposeRefinement } from "~/services/letters/refinement.server";
import { sectionsOf, toStructuredContent } from "~/services/letters/letter-content";
import { confirmFlag, proposeOmission } from "~/services/letters/letter-evidence.server";
import { regenerationQuery, regenerationScopeFrom, requestRegeneration } from "~/services/letters/regenerate.server";
import { LlmError } from "~/services/llm/types";
import {
  listPrompts,
  promptTextFrom,
  promptTitleFrom,
  removePrompt,
  savePrompt,
} from "~/services/letters/saved-prompts.server";
import { requireUser, type SessionUser } from "~/services/web/session.server";
import { redirectWithToast, type Toast } from "~/services/web/toast.server";
import { meterCall, type SpecEndpoint } from "~/services/admin/usage.server";
import { notFound, type Letter } from "./editor-access.server";
import { editorUrl } from "./paths";
import { editorActionSchema, INTENT, type EditorForm, type EditorIntent } from "./schema";
import type { EditorActionData } from "./types";

// The letter editor's action (SPEC §2 "Letter editor modal", §5 "Letters and prompts"): it runs one named
// intent (STYLE.md §7). Every write leaves an audit row without content. Expected failures come back
// translated; what the doctor typed is sent back with them.

/** The translated message of an expected failure; anything else is not ours to hide. */
async function messageOf(request: Request, error: unknown) {
  const t = await getFixedTFor(await getLanguage(request), ["common", "recordings", "letters"]);
  if (error instanceof DomainError) return t(error.message, error.values);
  // Refinement and generation failures carry the key a clinician sees (RefineError, LetterGenerationError).
  const key = (error as { userMessageKey?: unknown } | null)?.userMessageKey;
  if (typeof key === "string") return t(key);
  if (error instanceof LlmError) return t(error.options.userMessageKey ?? "letters:errors.updateFailed");
  throw error;
}

function httpStatus(error: unknown) {
  if (error instanceof DomainError) return error.kind === "conflict" ? 409 : error.kind === "rate_limited" ? 429 : 400;
  return error instanceof LlmError ? 502 : 400;
}

/** A check's failure: an expected one through the one mapping; anything else never reaches here (messageOf). */
function failureKind(error: unknown) {
  return error instanceof DomainError ? error.kind : "invalid";
}

function done(to: string, toast: Toast) {
  return redirectWithToast(to, toast);
}

function fail(data: EditorActionData, status: number) {
  return json<EditorActionData>(data, { status });
}

/** Saving, refining and restoring wait while a letter job writes a new version (SPEC §4 busy state). */
function requireIdle(letter: Letter) {
  if (letter.status === "processing") throw new DomainError("conflict", "letters:errors.busy");
}

type Context<F> = { user: SessionUser; key: string; letter: Letter; form: F; request: Request };

/** One intent's handler, given that intent's parsed form. */
type Intent<I extends EditorIntent = EditorIntent> = (
  ctx: Context<Extract<EditorForm, { intent: I }>>,
) => Promise<Response>;

const intents: { [I in EditorIntent]: Intent<I> } = {
  // The check (issue 24): the doctor confirms a flag as right. The audit row says which kind of flag on which
  // letter, never the sentence.
  async confirmFlag({ user, key, form, request }) {
    const action = `letter.confirm.${form.flag}` as const;
    try {
      await confirmFlag({ userId: user.id, key, hash: form.sentence, kind: form.flag });
      await auditLetter(request, user.id, action, key);
      return done(`${editorUrl(key)}?check=1`, { type: "success", key: "letters:toast.flagConfirmed" });
    } catch (error) {
      await auditLetter(request, user.id, action, key, "failure");
      return fail({ form: "check", error: await messageOf(request, error) }, statusFor(failureKind(error)));
    }
  },

  // A listed omission becomes a proposal to accept or reject, as a refinement's does.
  async proposeOmission({ user, key, letter, form, request }) {
    const audited = (outcome: AuditOutcome) => auditLetter(request, user.id, "letter.omission.propose", key, outcome);
    try {
      requireIdle(letter);
      const t = await getFixedTFor(await getLanguage(request), ["letters"]);
      const { id } = await proposeOmission({
        userId: user.id,
        key,
        index: form.omission,
        query: (omission) =>
          t("letters:evidence.proposalQuery", {
            kind: t(`letters:evidence.kind.${omission.kind}`),
            text: omission.text,
          }),
      });
      await audited("success");
      return done(`${editorUrl(key)}?proposal=${id}`, { type: "success", key: "letters:toast.omissionProposed" });
    } catch (error) {
      await audited("failure");
      return fail({ form: "check", error: await messageOf(request, error) }, statusFor(failureKind(error)));
    }
  },

  async save({ user, key, letter, form, request }) {
    const titles = form.title;
    // Browsers send textarea line breaks as CRLF; the letter keeps LF, so an untouched section stays equal.
    const texts = form.text.map((v) => v.replace(/\r\n?/g, "\n"));
    const audited = (outcome: AuditOutcome) => auditLetter(request, user.id, "letter.save", key, outcome);
    try {
      if (titles.length === 0 || titles.length !== texts.length)
        throw new DomainError("invalid", "letters:errors.validation");
      requireIdle(letter);
      const content = letterContentFrom(toStructuredContent(titles.map((title, i) => ({ title, text: texts[i]! }))));
      const baseVersion = baseVersionFrom(form.base_version);
      const result = await saveLetter({ userId: user.id, key, content, baseVersion });
      await audited("success");
      // Without JavaScript the Save button is always there: an unchanged letter is answered, not versioned.
      return done(
        editorUrl(key),
        result.changed
          ? { type: "success", key: "letters:toast.saved", values: { version: String(result.version) } }
          : { type: "info", key: "letters:toast.noChanges" },
      );
    } catch (error) {
      const message = await messageOf(request, error);
      await audited("failure");
      const conflict =
        error instanceof DomainError && error.kind === "conflict" && error.message !== "letters:errors.busy";
      return fail({ form: "save", error: message, conflict, submitted: { titles, texts } }, httpStatus(error));
    }
  },

  async refine({ user, key, letter, form: { query, scope }, request }) {
    const audited = (outcome: AuditOutcome) => auditLetter(request, user.id, "letter.refine", key, outcome);
    try {
      requireIdle(letter);
      const instruction = instructionFrom(query);
      const { id } = await proposeRefinement({ userId: user.id, key, scope, query: instruction });
      await audited("success");
      return redirect(`${editorUrl(key)}?proposal=${encodeURIComponent(id)}`);
    } catch (error) {
      const message = await messageOf(request, error);
      await audited("failure");
      return fail({ form: "refine", error: message, query, scope }, httpStatus(error));
    }
  },

  /** Without JavaScript, "use" re-renders the panel with the prompt as the instruction (letter.js fills in place). */
  async usePrompt({ user, form: { promptId, scope }, request }) {
    const prompt = (await listPrompts({ userId: user.id })).find((p) => p.id === promptId);
    if (!prompt) return fail({ form: "prompts", error: await messageOf(request, notFoundPrompt()) }, 400);
    return json<EditorActionData>({ form: "refine", query: prompt.prompt_text, scope });
  },

  async savePrompt({ user, key, form: { query, scope, title, promptText }, request }) {
    // The dialog's text starts as the instruction; left empty (no JavaScript), the instruction is saved.
    const text = promptText.trim() || query;
    const audited = (outcome: AuditOutcome) => auditPrompt(request, user.id, "prompt.save", undefined, outcome);
    try {
      await savePrompt({ userId: user.id, title: promptTitleFrom(title), promptText: promptTextFrom(text) });
    } catch (error) {
      await audited("failure");
      let promptError: string;
      try {
        promptError = await messageOf(request, error);
      } catch (unexpected) {
        // SPEC §8 'Failed to save prompt': the instruction and the dialog stay as they were.
        console.warn("[letters] saving a prompt failed:", (unexpected as Error).message);
        promptError = (await getFixedTFor(await getLanguage(request), ["letters"]))("letters:prompts.saveFailed");
      }
      return fail({ form: "refine", query, scope, promptError, promptTitle: title, promptText: text }, 400);
    }
    await audited("success");
    return done(editorUrl(key), { type: "success", key: "letters:toast.promptSaved" });
  },

  async deletePrompt({ user, key, form: { promptId: id }, request }) {
    const audited = (outcome: AuditOutcome) => auditPrompt(request, user.id, "prompt.delete", id, outcome);
    try {
      await removePrompt({ userId: user.id, id });
    } catch (error) {
      await audited("failure");
      return fail({ form: "prompts", error: await messageOf(request, error) }, 400);
    }
    await audited("success");
    return done(editorUrl(key), { type: "success", key: "letters:toast.promptDeleted" });
  },

  accept: decide(true),
  reject: decide(false),

  async restore({ user, key, letter, form: { version }, request }) {
    const audited = (outcome: AuditOutcome) => auditLetter(request, user.id, "letter.restore", key, outcome);
    try {
      requireIdle(letter);
      const result = await restoreVersion({ userId: user.id, key, version: Number(version) });
      await audited("success");
      return done(
        `${editorUrl(key)}?versions=1`,
        result.changed
          ? {
              type: "success",
              key: "letters:toast.restored",
              values: { from: version, version: String(result.version) },
            }
          : { type: "info", key: "letters:toast.noChanges" },
      );
    } catch (error) {
      const message = await messageOf(request, error);
      await audited("failure");
      return fail({ form: "versions", error: message }, httpStatus(error));
    }
  },
  release,

  // Regeneration from the corrected transcript (ADR 0032): a job whose result is a proposal. The page it leads to
  // says so while it runs and, once the proposal is there, leads on to it (editor-loader.server.ts).
  async regenerate({ user, key, letter, form: { scope }, request }) {
    const audited = (outcome: AuditOutcome) => auditLetter(request, user.id, "letter.regenerate", key, outcome);
    try {
      const t = await getFixedTFor(await getLanguage(request), ["letters"]);
      await requestRegeneration({
        userId: user.id,
        key,
        scope: regenerationScopeFrom(scope, sectionsOf(letter.content)),
        query: regenerationQuery(t),
      });
      await audited("success");
      return done(`${editorUrl(key)}?regeneration=1`, { type: "success", key: "letters:toast.regenerateStarted" });
    } catch (error) {
      const message = await messageOf(request, error);
      await audited("failure");
      return fail({ form: "regenerate", error: message, scope }, httpStatus(error));
    }
  },
};

function notFoundPrompt() {
  return new DomainError("not_found", "letters:prompts.notFound");
}

/** Accepting makes the proposal a new version; rejecting creates none (ADR 0012). */
function decide(accept: boolean): (ctx: Context<{ proposalId: string }>) => Promise<Response> {
  return async ({ user, key, form, request }) => {
    const action = accept ? "letter.proposal.accept" : "letter.proposal.reject";
    const audited = (outcome: AuditOutcome) => auditLetter(request, user.id, action, key, outcome);
    try {
      const result = await decideRefinement({ userId: user.id, key, id: form.proposalId, accept });
      await audited("success");
      return done(
        editorUrl(key),
        result.accepted
          ? { type: "success", key: "letters:toast.accepted", values: { version: String(result.version) } }
          : { type: "info", key: "letters:toast.rejected" },
      );
    } catch (error) {
      const message = await messageOf(request, error);
      await audited("failure");
      return fail({ form: "proposal", error: message }, httpStatus(error));
    }
  };
}

/**
 * "Freigeben" (issue 22): the doctor marks the current version final. From then on Skribent no longer needs the
 * recording's audio, which the retention sweep deletes AUDIO_RETENTION_DAYS later; a new version undoes the release.
 */
async function release({ user, key, letter, request }: Parameters<Intent<typeof INTENT.release>>[0]) {
  const audited = (outcome: AuditOutcome) => auditLetter(request, user.id, "letter.release", key, outcome);
  try {
    requireIdle(letter);
    if (letter.status !== "completed") throw new DomainError("invalid", "letters:errors.notReleasable");
    await releaseLetter({ ownerId: user.id, letterId: letter.id, at: new Date() });
    await audited("success");
    return done(editorUrl(key), { type: "success", key: "letters:toast.released" });
  } catch (error) {
    await audited("failure");
    return fail({ form: "save", error: await messageOf(request, error) }, httpStatus(error));
  }
}

const intentCalls = new Map<EditorIntent, SpecEndpoint>([
  [INTENT.save, "arztbrief"],
  [INTENT.savePrompt, "prompts"],
  [INTENT.deletePrompt, "prompts"],
]);

export async function editorAction({ request, params }: Pick<ActionFunctionArgs, "request" | "params">) {
  const user = await requireUser(request);
  let key: string;
  try {
    key = letterKeyFrom(params["*"] ?? "");
  } catch (error) {
    return notFound(error);
  }
  // Not this user's letter: a 404 before any intent looks at the form.
  const letter = await getLetter({ userId: user.id, key }).catch(notFound);
  const submission = parseWithZod(await request.formData(), { schema: editorActionSchema });
  if (isUnknownIntent(submission)) throw new Response("Unknown intent", { status: 400 });
  if (submission.status !== "success") return json({ result: submission.reply() }, { status: 400 });
  const form = submission.value;
  // One usage row per SPEC §7 call an intent does (a refinement's is counted where its scope is known).
  meterCall(user.id, intentCalls.get(form.intent) ?? null);
  const run = intents[form.intent] as Intent;
  return run({ user, key: letter.key, letter, form, request });
}
