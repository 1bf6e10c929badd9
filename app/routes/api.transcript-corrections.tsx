import { z } from "zod";
import { apiJson, apiPost } from "~/services/web/api.server";
import { auditTranscript } from "~/services/audit/events.server";
import { DomainError } from "~/services/web/domain-error.server";
import {
  baseVersionFrom,
  confirmWord,
  correctionTextFrom,
  correctWord,
  mergeSpeakers,
  moveSegment,
  nameSpeaker,
  segmentFrom,
  speakerFrom,
  speakerNameFrom,
  wordRefFrom,
} from "~/services/transcription/corrections.server";

// POST /api/transcript-corrections (issue 24): one change to a transcript, as a new version. The body names the
// transcript (`transcript_key`), the version the change was made on (`base_version`, from GET
// /api/transcript-review or a previous answer; another change since then is a 409) and the change (`action`):
//   correct         segment, word_index, text, apply_to_all?, add_to_vocabulary? (default true)
//   confirm         segment, word_index, apply_to_all?
//   name_speaker    speaker, role? (doctor | patient | relative | interpreter), name? (a name wins over a role;
//                   neither takes the name away)
//   merge_speakers  from, into
//   move_segment    segment, to
// The answer: { transcript_key, version } and, for a word, how many words changed and what became of the term in
// the doctor's vocabulary. Fields are read strictly (ADR 0026): a number for a text, a text for a flag is refused.

const ERR = "transcriptions:corrections.errors";
const flag = z.boolean().optional();
const text = z.string().optional();
const index = z.number().int().nonnegative().optional();

const body = z.discriminatedUnion("action", [
  z.object({
    action: z.literal("correct"),
    segment: text,
    word_index: index,
    text,
    apply_to_all: flag,
    add_to_vocabulary: flag,
  }),
  z.object({
    action: z.literal("confirm"),
    segment: text,
    word_index: index,
    apply_to_all: flag,
    add_to_vocabulary: flag,
  }),
  z.object({
    action: z.literal("name_speaker"),
    speaker: text,
    role: z.string().nullable().optional(),
    name: z.string().nullable().optional(),
  }),
  z.object({ action: z.literal("merge_speakers"), from: text, into: text }),
  z.object({ action: z.literal("move_segment"), segment: text, to: text }),
]);

function parse(raw: Record<string, unknown>) {
  const parsed = body.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  if (issue.path[0] === "action") throw new DomainError("invalid", `${ERR}.actionInvalid`);
  throw new DomainError("invalid", `${ERR}.fieldInvalid`, [], { field: issue.path.join(".") });
}

export const action = apiPost(async ({ request, user, body: raw }) => {
  // Read at the door in this order — key, change, base version — then the service: a transcript that is not the
  // caller's is a 404 there, before any word or speaker is looked for.
  if (typeof raw.transcript_key !== "string")
    throw new DomainError("invalid", "transcriptions:errors.transcriptKeyRequired");
  const key = raw.transcript_key;
  const change = parse(raw);
  // A number, as the review and every answer give it: "2" is not a version here (ADR 0026); the form's text is.
  const version = typeof raw.base_version === "number" ? raw.base_version : Number.NaN;
  const target = { userId: user.id, key, baseVersion: baseVersionFrom(version) };
  switch (change.action) {
    case "correct": {
      const result = await correctWord({
        ...target,
        word: wordRefFrom(change.segment, change.word_index),
        text: correctionTextFrom(change.text),
        applyToAll: change.apply_to_all ?? false,
        addToVocabulary: change.add_to_vocabulary ?? true,
      });
      const audited = result.kind === "corrected" ? "transcript.word.correct" : "transcript.word.confirm";
      await auditTranscript(request, user.id, audited, result.transcriptKey);
      return apiJson({
        transcript_key: result.transcriptKey,
        version: result.version,
        result: result.kind,
        words: result.words,
        vocabulary: result.vocabulary,
      });
    }
    case "confirm": {
      const result = await confirmWord({
        ...target,
        word: wordRefFrom(change.segment, change.word_index),
        applyToAll: change.apply_to_all ?? false,
        addToVocabulary: change.add_to_vocabulary ?? false,
      });
      await auditTranscript(request, user.id, "transcript.word.confirm", result.transcriptKey);
      return apiJson({
        transcript_key: result.transcriptKey,
        version: result.version,
        result: "confirmed",
        words: result.words,
        vocabulary: result.vocabulary,
      });
    }
    case "name_speaker": {
      const result = await nameSpeaker({
        ...target,
        speaker: speakerFrom(change.speaker),
        ...speakerNameFrom(change.role, change.name),
      });
      await auditTranscript(request, user.id, "transcript.speaker.name", result.transcriptKey);
      return apiJson({ transcript_key: result.transcriptKey, version: result.version });
    }
    case "merge_speakers": {
      const result = await mergeSpeakers({ ...target, from: speakerFrom(change.from), into: speakerFrom(change.into) });
      await auditTranscript(request, user.id, "transcript.speaker.merge", result.transcriptKey);
      return apiJson({ transcript_key: result.transcriptKey, version: result.version });
    }
    case "move_segment": {
      const result = await moveSegment({ ...target, segment: segmentFrom(change.segment), to: speakerFrom(change.to) });
      await auditTranscript(request, user.id, "transcript.segment.move", result.transcriptKey);
      return apiJson({ transcript_key: result.transcriptKey, version: result.version });
    }
  }
});
