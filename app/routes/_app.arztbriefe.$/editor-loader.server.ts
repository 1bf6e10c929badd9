import { json, redirect, type LoaderFunctionArgs } from "@remix-run/node";
import { auditLetter } from "~/services/audit/events.server";
import { DomainError } from "~/services/web/domain-error.server";
import { notFound as pageNotFound } from "~/services/web/not-found.server";
import { formatDateTime } from "~/i18n";
import { consentSummary } from "~/services/recordings/consent.server";
import { getFixedTFor, getLanguage } from "~/services/web/i18n.server";
import { audioDeletionDate } from "~/services/recordings/removal.server";
import { getLetter, letterHistory, letterKeyFrom, sectionsFor } from "~/services/letters/editing.server";
import { getProposal, MAX_INSTRUCTION_CHARS } from "~/services/letters/refinement.server";
import {
  diffSections,
  diffWords,
  isNoInformation,
  letterPlainText,
  sectionsOf,
  type SectionChange,
} from "~/services/letters/letter-content";
import { letterEvidence, type LetterEvidence } from "~/services/letters/letter-evidence.server";
import { regenerationOf, type RegenerationState } from "~/services/letters/regenerate.server";
import { sentenceEvidence } from "./sentence-evidence.server";
import { getPlaybackUrl } from "~/services/recordings/playback.server";
import { viewerPath } from "~/routes/_app.transcriptions/paths";
import { listPrompts, MAX_PROMPT_TITLE, MAX_PROMPTS } from "~/services/letters/saved-prompts.server";
import { requireUser, type SessionUser } from "~/services/web/session.server";
import { LANGUAGE_MISSING, notFound, type Letter } from "./editor-access.server";
import type { DiffSection, EditorSection } from "./types";
import { isLetterView, readViewPreference, rememberView } from "./view-preference.server";
import { editorUrl } from "./paths";

// The letter editor's loader (SPEC §2 "Letter editor modal", §5 "Letters and prompts"): it shapes one letter
// for the screen (structured or text view, a refinement proposal, the version history or a comparison). Every
// read leaves an audit row without content. The action is in editor-action.server.ts.

type Args = Pick<LoaderFunctionArgs, "request" | "params">;

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
  if (url.searchParams.has("check")) return "check" as const;
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
  if (!source) pageNotFound();
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

function auditAction(mode: ReturnType<typeof modeOf>) {
  if (mode === "edit") return "letter.read" as const;
  if (mode === "check") return "letter.evidence.read" as const;
  return `letter.${mode}.read` as const;
}

/**
 * What the editor says of the letter's last regeneration (ADR 0032): that it runs, that its proposal is ready, or why
 * it failed — the last two only while the letter is still the version it started from (afterwards it is old news).
 */
function regenerationView(state: RegenerationState, version: number) {
  if (state.state === "processing") return { state: "processing" as const, section: state.section };
  if (state.state === "none" || state.baseVersion !== version) return null;
  if (state.state === "failed") return { state: "failed" as const, errorKey: state.errorKey };
  if (state.proposalId && state.proposalStatus === "open")
    return { state: "ready" as const, proposalId: state.proposalId };
  return null;
}

/** Where the evidence's sources are in the transcript view, and the audio to hear them. */
async function sourceLinks(user: SessionUser, letter: Letter, evidence: LetterEvidence) {
  // The audio may be gone (deleted after release, by retention): the sources still link to the transcript.
  const audioUrl = await getPlaybackUrl({ userId: user.id, key: letter.metadata.source_key }).catch(() => null);
  return { transcriptPath: viewerPath(evidence.transcriptKey), audioUrl };
}

/** The check's page: the evidence with its links. */
async function checkView(user: SessionUser, letter: Letter, evidence: LetterEvidence | null) {
  if (!evidence) return { evidence: null, transcriptPath: null, audioUrl: null };
  return { evidence, ...(await sourceLinks(user, letter, evidence)) };
}

export async function loadEditor({ request, params }: Args) {
  const user = await requireUser(request);
  const language = await getLanguage(request);
  const t = await getFixedTFor(language, ["recordings"]);
  const url = new URL(request.url);
  let letter: Letter;
  try {
    letter = await getLetter({ userId: user.id, key: params["*"] ?? "" });
  } catch (error) {
    // SPEC §5: a letter cannot be opened without a language code; say so instead of showing a broken editor.
    if (error instanceof DomainError && error.message === LANGUAGE_MISSING) {
      await auditLetter(request, user.id, "letter.read", letterKeyFrom(params["*"] ?? ""), "failure");
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
  const regeneration = regenerationView(
    await regenerationOf(user.id, { recording_id: letter.recording_id, current_version: letter.version }),
    letter.version,
  );
  // The page a started regeneration leads to (?regeneration=1) refreshes itself until the job is done; then it leads
  // on to the proposal.
  if (url.searchParams.has("regeneration") && regeneration?.state === "ready")
    throw redirect(`${editorUrl(letter.key)}?proposal=${encodeURIComponent(regeneration.proposalId)}`);
  const [prompts, proposal, past, evidence] = await Promise.all([
    listPrompts({ userId: user.id }),
    mode === "proposal"
      ? getProposal({ userId: user.id, key: letter.key, id: url.searchParams.get("proposal") ?? "" }).catch(notFound)
      : null,
    mode === "versions" || mode === "compare"
      ? history(user, letter, mode === "compare" ? url.searchParams.get("compare") : null)
      : null,
    // The header counts what is left to verify in every mode; the check shows it all (issue 24).
    letterEvidence({ userId: user.id, letter }),
  ]);
  await auditLetter(request, user.id, auditAction(mode), letter.key);
  const headers = isLetterView(asked) && !plain ? { "Set-Cookie": await rememberView(asked) } : undefined;
  return json(
    {
      kind: "letter" as const,
      language,
      key: letter.key,
      name: letter.filename,
      createdAt: letter.erstelltAm,
      version: letter.version,
      // Released ("Freigegeben", issue 22): when, and when the sweep deletes the recording's audio.
      release: letter.releasedAt
        ? {
            at: letter.releasedAt.toISOString(),
            audioDeletedOn: audioDeletionDate(letter.releasedAt)?.toISOString() ?? null,
          }
        : null,
      canRelease: letter.status === "completed",
      // The patient's consent to the recording it was written from (issue 22); null: not documented.
      consent:
        consentSummary(t, letter.consent, (date) => formatDateTime(date, language)) ??
        ({ missing: t("recordings:consent.notDocumented") } as const),
      // A letter job (a redo) is writing a new version: read-only until it is done.
      busy: letter.status === "processing",
      regeneration,
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
      evidenceCounts: evidence?.counts ?? null,
      check: mode === "check" ? await checkView(user, letter, evidence) : null,
      // With JavaScript, the structured form shows the evidence of the sentence at the caret.
      sentenceEvidence:
        mode === "edit" && view === "structured" && !plain && evidence
          ? await sourceLinks(user, letter, evidence).then((l) =>
              sentenceEvidence(evidence, l.transcriptPath, l.audioUrl),
            )
          : null,
    },
    { headers },
  );
}
