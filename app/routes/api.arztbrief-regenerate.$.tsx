import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { auditLetter } from "~/services/audit/events.server";
import { letterKeyFrom } from "~/services/letters/editing.server";
import {
  regenerationQuery,
  regenerationState,
  requestRegeneration,
  type RegenerationScope,
  type RegenerationState,
} from "~/services/letters/regenerate.server";
import { ApiError, apiJson, apiRoute, detailLanguage, readJsonBody, requireApiUser } from "~/services/web/api.server";
import { optionalText, requiredText } from "~/services/web/api-fields.server";
import { DomainError } from "~/services/web/domain-error.server";
import { getFixedTFor } from "~/services/web/i18n.server";

// Regeneration from the corrected transcript over the JSON API (issue 24, ADR 0032), owner-scoped like
// GET /api/arztbrief/{key}:
//   POST /api/arztbrief-regenerate/{key}  { "scope": "all" } or { "scope": "section", "section": <title> } starts it
//        → 202 { key, job_name, status: "processing", scope, section, base_version, status_url }; the result is a
//        proposal, never a new version of the letter (busy: 409; no template or transcript: 400).
//   GET  /api/arztbrief-regenerate/{key}  the letter's last regeneration: status "none" | "processing" | "failed"
//        (with `error`) | "completed" (with `proposal_id`, `proposal_status` and `stale`).
// The proposal is read and decided in the editor (?proposal=<id>), as every refinement's.

function statusUrl(key: string) {
  return `/api/arztbrief-regenerate/${key.replace(/^arztbriefe\//, "")}`;
}

/** The body's scope, strictly typed (ADR 0026): "all", or "section" with the section's title. */
function scopeFrom(body: Record<string, unknown>): RegenerationScope {
  if (body.scope === "section") {
    return { kind: "section", title: requiredText(body, "section", "letters:errors.sectionRequired") };
  }
  if (body.scope === "all") {
    // Nothing to read, but a section of another type than text is still a wrong type, not ignored.
    optionalText(body, "section");
    return { kind: "all" };
  }
  throw new DomainError("invalid", "letters:errors.regenerateScope");
}

async function stateBody(request: Request, key: string, state: RegenerationState) {
  const status_url = statusUrl(key);
  if (state.state === "none") return { key, status: "none" as const, status_url };
  const common = {
    key,
    job_name: state.jobName,
    scope: state.scope,
    section: state.section,
    base_version: state.baseVersion,
    status_url,
  };
  if (state.state === "processing") return { ...common, status: "processing" as const };
  if (state.state === "failed") {
    const t = await getFixedTFor(detailLanguage(request), ["common", "letters"]);
    return { ...common, status: "failed" as const, error: t(state.errorKey) };
  }
  return {
    ...common,
    status: "completed" as const,
    proposal_id: state.proposalId,
    proposal_status: state.proposalStatus,
    stale: state.stale,
  };
}

export const loader = apiRoute(async ({ request, params }: LoaderFunctionArgs) => {
  const user = await requireApiUser(request);
  const key = letterKeyFrom(params["*"] ?? "");
  const state = await regenerationState({ userId: user.id, key });
  await auditLetter(request, user.id, "letter.regenerate.read", key);
  return apiJson(await stateBody(request, key, state));
});

export const action = apiRoute(async ({ request, params }: ActionFunctionArgs) => {
  const user = await requireApiUser(request);
  if (request.method !== "POST") throw new ApiError(405, "Method not allowed");
  const key = letterKeyFrom(params["*"] ?? "");
  const scope = scopeFrom(await readJsonBody(request));
  // The proposal's line in the language the caller reads (the API's English unless it asks for its page's).
  const t = await getFixedTFor(detailLanguage(request), ["letters"]);
  const started = await requestRegeneration({ userId: user.id, key, scope, query: regenerationQuery(t) }).catch(
    async (error: unknown) => {
      await auditLetter(request, user.id, "letter.regenerate", key, "failure");
      throw error;
    },
  );
  await auditLetter(request, user.id, "letter.regenerate", started.key);
  const status_url = statusUrl(started.key);
  return apiJson(
    {
      key: started.key,
      job_name: started.jobName,
      status: "processing",
      scope: scope.kind,
      section: scope.kind === "section" ? scope.title : null,
      base_version: started.baseVersion,
      status_url,
    },
    { status: 202, headers: { Location: status_url } },
  );
});
