import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { FLAG_KINDS } from "~/services/evidence/flag-kinds";
import type { FlagKind } from "~/services/evidence/strict-checks";
import { auditLetter } from "~/services/audit/events.server";
import { letterKeyFrom } from "~/services/letters/editing.server";
import { requireLetter } from "~/services/letters/editing.server";
import { confirmFlag, letterEvidence, proposeOmission } from "~/services/letters/letter-evidence.server";
import { ApiError, apiJson, apiRoute, detailLanguage, readJsonBody, requireApiUser } from "~/services/web/api.server";
import { requiredText } from "~/services/web/api-fields.server";
import { DomainError } from "~/services/web/domain-error.server";
import { getFixedTFor } from "~/services/web/i18n.server";

// The letter check over the JSON API (issue 24), owner-scoped like GET /api/arztbrief/{key}:
//   GET  /api/arztbrief-evidence/{key}  every sentence with its transcript segments and flags, the possible
//        omissions and the counts the editor's header shows ({ key, available: false } without a transcript);
//   POST /api/arztbrief-evidence/{key}  { "action": "confirm", "sentence": <hash>, "flag": <kind> } confirms a flag
//        of a sentence as it stands; { "action": "propose_omission", "omission": <index> } turns a listed omission
//        into a refinement proposal, decided as the editor's are.

export const loader = apiRoute(async ({ request, params }: LoaderFunctionArgs) => {
  const user = await requireApiUser(request);
  const key = letterKeyFrom(params["*"] ?? "");
  const evidence = await letterEvidence({ userId: user.id, letter: await requireLetter(user.id, key) });
  await auditLetter(request, user.id, "letter.evidence.read", key);
  if (!evidence) return apiJson({ key, available: false });
  return apiJson({
    key,
    available: true,
    transcript_key: evidence.transcriptKey,
    counts: evidence.counts,
    sections: evidence.sections.map((section) => ({
      title: section.title,
      sentences: section.sentences.map((s) => ({
        hash: s.hash,
        text: s.text,
        status: s.status,
        flags: s.flags,
        sources: s.sources.map(source),
        citation: s.citation && {
          named: s.citation.named,
          holding: s.citation.holding,
          not_holding: s.citation.notHolding.map(source),
          unknown: s.citation.unknown,
        },
      })),
    })),
    omissions: evidence.omissions.map((o) => ({
      kind: o.kind,
      text: o.text,
      section: o.section,
      empty_section: o.emptySection,
      sources: o.sources.map(source),
    })),
    empty_sections: evidence.emptySections.map((e) => ({
      section: e.section,
      kind: e.kind,
      sources: e.sources.map(source),
    })),
  });
});

function source(s: { id: string; speaker: string; start: number; text: string; cited?: true }) {
  return { segment_id: s.id, speaker: s.speaker, start: s.start, text: s.text, ...(s.cited ? { cited: true } : {}) };
}

function flagFrom(value: unknown): FlagKind {
  if (typeof value === "string" && (FLAG_KINDS as readonly string[]).includes(value)) return value as FlagKind;
  throw new DomainError("invalid", "letters:evidence.errors.flagUnknown", [], { kinds: FLAG_KINDS.join(", ") });
}

function omissionFrom(value: unknown): number {
  if (typeof value === "number" && Number.isInteger(value) && value >= 0) return value;
  throw new DomainError("invalid", "letters:evidence.errors.omissionRequired");
}

export const action = apiRoute(async ({ request, params }: ActionFunctionArgs) => {
  const user = await requireApiUser(request);
  if (request.method !== "POST") throw new ApiError(405, "Method not allowed");
  const key = letterKeyFrom(params["*"] ?? "");
  const body = await readJsonBody(request);
  if (body.action === "confirm") {
    const hash = requiredText(body, "sentence", "letters:evidence.errors.sentenceRequired");
    const kind = flagFrom(body.flag);
    const action = `letter.confirm.${kind}` as const;
    const added = await confirmFlag({ userId: user.id, key, hash, kind }).catch(async (error: unknown) => {
      await auditLetter(request, user.id, action, key, "failure");
      throw error;
    });
    await auditLetter(request, user.id, action, key);
    return apiJson({ key, sentence: hash, flag: kind, confirmed: true, already_confirmed: !added });
  }
  if (body.action === "propose_omission") {
    const index = omissionFrom(body.omission);
    // The proposal's line as the editor shows it, in the language the caller reads (the API's English by default).
    const t = await getFixedTFor(detailLanguage(request), ["letters"]);
    const { id } = await proposeOmission({
      userId: user.id,
      key,
      index,
      query: (omission) =>
        t("letters:evidence.proposalQuery", { kind: t(`letters:evidence.kind.${omission.kind}`), text: omission.text }),
    }).catch(async (error: unknown) => {
      await auditLetter(request, user.id, "letter.omission.propose", key, "failure");
      throw error;
    });
    await auditLetter(request, user.id, "letter.omission.propose", key);
    return apiJson({ key, proposal_id: id }, { status: 201 });
  }
  throw new DomainError("invalid", "letters:evidence.errors.actionUnknown");
});
