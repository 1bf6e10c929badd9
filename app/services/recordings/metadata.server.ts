import { updateRecording } from "~/models/recording.server";
import { consentColumns, readConsent } from "~/models/consent-rules";
import { checkDisplayName, normaliseTags } from "~/models/recording-rules";
import { transcriptionModes, type TranscriptionMode } from "~/models/schema";
import { templateLanguageFrom } from "~/models/template-rules";
import { setLetterTags } from "~/models/letter.server";
import { setTranscriptTags } from "~/models/transcript.server";
import { optionalObject, optionalText } from "../web/api-fields.server";
import { recordOf } from "./consent.server";
import { DomainError } from "../web/domain-error.server";
import { confirmUpload, requireReady } from "./recordings.server";
import { getUserStructure } from "../templates/templates.server";

// What a user may change on their recording: SPEC §7 update-file-metadata, rename-file and update-file-tags. Each
// finds the recording by (owner, key) first; owner, statuses and keys are never set from the request.

/** The metadata fields a user may set, each of its JSON type (tags and display name are checked by their rules). */
export type MetadataInput = {
  template_id?: string;
  tags?: unknown;
  display_name?: unknown;
  language_code?: string;
  transcription_mode?: string;
  /** The patient's consent ({ kind, given_by }), confirmed now by the user (issue 22). */
  consent?: unknown;
};

/**
 * A request's `metadata`: an object whose text fields are text (ASVS 15.3.5), or a DomainError naming the field —
 * checked before anything is confirmed or changed.
 */
export function readMetadata(value: unknown): MetadataInput {
  const metadata = optionalObject({ metadata: value }, "metadata");
  if (!metadata) return {};
  const text = (field: string) => optionalText(metadata, field, `metadata.${field}`);
  return {
    template_id: text("template_id"),
    tags: metadata.tags,
    display_name: metadata.display_name,
    language_code: text("language_code"),
    transcription_mode: text("transcription_mode"),
    consent: metadata.consent,
  };
}

/** SPEC §7 update-file-metadata: only what a user may change; owner, statuses and keys are ignored. */
export async function updateFileMetadata(args: { userId: string; key: string; metadata: MetadataInput }) {
  const recording = await confirmUpload({ userId: args.userId, key: args.key });
  await applyMetadata({ userId: args.userId, recording, metadata: args.metadata });
  return { success: true as const, key: recording.storage_key };
}

/** The fields of SPEC §3's metadata a user may set (read by readMetadata), checked like everywhere else. */
export async function applyMetadata(args: {
  userId: string;
  recording: { id: string; language_code: string };
  metadata: MetadataInput;
}) {
  const { recording, metadata } = args;
  const set: Parameters<typeof updateRecording>[0]["set"] = {};
  if (metadata.language_code !== undefined) {
    const language = templateLanguageFrom(metadata.language_code);
    if (language) set.language_code = language;
  }
  if (metadata.template_id) {
    const templateId = metadata.template_id;
    const language = templateLanguageFrom(set.language_code ?? recording.language_code) ?? "de-DE";
    // Only a template this user can use (a system template or their own).
    await getUserStructure({ userId: args.userId, templateId, language }).catch(() => {
      throw new DomainError("invalid", "recordings:errors.unknownTemplate");
    });
    set.template_id = templateId;
  }
  if (metadata.tags !== undefined) {
    const tags = normaliseTags(metadata.tags);
    if (!tags.ok) throw new DomainError("invalid", tags.message);
    set.tags = JSON.stringify(tags.value);
  }
  if (metadata.display_name !== undefined) {
    const name = checkDisplayName(metadata.display_name);
    if (!name.ok) throw new DomainError("invalid", name.message);
    set.display_name = name.value;
  }
  if (metadata.transcription_mode !== undefined) {
    const mode = metadata.transcription_mode;
    if ((transcriptionModes as readonly string[]).includes(mode)) set.transcription_mode = mode as TranscriptionMode;
  }
  if (metadata.consent !== undefined && metadata.consent !== null) {
    const consent = readConsent(metadata.consent);
    if (!consent.ok) throw new DomainError("invalid", consent.message);
    if (consent.value) Object.assign(set, consentColumns(recordOf(args.userId, consent.value)));
  }
  if (Object.keys(set).length > 0) await updateRecording({ ownerId: args.userId, id: recording.id, set });
  return set;
}

export async function renameFile(args: { userId: string; key: string; displayName: unknown }) {
  const recording = await requireReady(args.userId, args.key);
  const name = checkDisplayName(args.displayName);
  if (!name.ok) throw new DomainError("invalid", name.message);
  if (name.value !== recording.display_name) {
    await updateRecording({ ownerId: args.userId, id: recording.id, set: { display_name: name.value } });
  }
  return { success: true as const, display_name: name.value };
}

export async function updateFileTags(args: { userId: string; key: string; tags: unknown; updateAllRelated?: boolean }) {
  const recording = await requireReady(args.userId, args.key);
  const tags = normaliseTags(args.tags);
  if (!tags.ok) throw new DomainError("invalid", tags.message);
  await updateRecording({ ownerId: args.userId, id: recording.id, set: { tags: JSON.stringify(tags.value) } });
  // SPEC §7 update_all_related: the transcript and the letter carry the recording's tags.
  if (args.updateAllRelated !== false) {
    await setTranscriptTags({ ownerId: args.userId, recordingId: recording.id, tags: tags.value });
    await setLetterTags({ ownerId: args.userId, recordingId: recording.id, tags: tags.value });
  }
  return { success: true as const, tags: tags.value };
}
