import { usageTotals, type Period } from "~/models/admin.server";
import { getConfig } from "../config/config.server";
import { getDb } from "../../models/db.server";
import type { TokenUsage } from "../llm/types";
import { isOrgAccount } from "../accounts/organisation.server";

// One usage table for every adapter (ARCHITECTURE.md "Engines behind interfaces"), read by the admin dashboard.
// Two kinds of rows, both under a SPEC §7 call name (`endpoint`):
// - one row of unit "call" for every call a user makes: each JSON API call (recorded centrally in web/api.server.ts)
//   and each screen action that does what a SPEC §7 call does (recorded by that action);
// - engine rows (tokens, audio seconds) that carry what the work cost but are not calls.
// Calls per endpoint = the number of call rows; cost per endpoint = the sum of all its rows.
// Metering never blocks or fails a request: `meter` and `meterCall` do not wait, and a failed write is logged.

/** The SPEC §7 calls by name: the path without "/api/" and without its parameters. */
export const specEndpoints = [
  "get-upload-url",
  "update-file-metadata",
  "files",
  "rename-file",
  "audio-playback",
  "update-file-tags",
  "transcribe_v2",
  "transcribe_v2/status",
  "transcript_v2",
  "arztbriefe",
  "medical-letter-v2",
  "arztbrief",
  "refine-arztbrief-structured",
  "refine-arztbrief-bulk",
  "delete-arztbrief",
  "delete-transcript",
  "delete-all",
  "force-cleanup",
  "structure/templates",
  "structure/repository",
  "structure/user/add-access",
  "structure/user/remove-access",
  "structure/user",
  "structure/custom-template",
  "structure/user/reset",
  "structure/user/rag-permission",
  "prompts",
  "usage-dashboard",
  "health",
  "get-pdf-upload-urls",
  "extract-pdf-from-s3",
  "extract-mfiles-pdf-context",
  "chat-request",
  "save-realtime-transcript",
  "speechmatics-jwt",
] as const;
export type SpecEndpoint = (typeof specEndpoints)[number];

const plainPaths = new Set<string>(specEndpoints);
const pathsWithParameters: Array<[RegExp, SpecEndpoint]> = [
  [/^\/api\/audio-playback\/.+$/, "audio-playback"],
  [/^\/api\/transcribe_v2\/[^/]+\/status$/, "transcribe_v2/status"],
  [/^\/api\/transcript_v2\/.+$/, "transcript_v2"],
  [/^\/api\/arztbrief\/.+$/, "arztbrief"],
  [/^\/api\/prompts\/[^/]+$/, "prompts"],
  // The recorder saves through the live door (ADR 0013): SPEC's save-realtime-transcript by another path.
  [/^\/live\/sessions\/[^/]+\/save$/, "save-realtime-transcript"],
];

/**
 * The SPEC §7 call a request path is, or null (the live door's audio and events, resumable-upload parts, unknown
 * paths): only known names reach the table, so a client cannot write names of its own into the dashboard.
 */
export function endpointOfPath(pathname: string): SpecEndpoint | null {
  if (pathname.startsWith("/api/") && plainPaths.has(pathname.slice(5))) return pathname.slice(5) as SpecEndpoint;
  return pathsWithParameters.find(([pattern]) => pattern.test(pathname))?.[1] ?? null;
}

export type UsageRecord = {
  userId: string;
  endpoint: string;
  units: number;
  unit: "call" | "audio_second" | "input_token" | "output_token" | "page" | "byte";
  /** Price of one unit in USD, from configuration. */
  unitPriceUsd: number;
};

function roundUsd(value: number) {
  return Math.round(value * 1_000_000) / 1_000_000;
}

function usageRow(record: UsageRecord) {
  if (!Number.isFinite(record.units) || record.units < 0) throw new Error("usage units must be >= 0");
  return {
    user_id: record.userId,
    endpoint: record.endpoint,
    units: record.units,
    unit: record.unit,
    cost_usd: roundUsd(record.units * record.unitPriceUsd),
  };
}

/**
 * Writes one usage row. Invalid units are a programming error and reject; a failed write is logged and
 * swallowed, so a background job never fails because its usage could not be written.
 */
export async function recordUsage(record: UsageRecord) {
  const row = usageRow(record);
  try {
    await getDb().insertInto("usage_events").values(row).execute();
  } catch (error) {
    console.warn(`[usage] ${record.endpoint} ${record.unit} not recorded:`, (error as Error).message);
  }
}

// The response path's rows are written together, a second after the first of them (or at 500), instead of one
// statement per call: on the embedded database an insert was a fifth of the cheapest JSON call's work. A crash loses
// at most that second of call counts (the dashboard's, not the audit's); a stop and the dashboard write them first.
const FLUSH_AFTER_MS = 1_000;
const FLUSH_AT = 500;
let buffered: UsageRecord[] = [];
let timer: NodeJS.Timeout | undefined;
const pending = new Set<Promise<void>>();

async function writeBuffered() {
  clearTimeout(timer);
  timer = undefined;
  const batch = buffered;
  buffered = [];
  if (batch.length === 0) return;
  try {
    await getDb().insertInto("usage_events").values(batch.map(usageRow)).execute();
  } catch {
    // One bad row (its account deleted meanwhile) must not take the others with it.
    for (const record of batch) await recordUsage(record);
  }
}

function flush() {
  const write: Promise<void> = writeBuffered()
    .catch((error: unknown) => console.warn("[usage] metering failed:", (error as Error).message))
    .finally(() => pending.delete(write));
  pending.add(write);
}

/** Records usage without waiting for it (the response path): never throws, a failure is logged. */
export function meter(record: UsageRecord) {
  try {
    usageRow(record);
  } catch (error) {
    console.warn("[usage] metering failed:", (error as Error).message);
    return;
  }
  buffered.push(record);
  if (buffered.length >= FLUSH_AT) flush();
  else timer ??= setTimeout(flush, FLUSH_AFTER_MS).unref();
}

/** One call of a SPEC §7 endpoint by a user (nothing for null: a path that is no SPEC call). */
export function meterCall(userId: string, endpoint: SpecEndpoint | null) {
  if (endpoint) meter({ userId, endpoint, units: 1, unit: "call", unitPriceUsd: 0 });
}

/** Writes what is buffered and waits for the usage writes under way (the dashboard, tests, and a graceful stop). */
export async function settleMetering() {
  if (buffered.length > 0) flush();
  while (pending.size > 0) await Promise.all([...pending]);
}

/** A language model's tokens, priced by configuration (nothing for the local engine). */
export async function recordTokens(userId: string, endpoint: string, usage: TokenUsage, local: boolean) {
  const prices = getConfig().prices;
  await recordUsage({
    userId,
    endpoint,
    units: usage.promptTokens,
    unit: "input_token",
    unitPriceUsd: local ? 0 : prices.llmInputPer1kTokensUsd / 1000,
  });
  await recordUsage({
    userId,
    endpoint,
    units: usage.completionTokens,
    unit: "output_token",
    unitPriceUsd: local ? 0 : prices.llmOutputPer1kTokensUsd / 1000,
  });
}

export type UsageDashboardUser = {
  name: string | null;
  email: string | null;
  is_org: boolean;
  /** Calls per endpoint. */
  endpoints: Record<string, number>;
  /** Cost in USD per endpoint, plus `total`. */
  costs: Record<string, number>;
};

/** SPEC §3 "Usage dashboard user": per user, calls and costs per endpoint in the period, ordered by e-mail. */
export async function usageByUser(period: Period): Promise<UsageDashboardUser[]> {
  // This instance's calls of the last second first (meter); another instance's are at most a second behind.
  await settleMetering();
  const byUser = new Map<string, UsageDashboardUser>();
  for (const row of await usageTotals(period)) {
    let entry = byUser.get(row.userId);
    if (!entry) {
      const is_org = isOrgAccount({ email: row.email, emailVerified: row.emailVerified, orgClaim: row.orgClaim });
      entry = { name: row.name, email: row.email, is_org, endpoints: {}, costs: { total: 0 } };
      byUser.set(row.userId, entry);
    }
    entry.endpoints[row.endpoint] = row.calls;
    entry.costs[row.endpoint] = roundUsd(row.cost);
    entry.costs.total = roundUsd(entry.costs.total + row.cost);
  }
  return [...byUser.values()];
}
