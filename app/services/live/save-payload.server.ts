import { readConsent, type Consent } from "~/models/consent-rules";
import { z } from "zod";
import { checkAdditionalContext, checkDisplayName, normaliseTags, sanitiseFileName } from "~/models/recording-rules";
import { transcriptionModes, type TranscriptionMode } from "~/models/schema";
import type { TemplateLanguage } from "~/models/template-rules";
import { DomainError } from "../web/domain-error.server";
import { MAX_DURATION_SECONDS } from "../recordings/recordings.server";
import { containerForMime, isWellFormedMime, type LiveContainer } from "./save-format.server";
import type { LiveSegment } from "./save-words.server";

// SPEC §3 "Live transcript save payload", checked on the server (the browser's checks are a convenience). The
// name, tag and context rules are the ones every other path applies (recording-rules.ts); the client's
// speaker_stats, created_via and flags are never trusted — the server derives its own.

/** About 4 h of speech at several words a second, with punctuation: far above any real session. */
export const MAX_RESULTS = 200_000;
const MAX_SEGMENT_CHARS = 2_000;
const seconds = z.number().finite().min(0).max(MAX_DURATION_SECONDS);

const segmentSchema = z.object({
  type: z.enum(["word", "punctuation"]).optional(),
  start_time: seconds,
  end_time: seconds,
  is_eos: z.boolean().optional(),
  attaches_to: z.enum(["previous", "next", "both", "none"]).optional(),
  alternatives: z
    .array(
      z.object({
        content: z.string().max(MAX_SEGMENT_CHARS),
        speaker: z.string().max(40).nullish(),
        confidence: z.number().finite().min(0).max(1).nullish(),
      }),
    )
    .max(10),
});

const payloadSchema = z.object({
  transcript_data: z.object({
    results: z.array(segmentSchema).max(MAX_RESULTS),
    job: z
      .object({
        started_at: z.string().max(64).nullish(),
        ended_at: z.string().max(64).nullish(),
        data_name: z.string().max(500).nullish(),
        language: z.string().max(16).nullish(),
        duration: seconds.nullish(),
      })
      .nullish(),
    speaker_stats: z.unknown().optional(),
  }),
  display_name: z.unknown().optional(),
  language_code: z
    .string()
    .trim()
    .regex(/^(de|en)([-_][A-Za-z]{2})?$/i),
  duration: seconds.nullish(),
  metadata: z
    .object({
      template_id: z.string().trim().max(100).nullish(),
      tags: z.unknown().optional(),
      transcription_mode: z.enum(transcriptionModes).optional(),
      // The patient's consent (issue 22): { kind, given_by }, read by consent-rules.ts.
      consent: z.unknown().optional(),
    })
    .nullish(),
  created_via: z.literal("realtime").optional(),
  additional_context: z.unknown().optional(),
  original_mime_type: z.string().trim().max(255).nullish(),
});

export type LiveSave = {
  results: LiveSegment[];
  displayName: string | null;
  language: TemplateLanguage;
  durationSeconds: number | null;
  templateId: string | null;
  tags: string[];
  mode: TranscriptionMode;
  additionalContext: string;
  originalMimeType: string | null;
  container: LiveContainer;
  /** The client's name for the recording (job.data_name), only ever shown, never used as a key. */
  dataName: string | null;
  startedAt: string | null;
  /** The patient's consent the client confirmed; null: none given. */
  consent: Consent | null;
};

/** SPEC §3 tags: a JSON string holding one name (or a list), or an array. */
function tagList(value: unknown): unknown {
  if (typeof value !== "string") return value ?? [];
  if (!value.trim()) return [];
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === "string" ? [parsed] : parsed;
  } catch {
    return [value];
  }
}

function invalid(message: string): never {
  throw new DomainError("invalid", message);
}

export function parseLiveSave(input: unknown): LiveSave {
  const parsed = payloadSchema.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path, message: i.message }));
    throw new DomainError("invalid", "recordings:liveSave.invalidPayload", issues);
  }
  const data = parsed.data;
  let displayName: string | null = null;
  if (typeof data.display_name === "string" && data.display_name.trim()) {
    const name = checkDisplayName(data.display_name);
    displayName = name.ok ? name.value : invalid(name.message);
  } else if (data.display_name !== undefined && data.display_name !== null && typeof data.display_name !== "string") {
    invalid("recordings:liveSave.invalidPayload");
  }
  const tags = normaliseTags(tagList(data.metadata?.tags));
  if (!tags.ok) invalid(tags.message);
  const context = checkAdditionalContext(data.additional_context ?? "");
  if (!context.ok) invalid(context.message);
  if (data.additional_context !== undefined && data.additional_context !== null) {
    if (typeof data.additional_context !== "string") invalid("recordings:liveSave.invalidPayload");
  }
  const mime = data.original_mime_type?.trim().toLowerCase() || null;
  if (mime && !isWellFormedMime(mime)) invalid("recordings:liveSave.invalidMimeType");
  const consent = readConsent(data.metadata?.consent);
  if (!consent.ok) invalid(consent.message);
  const job = data.transcript_data.job;
  const dataName = job?.data_name?.trim() ? sanitiseFileName(job.data_name) : null;
  return {
    results: data.transcript_data.results,
    displayName,
    language: data.language_code.toLowerCase().startsWith("en") ? "en-GB" : "de-DE",
    durationSeconds: data.duration ?? job?.duration ?? null,
    templateId: data.metadata?.template_id || null,
    tags: tags.value,
    mode: data.metadata?.transcription_mode ?? "transcript_and_letter",
    additionalContext: context.value,
    originalMimeType: mime,
    container: containerForMime(mime),
    dataName,
    startedAt: job?.started_at ?? null,
    consent: consent.value,
  };
}
