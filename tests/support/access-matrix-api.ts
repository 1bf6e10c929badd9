import { get, send, submit, type Door, type Probe, type RouteCheck } from "./access-matrix";
import type { Keys } from "./access-matrix-fixture";
import { livePayload } from "./live-save";

// The JSON API (SPEC §7) and the live door in the access matrix: what B sends with A's ids and keys. Every call
// goes through both doors, the session cookie of the app's own pages and the bearer token of an API client.

const BOTH: Door[] = ["cookie", "bearer"];

const notFound = (probe: Probe): Probe => ({ ...probe, expect: 404 });

type Check = RouteCheck<Keys>;
const owned = (probes: (k: Keys) => Probe[]): Check => ({ kind: "owned", doors: BOTH, probes });
const ownDataOnly = (probes: (k: Keys) => Probe[]): Check => ({ kind: "own-data-only", doors: BOTH, probes });

export const apiRoutes: Record<string, Check> = {
  "api.arztbrief.$": owned(({ a }) => [
    get(`/api/arztbrief/${a.letterParam}`, { "*": a.letterParam }),
    get(`/api/arztbrief/${a.letterKey}`, { "*": a.letterKey }),
    send(
      `/api/arztbrief/${a.letterParam}`,
      { content: "Gestohlen." },
      { method: "PUT", params: { "*": a.letterParam } },
    ),
  ]),
  "api.arztbrief-evidence.$": owned(({ a }) => [
    get(`/api/arztbrief-evidence/${a.letterParam}`, { "*": a.letterParam }),
    send(
      `/api/arztbrief-evidence/${a.letterParam}`,
      { action: "confirm", sentence: "0".repeat(32), flag: "dose" },
      { params: { "*": a.letterParam } },
    ),
    send(
      `/api/arztbrief-evidence/${a.letterParam}`,
      { action: "propose_omission", omission: 0 },
      { params: { "*": a.letterParam } },
    ),
  ]),
  "api.arztbrief-export.$": owned(({ a }) => [
    ...["pdf", "text"].map((format) =>
      send(`/api/arztbrief-export/${a.letterParam}`, { format, keep: true }, { params: { "*": a.letterParam } }),
    ),
  ]),
  "api.arztbrief-regenerate.$": owned(({ a }) => [
    get(`/api/arztbrief-regenerate/${a.letterParam}`, { "*": a.letterParam }),
    send(
      `/api/arztbrief-regenerate/${a.letterParam}`,
      { scope: "section", section: "Befund" },
      { params: { "*": a.letterParam } },
    ),
  ]),
  "api.arztbriefe": ownDataOnly(() => [get("/api/arztbriefe")]),
  "api.audio-playback.$": owned(({ a }) =>
    [a.recordingKey, a.uploadedKey].map((key) => get(`/api/audio-playback/${key}`, { "*": key })),
  ),
  // Stateless: the conversation is the request's own messages; nothing stored is read.
  "api.chat-request": ownDataOnly(() => [
    send("/api/chat-request", { messages: [{ role: "user", content: "Was habe ich zuletzt gefragt?" }] }),
  ]),
  "api.confirm-realtime-audio": owned(({ a }) => [send("/api/confirm-realtime-audio", { key: a.liveAudioKey })]),
  "api.delete-all": owned(({ a }) => [
    send("/api/delete-all", { s3_key: a.recordingKey, transcript_key: a.transcriptKey, arztbrief_key: a.letterKey }),
  ]),
  "api.delete-arztbrief": owned(({ a }) => [send("/api/delete-arztbrief", { key: a.letterKey })]),
  "api.delete-transcript": owned(({ a }) => [send("/api/delete-transcript", { transcript_key: a.transcriptKey })]),
  // A patient id names the practice's record system (gated by disable_mfiles), not anything a user owns.
  "api.extract-mfiles-pdf-context": ownDataOnly(() => [send("/api/extract-mfiles-pdf-context", { patient_id: "P-1" })]),
  "api.extract-pdf-from-s3": owned(({ a }) => [send("/api/extract-pdf-from-s3", { s3_keys: a.pdfKeys })]),
  "api.files": ownDataOnly(() => [get("/api/files")]),
  "api.force-cleanup": owned(({ a }) => [send("/api/force-cleanup", { s3_key: a.recordingKey })]),
  "api.get-pdf-upload-urls": ownDataOnly(() => [send("/api/get-pdf-upload-urls", { filenames: ["b.pdf"] })]),
  // The live variant names a recording by its key; the upload variant makes a new one (see mass assignment).
  "api.get-upload-url": owned(({ a }) => [
    send("/api/get-upload-url", { file_name: "x.webm", file_type: "audio/webm", specific_key: a.liveAudioKey }),
  ]),
  "api.medical-letter-v2": owned(({ a }) => [
    send("/api/medical-letter-v2", {
      source_key: a.recordingKey,
      transcript_data: "x",
      original_filename: "x.wav",
      metadata: { template_id: a.templateId },
    }),
  ]),
  "api.prompts.$id": owned(({ a }) => [
    // GET is refused to everyone before any id is looked at.
    get(`/api/prompts/${a.promptId}`, { id: a.promptId }, 405),
    send(`/api/prompts/${a.promptId}`, undefined, { method: "DELETE", params: { id: a.promptId } }),
  ]),
  "api.prompts": ownDataOnly(() => [get("/api/prompts"), send("/api/prompts", { title: "Eigener", prompt_text: "x" })]),
  // Stateless: letter and transcript come in the request; nothing stored is read.
  "api.refine-arztbrief-bulk": ownDataOnly(() => [
    send("/api/refine-arztbrief-bulk", { arztbrief_content: "Befund: x", query: "kürzer", language_code: "de-DE" }),
  ]),
  "api.refine-arztbrief-structured": ownDataOnly(() => [
    send("/api/refine-arztbrief-structured", { arztbrief_text: "Befund: x", query: "kürzer", language_code: "de-DE" }),
  ]),
  "api.rename-file": owned(({ a }) => [
    send("/api/rename-file", { s3_key: a.recordingKey, display_name: "Gestohlen" }),
  ]),
  "api.save-realtime-transcript": ownDataOnly(() => [send("/api/save-realtime-transcript", livePayload())]),
  "api.speechmatics-jwt": ownDataOnly(() => [send("/api/speechmatics-jwt")]),
  "api.structure.custom-template": owned(({ a }) => [
    send(`/api/structure/custom-template?template_id=${a.templateId}&language_code=de-DE`, undefined, {
      method: "DELETE",
    }),
  ]),
  "api.structure.repository": ownDataOnly(() => [get("/api/structure/repository?language=de")]),
  "api.structure.templates": ownDataOnly(() => [get("/api/structure/templates?language=de")]),
  "api.structure.user": owned(({ a }) => [
    get(`/api/structure/user?template=${a.templateId}&language=de`),
    send(
      `/api/structure/user?template=${a.templateId}&language=de`,
      { structure: [{ name: "Befund", description: "Befund" }], prompt: "" },
      { method: "PUT" },
    ),
  ]),
  // Add, remove and reset take system templates only: the caller's own collection. A's custom template is as
  // unknown there as any other id.
  "api.structure.user_.add-access": ownDataOnly(({ a }) => [
    send("/api/structure/user/add-access", { template_id: "entlassbrief", language_code: "de-DE" }),
    notFound(send("/api/structure/user/add-access", { template_id: a.templateId, language_code: "de-DE" })),
  ]),
  "api.structure.user_.rag-permission": ownDataOnly(({ a }) => [
    get("/api/structure/user/rag-permission"),
    send("/api/structure/user/rag-permission", { rag_agreed: true, user_id: a.userId }),
  ]),
  "api.structure.user_.remove-access": ownDataOnly(({ a }) => [
    send("/api/structure/user/remove-access", { template_id: "entlassbrief", language_code: "de-DE" }),
    notFound(send("/api/structure/user/remove-access", { template_id: a.templateId, language_code: "de-DE" })),
  ]),
  "api.structure.user_.reset": ownDataOnly(({ a }) => [
    send("/api/structure/user/reset?template=default&language=de"),
    notFound(send(`/api/structure/user/reset?template=${a.templateId}&language=de`)),
  ]),
  "api.transcribe_v2": owned(({ a }) => [send("/api/transcribe_v2", { s3_key: a.uploadedKey })]),
  "api.transcribe_v2_.$job.status": owned(({ a }) => [
    get(`/api/transcribe_v2/${a.jobName}/status`, { job: a.jobName }),
  ]),
  "api.transcript-corrections": owned(({ a }) => [
    send("/api/transcript-corrections", {
      transcript_key: a.transcriptKey,
      base_version: 1,
      action: "correct",
      segment: "t0p0",
      word_index: 0,
      text: "Gestohlen",
    }),
    send("/api/transcript-corrections", {
      transcript_key: a.liveTranscriptKey,
      base_version: 1,
      action: "name_speaker",
      speaker: "S1",
      role: "doctor",
    }),
  ]),
  "api.transcript-review.$": owned(({ a }) => [
    get(`/api/transcript-review/${a.transcriptParam}`, { "*": a.transcriptParam }),
  ]),
  "api.transcript_v2.$": owned(({ a }) =>
    [a.transcriptParam, a.transcriptKey, a.liveTranscriptKey].map((key) =>
      get(`/api/transcript_v2/${key}`, { "*": key }),
    ),
  ),
  "api.update-file-metadata": owned(({ a }) => [
    send("/api/update-file-metadata", { s3_key: a.recordingKey, metadata: { display_name: "Gestohlen" } }),
    send("/api/update-file-metadata", { s3_key: a.multipartKey, metadata: {} }),
  ]),
  "api.update-file-tags": owned(({ a }) => [
    send("/api/update-file-tags", { s3_key: a.recordingKey, tags: ["gestohlen"], update_all_related: true }),
  ]),
  "api.upload-parts.abort": owned(({ a }) => [send("/api/upload-parts/abort", { key: a.multipartKey })]),
  "api.upload-parts.complete": owned(({ a }) => [send("/api/upload-parts/complete", { key: a.multipartKey })]),
  "api.upload-parts.start": ownDataOnly(() => [
    send("/api/upload-parts/start", {
      file_name: "b.wav",
      file_type: "audio/wav",
      file_size: 6 * 1024 * 1024,
      language_code: "de",
    }),
  ]),
  "api.upload-parts.status": owned(({ a }) => [send("/api/upload-parts/status", { key: a.multipartKey })]),
  "api.upload-parts.urls": owned(({ a }) => [
    send("/api/upload-parts/urls", { key: a.multipartKey, part_numbers: [1, 2] }),
  ]),
  "live.sessions": ownDataOnly(() => [send("/live/sessions", { kind: "recording", language: "de" })]),
  "live.sessions.$": owned(({ a }) => {
    const id = a.liveSessionId;
    const at = (what: string) => ({ "*": what ? `${id}/${what}` : id });
    return [
      get(`/live/sessions/${id}`, at("")),
      get(`/live/sessions/${id}/events`, at("events")),
      send(`/live/sessions/${id}/start`, { message: "StartRecognition" }, { params: at("start") }),
      send(`/live/sessions/${id}/audio?seq=1`, undefined, { params: at("audio") }),
      send(`/live/sessions/${id}/end`, { message: "EndOfStream", last_seq_no: 0 }, { params: at("end") }),
      send(`/live/sessions/${id}/discard`, undefined, { params: at("discard") }),
      send(`/live/sessions/${id}/save`, livePayload(), { params: at("save") }),
    ];
  }),
  // The chat screen's streamed send: B's own conversation only. GET is refused to everyone.
  "resources.chat-stream": ownDataOnly(() => [
    get("/resources/chat-stream", undefined, 405),
    submit("/resources/chat-stream", { intent: "send", question: "Was habe ich zuletzt gefragt?" }),
  ]),
};
