import { beforeAll, describe, expect, it } from "vitest";
import { cookieCaller, routeModules, runProbe, type Probe } from "../support/access-matrix";
import { apiRoutes } from "../support/access-matrix-api";
import { seedWorld, type World } from "../support/access-matrix-fixture";
import { setupChatModel } from "../support/chat-fixtures";
import { setupTestApp } from "../setup/app";

// ASVS 5.0 15.3.5 (no type juggling) across the whole JSON API: every call of the access matrix that sends a JSON
// body (access-matrix-api.ts, generated from the route list), sent by the owner of everything it names, with one
// value at a time replaced by a value of another JSON type — a number for a string, a string for a number or a
// boolean, an object for a list — is refused with a 4xx and a readable `detail`, never carried out and never a 500.
const app = setupTestApp({ provider: true });
setupChatModel();

let world: World;
beforeAll(async () => {
  world = await seedWorld(app.issuer);
}, 120_000);

type Path = (string | number)[];
const SAMPLES = { string: "1", number: 1, boolean: true, list: ["1"], object: { value: "1" } } as const;
const kindOf = (value: unknown) =>
  Array.isArray(value) ? "list" : value === null ? "null" : typeof value === "object" ? "object" : typeof value;

/** Every value in a body (the first element of a list stands for all of them), with its path. */
function valuesOf(value: unknown, at: Path = []): { path: Path; value: unknown }[] {
  const here = at.length > 0 ? [{ path: at, value }] : [];
  if (Array.isArray(value)) return value.length > 0 ? [...here, ...valuesOf(value[0], [...at, 0])] : here;
  if (value && typeof value === "object")
    return [...here, ...Object.entries(value).flatMap(([key, inner]) => valuesOf(inner, [...at, key]))];
  return here;
}

function replaced(body: unknown, at: Path, value: unknown): unknown {
  if (at.length === 0) return value;
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let parent = copy;
  for (const step of at.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
  parent[at.at(-1)!] = value;
  return copy;
}

/**
 * Values that may take more than one JSON type, or that the server never reads (so no type of theirs matters), each
 * with the reason.
 */
const EXEMPT: Record<string, string> = {
  "POST /api/save-realtime-transcript metadata.tags": "SPEC §3: a JSON string holding one name or a list, or a list",
  "POST /api/update-file-tags tags.0": "SPEC §9 Reading A: non-string, empty or over-long tags are silently dropped",
  "POST /api/save-realtime-transcript transcript_data.speaker_stats": "never read: the server derives its own",
  "POST /api/delete-all transcript_key": "never read: the server finds the recording's transcript itself",
  "POST /api/delete-all arztbrief_key": "never read: the server finds the recording's letters itself",
  "POST /api/medical-letter-v2 transcript_data": "never read: the letter is written from the stored transcript",
  "POST /api/medical-letter-v2 original_filename": "never read: the recording's own name is used",
  "POST /api/structure/user/rag-permission user_id": "never read: a forged owner (mass assignment, ignored)",
};
/** Exempt with everything inside it. */
const exempt = (label: string, field: string) =>
  Object.keys(EXEMPT).some((entry) => `${label} ${field}` === entry || `${label} ${field}`.startsWith(`${entry}.`));

const jsonCalls = () =>
  Object.entries(apiRoutes).flatMap(([route, check]) =>
    check.kind === "owned" || check.kind === "own-data-only"
      ? check
          .probes(world.keys)
          .filter((probe): probe is Probe & { json: NonNullable<Probe["json"]> } => {
            const body = probe.json?.body;
            return Boolean(body) && typeof body === "object" && !Array.isArray(body);
          })
          .map((probe) => ({ route, probe }))
      : [],
  );

/** Calls that remove or reset what later calls name run last, in this order, so the others still find it. */
const LAST = [
  "remove-access",
  "reset",
  "abort",
  "delete-arztbrief",
  "delete-transcript",
  "force-cleanup",
  "delete-all",
];
const lateness = (label: string) => LAST.findIndex((word) => label.includes(word)) + 1;

/** A matrix body the API refuses as it is (it only needs to reach the route there): here, one it accepts. */
const VALID_BODY: Record<string, (body: Record<string, unknown>) => Record<string, unknown>> = {
  "POST /api/refine-arztbrief-bulk": (body) => ({
    ...body,
    arztbrief_content: { structured_output: [{ Befund: "x" }] },
  }),
};

/**
 * Calls whose body, as the matrix sends it, is refused for a reason of state rather than type: for them this test
 * shows only that no wrong type is carried out or crashes, not that the refusal was the type's.
 */
const REFUSED_AS_SENT = [
  "POST /api/confirm-realtime-audio → 400", // the fixture's live recording has no audio uploaded
  "POST /api/extract-mfiles-pdf-context → 403", // patient records are switched off in the tests' configuration
  // Past every check of the body, the chat fixture's model answers chat, not a refinement: the refusals were the type's.
  "POST /api/refine-arztbrief-bulk → 502",
  "POST /api/refine-arztbrief-structured → 502",
  "POST /api/update-file-metadata → 400", // the second probe: a multipart upload whose parts never came
  "POST /api/upload-parts/complete → 400", // no part of that upload was sent
  "POST /live/sessions/:id/start → 400", // the fixture sends no audio format the engine accepts
  "POST /live/sessions/:id/save → 400", // the session holds no transcript yet
  // The letter check: the matrix confirms a sentence the fixture's letter does not have and proposes an omission
  // its letter does not list; both are refused as gone, after every type check.
  "POST /api/arztbrief-evidence/:key → 404",
  "POST /api/arztbrief-evidence/:key → 404",
  // Regeneration: the matrix names a section of the fixture's letter that its template (soap) does not have, so it
  // is refused after every type check, and the letter is not left busy for the calls after it.
  "POST /api/arztbrief-regenerate/:key → 400",
];

async function answerTo(file: string, probe: Probe, body: unknown) {
  const { path, method } = probe.json!;
  const answer = await runProbe(file, { ...probe, request: (as) => as.json(path, method, body) }, owner());
  let detail: unknown;
  try {
    detail = (JSON.parse(answer.body) as { detail?: unknown }).detail;
  } catch {
    detail = undefined;
  }
  return { status: answer.status, detail, text: answer.body.slice(0, 120) };
}

const owner = () => cookieCaller(world.anna.cookie);

describe("a JSON body with a value of the wrong type", () => {
  it("is refused with a 4xx and a readable reason by every JSON call, never carried out or answered with a 500", async () => {
    const modules = routeModules();
    const calls = jsonCalls()
      .filter(({ probe }) => probe.expect !== 404)
      .sort((x, y) => lateness(x.probe.label) - lateness(y.probe.label));
    expect(calls.length).toBeGreaterThan(25);
    const wrong: string[] = [];
    const baselineRefused: string[] = [];
    let sent = 0;
    for (const { route, probe } of calls) {
      const file = modules.get(route)!;
      const given = probe.json.body as Record<string, unknown>;
      const body = VALID_BODY[probe.label]?.(given) ?? given;
      for (const { path: at, value } of valuesOf(body)) {
        const field = at.join(".");
        if (exempt(probe.label, field)) continue;
        const kind = kindOf(value);
        for (const [other, sample] of Object.entries(SAMPLES)) {
          if (other === kind) continue;
          const answer = await answerTo(file, probe, replaced(body, at, sample));
          sent++;
          const refused = answer.status >= 400 && answer.status < 500 && answer.status !== 429;
          if (!refused || typeof answer.detail !== "string" || answer.detail.length === 0)
            wrong.push(`${probe.label} ${field}=${JSON.stringify(sample)} → ${answer.status} ${answer.text}`);
        }
      }
      // Last, the call as the matrix makes it: accepted, so the refusals above were the wrong type's doing.
      const baseline = await answerTo(file, probe, body);
      if (baseline.status >= 300)
        baselineRefused.push(
          `${probe.label
            .replace(/\/live\/sessions\/[^/]+/, "/live/sessions/:id")
            .replace(/\/api\/arztbrief-evidence\/.+$/, "/api/arztbrief-evidence/:key")
            .replace(/\/api\/arztbrief-regenerate\/.+$/, "/api/arztbrief-regenerate/:key")} → ${baseline.status}`,
        );
    }
    expect(sent).toBeGreaterThan(150);
    expect(wrong).toEqual([]);
    expect(baselineRefused.sort()).toEqual([...REFUSED_AS_SENT].sort());
  }, 300_000);
});
