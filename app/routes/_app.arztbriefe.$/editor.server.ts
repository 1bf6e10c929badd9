import { json, redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { audit } from "~/services/audit.server";
import { DomainError } from "~/services/domain-error.server";
import { getFixedTFor, getLanguage } from "~/services/i18n.server";
import {
  getLetter,
  letterHistory,
  letterKeyFrom,
  restoreVersion,
  saveLetter,
  sectionsFor,
} from "~/services/letter-editing.server";
import {
  decideRefinement,
  getProposal,
  MAX_INSTRUCTION_CHARS,
  proposeRefinement,
} from "~/services/letter-refinement.server";
import {
  diffSections,
  diffWords,
  isNoInformation,
  letterPlainText,
  sectionsOf,
  toStructuredContent,
  type SectionChange,
} from "~/services/letters/letter-content";
import { LlmError } from "~/services/llm/types";
import { listPrompts, MAX_PROMPT_TITLE, MAX_PROMPTS, removePrompt, savePrompt } from "~/services/saved-prompts.server";
import { requireUser, type SessionUser } from "~/services/session.server";
import { setToast, type Toast } from "~/services/toast.server";
import { meterCall, type SpecEndpoint } from "~/services/usage.server";
import { editorUrl } from "./paths";
import type { DiffSection, EditorActionData, EditorSection } from "./types";
import { isLetterView, readViewPreference, rememberView } from "./view-preference.server";

// The letter editor's server side (SPEC §2 "Letter editor modal", §5 "Letters and prompts"): the loader
// shapes one letter for the screen (structured or text view, a refinement proposal, the version history or a
// comparison), the action runs one named intent (STYLE.md §7). Every read and write leaves an audit row
// without content. Expected failures come back translated; what the doctor typed is sent back with them.

type Args = Pick<LoaderFunctionArgs, "request" | "params">;
type Letter = Awaited<ReturnType<typeof getLetter>>;

const LANGUAGE_MISSING = "letters:errors.languageMissing";
/** A letter that is not this user's (or not there) is a 404; nothing says whether it exists. */
const HIDDEN = new Set(["letters:errors.letterNotFound", "letters:errors.letterKeyRequired", LANGUAGE_MISSING]);

function notFound(error: unknown): never {
  if (error instanceof DomainError && (HIDDEN.has(error.message) || error.kind === "not_found")) {
    throw new Response("Not found", { status: 404 });
  }
  throw error;
}

function diffView(changes: SectionChange[], keepUnchanged: boolean): DiffSection[] {
  return changes
    .filter((c) => keepUnchanged || c.status !== "unchanged")
    .map((c) => ({
      title: c.title,
      status: c.status,
      ops:
        c.status === "changed"
          ? diffWords(c.before, c.after)
          : c.status === "added"
            ? [{ op: "add" as const, text: c.after }]
            : c.status === "removed"
              ? [{ op: "del" as const, text: c.before }]
              : [],
    }));
}

function modeOf(url: URL) {
  if (url.searchParams.has("proposal")) return "proposal" as const;
  if (url.searchParams.has("compare")) return "compare" as const;
  if (url.searchParams.has("versions")) return "versions" as const;
  return "edit" as const;
}

async function history(user: SessionUser, letter: Letter, compare: string | null) {
  const versions = await letterHistory({ userId: user.id, key: letter.key });
  const list = versions.map((v) => ({
    version: v.version,
    kind: v.kind,
    author: v.author,
    createdAt: v.created_at,
    note: v.note,
    current: v.version === letter.version,
    changes: v.changes ? diffView(v.changes, false) : null,
  }));
  if (compare === null) return { versions: list, compare: null };
  const source = versions.find((v) => String(v.version) === compare);
  if (!source) throw new Response("Not found", { status: 404 });
  return {
    versions: list,
    compare: {
      version: source.version,
      kind: source.kind,
      createdAt: source.created_at,
      // What changed from that version to the current one.
      changes: diffView(diffSections(sectionsFor(source.content), sectionsFor(letter.content)), true),
    },
  };
}

export async function loadEditor({ request, params }: Args) {
  const user = await requireUser(request);
  const language = await getLanguage(request);
  const url = new URL(request.url);
  let letter: Letter;
  try {
    letter = await getLetter({ userId: user.id, key: params["*"] });
  } catch (error) {
    // SPEC §5: a letter cannot be opened without a language code; say so instead of showing a broken editor.
    if (error instanceof DomainError && error.message === LANGUAGE_MISSING) {
      await audit({
        userId: user.id,
        action: "letter.read",
        entityType: "letter",
        entityId: letterKeyFrom(params["*"]),
        outcome: "failure",
        request,
      });
      return json({ kind: "missingLanguage" as const, language });
    }
    return notFound(error);
  }
  const mode = modeOf(url);
  const sections = sectionsOf(letter.content);
  const plain = sections === null;
  const asked = url.searchParams.get("view");
  // SPEC §2: plain-text letters open in the text view only; otherwise the remembered choice.
  const view = plain ? "text" : isLetterView(asked) ? asked : ((await readViewPreference(request)) ?? "structured");
  const [prompts, proposal, past] = await Promise.all([
    listPrompts({ userId: user.id }),
    mode === "proposal"
      ? getProposal({ userId: user.id, key: letter.key, id: url.searchParams.get("proposal") }).catch(notFound)
      : null,
    mode === "versions" || mode === "compare"
      ? history(user, letter, mode === "compare" ? url.searchParams.get("compare") : null)
      : null,
  ]);
  await audit({
    userId: user.id,
    action: mode === "edit" ? "letter.read" : `letter.${mode}.read`,
    entityType: "letter",
    entityId: letter.key,
    outcome: "success",
    request,
  });
  const headers = isLetterView(asked) && !plain ? { "Set-Cookie": await rememberView(asked) } : undefined;
  return json(
    {
      kind: "letter" as const,
      language,
      key: letter.key,
      name: letter.filename,
      createdAt: letter.erstelltAm,
      version: letter.version,
      // A letter job (a redo) is writing a new version: read-only until it is done.
      busy: letter.status === "processing",
      plain,
      view,
      mode,
      sections: (sections ?? []).map((s): EditorSection => ({
        title: s.title,
        text: s.text,
        noInformation: isNoInformation(s.text),
      })),
      // Text view: the whole letter; its copy leaves out 'no information found' sections (SPEC §5).
      plainText: plain ? letterPlainText(letter.content) : null,
      copyText: view === "text" ? letterPlainText(letter.content, { omitNoInformation: true }) : null,
      prompts: prompts.map((p) => ({ id: p.id, title: p.title, text: p.prompt_text })),
      limits: { instruction: MAX_INSTRUCTION_CHARS, promptTitle: MAX_PROMPT_TITLE, prompts: MAX_PROMPTS },
      proposal: proposal
        ? {
            id: proposal.id,
            query: proposal.query,
            status: proposal.status,
            stale: proposal.stale,
            changes: diffView(proposal.changes, true),
          }
        : null,
      versions: past?.versions ?? null,
      compare: past?.compare ?? null,
    },
    { headers },
  );
}

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

async function done(to: string, toast: Toast) {
  return redirect(to, { headers: { "Set-Cookie": await setToast(toast) } });
}

function fail(data: EditorActionData, status: number) {
  return json<EditorActionData>(data, { status });
}

/** Saving, refining and restoring wait while a letter job writes a new version (SPEC §4 busy state). */
function requireIdle(letter: Letter) {
  if (letter.status === "processing") throw new DomainError("conflict", "letters:errors.busy");
}

type Intent = (ctx: {
  user: SessionUser;
  key: string;
  letter: Letter;
  form: FormData;
  request: Request;
}) => Promise<Response>;

const intents = new Map<string, Intent>(
  Object.entries({
    async save({ user, key, letter, form, request }) {
      const titles = form.getAll("title").map(String);
      // Browsers send textarea line breaks as CRLF; the letter keeps LF, so an untouched section stays equal.
      const texts = form.getAll("text").map((v) => String(v).replace(/\r\n?/g, "\n"));
      const entry = { userId: user.id, action: "letter.save", entityType: "letter", entityId: key, request };
      try {
        if (titles.length === 0 || titles.length !== texts.length)
          throw new DomainError("invalid", "letters:errors.validation");
        requireIdle(letter);
        const content = toStructuredContent(titles.map((title, i) => ({ title, text: texts[i]! })));
        const result = await saveLetter({ userId: user.id, key, content, baseVersion: form.get("base_version") });
        await audit({ ...entry, outcome: "success" });
        // Without JavaScript the Save button is always there: an unchanged letter is answered, not versioned.
        return done(
          editorUrl(key),
          result.changed
            ? { type: "success", key: "letters:toast.saved", values: { version: String(result.version) } }
            : { type: "info", key: "letters:toast.noChanges" },
        );
      } catch (error) {
        const message = await messageOf(request, error);
        await audit({ ...entry, outcome: "failure" });
        const conflict =
          error instanceof DomainError && error.kind === "conflict" && error.message !== "letters:errors.busy";
        return fail({ form: "save", error: message, conflict, submitted: { titles, texts } }, httpStatus(error));
      }
    },

    async refine({ user, key, letter, form, request }) {
      const query = String(form.get("query") ?? "");
      const scope = String(form.get("scope") ?? "__all__");
      const entry = { userId: user.id, action: "letter.refine", entityType: "letter", entityId: key, request };
      try {
        requireIdle(letter);
        const { id } = await proposeRefinement({ userId: user.id, key, scope, query });
        await audit({ ...entry, outcome: "success" });
        return redirect(`${editorUrl(key)}?proposal=${encodeURIComponent(id)}`);
      } catch (error) {
        const message = await messageOf(request, error);
        await audit({ ...entry, outcome: "failure" });
        return fail({ form: "refine", error: message, query, scope }, httpStatus(error));
      }
    },

    /** Without JavaScript, "use" re-renders the panel with the prompt as the instruction (letter.js fills in place). */
    async usePrompt({ user, form, request }) {
      const prompt = (await listPrompts({ userId: user.id })).find((p) => p.id === form.get("promptId"));
      const scope = String(form.get("scope") ?? "__all__");
      if (!prompt) return fail({ form: "prompts", error: await messageOf(request, notFoundPrompt()) }, 400);
      return json<EditorActionData>({ form: "refine", query: prompt.prompt_text, scope });
    },

    async savePrompt({ user, key, form, request }) {
      const query = String(form.get("query") ?? "");
      const scope = String(form.get("scope") ?? "__all__");
      const title = String(form.get("title") ?? "");
      // The dialog's text starts as the instruction; left empty (no JavaScript), the instruction is saved.
      const text = String(form.get("promptText") ?? "").trim() || query;
      const entry = { userId: user.id, action: "prompt.save", entityType: "prompt", request };
      try {
        await savePrompt({ userId: user.id, title, promptText: text });
      } catch (error) {
        await audit({ ...entry, outcome: "failure" });
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
      await audit({ ...entry, outcome: "success" });
      return done(editorUrl(key), { type: "success", key: "letters:toast.promptSaved" });
    },

    async deletePrompt({ user, key, form, request }) {
      const id = String(form.get("promptId") ?? "");
      const entry = { userId: user.id, action: "prompt.delete", entityType: "prompt", entityId: id, request };
      try {
        await removePrompt({ userId: user.id, id });
      } catch (error) {
        await audit({ ...entry, outcome: "failure" });
        return fail({ form: "prompts", error: await messageOf(request, error) }, 400);
      }
      await audit({ ...entry, outcome: "success" });
      return done(editorUrl(key), { type: "success", key: "letters:toast.promptDeleted" });
    },

    accept: decide(true),
    reject: decide(false),

    async restore({ user, key, letter, form, request }) {
      const version = String(form.get("version") ?? "");
      const entry = { userId: user.id, action: "letter.restore", entityType: "letter", entityId: key, request };
      try {
        requireIdle(letter);
        const result = await restoreVersion({ userId: user.id, key, version });
        await audit({ ...entry, outcome: "success" });
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
        await audit({ ...entry, outcome: "failure" });
        return fail({ form: "versions", error: message }, httpStatus(error));
      }
    },
  } satisfies Record<string, Intent>),
);

function notFoundPrompt() {
  return new DomainError("not_found", "letters:prompts.notFound");
}

/** Accepting makes the proposal a new version; rejecting creates none (ADR 0012). */
function decide(accept: boolean): Intent {
  return async ({ user, key, form, request }) => {
    const entry = {
      userId: user.id,
      action: accept ? "letter.proposal.accept" : "letter.proposal.reject",
      entityType: "letter",
      entityId: key,
      request,
    };
    try {
      const result = await decideRefinement({ userId: user.id, key, id: form.get("proposalId"), accept });
      await audit({ ...entry, outcome: "success" });
      return done(
        editorUrl(key),
        result.accepted
          ? { type: "success", key: "letters:toast.accepted", values: { version: String(result.version) } }
          : { type: "info", key: "letters:toast.rejected" },
      );
    } catch (error) {
      const message = await messageOf(request, error);
      await audit({ ...entry, outcome: "failure" });
      return fail({ form: "proposal", error: message }, httpStatus(error));
    }
  };
}

const intentCalls = new Map<string, SpecEndpoint>([
  ["save", "arztbrief"],
  ["savePrompt", "prompts"],
  ["deletePrompt", "prompts"],
]);

export async function editorAction({ request, params }: Pick<ActionFunctionArgs, "request" | "params">) {
  const user = await requireUser(request);
  let key: string;
  try {
    key = letterKeyFrom(params["*"]);
  } catch (error) {
    return notFound(error);
  }
  // Not this user's letter: a 404 before any intent looks at the form.
  const letter = await getLetter({ userId: user.id, key }).catch(notFound);
  const form = await request.formData();
  const intent = intents.get(String(form.get("intent") ?? ""));
  if (!intent) throw new Response("Unknown intent", { status: 400 });
  // One usage row per SPEC §7 call an intent does (a refinement's is counted where its scope is known).
  meterCall(user.id, intentCalls.get(String(form.get("intent"))) ?? null);
  return intent({ user, key: letter.key, letter, form, request });
}
