// What sqlmap is pointed at. `*` marks each place it injects (sqlmap tests only the marked places then).
// This file: the target kinds and the JSON calls (app/routes/api.* and the live door's); the screens are in
// targets.mjs.

/** A JSON call: `body` is sent as JSON; `*` inside its strings and in the path marks injection points. */
export const json = (method, url, body) => ({ kind: "json", method, url, data: body && JSON.stringify(body) });
/** A page with query parameters (a screen's loader). */
export const page = (url) => ({ kind: "page", method: "GET", url });
/** A form post as the browser sends it (urlencoded). */
export const form = (url, fields) => ({
  kind: "form",
  method: "POST",
  url,
  data: Object.entries(fields)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v).replace(/%2A/g, "*")}`)
    .join("&"),
});
export const q = (value) => encodeURIComponent(value);

/**
 * Every route file app/routes/api.* (plus the live door's and the chat's own JSON calls): its requests with
 * the seeded ids. Calls that destroy what the later targets need are `last`.
 */
export function apiTargets(ids) {
  /** Runs after everything else, in `order`: it deletes what other targets use. */
  const last = (order, target) => ({ ...target, last: order });
  return {
    "api.arztbrief.$": [
      json("GET", `/api/arztbrief/${ids.letterParam}*`),
      json("PUT", `/api/arztbrief/${ids.letterParam}`, { content: "Anamnese: Husten seit drei Tagen.*" }),
    ],
    "api.arztbriefe": [json("GET", "/api/arztbriefe?language=de*")],
    "api.audio-playback.$": [json("GET", `/api/audio-playback/${ids.recordingKey}*`)],
    "api.chat-request": [
      json("POST", "/api/chat-request", {
        messages: [{ role: "user*", content: "Was ist NYHA II?*" }],
        language: "de-DE*",
      }),
    ],
    "api.confirm-realtime-audio": [json("POST", "/api/confirm-realtime-audio", { key: `${ids.liveAudioKey}*` })],
    "api.delete-all": [
      last(
        9,
        json("POST", "/api/delete-all", {
          s3_key: `${ids.recordingKey}*`,
          transcript_key: `${ids.transcriptKey}*`,
          arztbrief_key: `${ids.letterKey}*`,
        }),
      ),
    ],
    "api.delete-arztbrief": [last(6, json("POST", "/api/delete-arztbrief", { key: `${ids.letterKey}*` }))],
    "api.delete-transcript": [
      last(7, json("POST", "/api/delete-transcript", { transcript_key: `${ids.transcriptKey}*` })),
    ],
    "api.extract-mfiles-pdf-context": [json("POST", "/api/extract-mfiles-pdf-context", { patient_id: "P-1001*" })],
    "api.extract-pdf-from-s3": [json("POST", "/api/extract-pdf-from-s3", { s3_keys: [`${ids.pdfKey}*`] })],
    "api.files": [json("GET", "/api/files?language=de*")],
    "api.force-cleanup": [last(8, json("POST", "/api/force-cleanup", { s3_key: `${ids.recordingKey}*` }))],
    "api.get-pdf-upload-urls": [json("POST", "/api/get-pdf-upload-urls", { filenames: ["Befund.pdf*"] })],
    "api.get-upload-url": [
      json("POST", "/api/get-upload-url", {
        file_name: "Visite.wav*",
        file_type: "audio/wav*",
        language_code: "de*",
        additional_context: "Vorbefund*",
      }),
      // The live recorder's variant: a slot for the audio of a saved live transcript.
      json("POST", "/api/get-upload-url", {
        file_name: "live.wav*",
        file_type: "audio/wav*",
        specific_key: `${ids.liveAudioKey}*`,
      }),
    ],
    "api.medical-letter-v2": [
      json("POST", "/api/medical-letter-v2", {
        source_key: `${ids.recordingKey}*`,
        transcript_data: "x*",
        original_filename: "Visite.wav*",
        metadata: { template_id: `${ids.templateId}*` },
      }),
    ],
    "api.prompts.$id": [last(1, json("DELETE", `/api/prompts/${ids.promptId}*`))],
    "api.prompts": [
      json("GET", "/api/prompts?language=de*"),
      json("POST", "/api/prompts", { title: "Kürzer*", prompt_text: "Bitte kürzer fassen.*" }),
    ],
    "api.refine-arztbrief-bulk": [
      json("POST", "/api/refine-arztbrief-bulk", {
        arztbrief_content: {
          structured_output: [{ Anamnese: "Husten seit drei Tagen.*" }, { Befund: "Unauffällig.*" }],
        },
        query: "kürzer*",
        language_code: "de-DE*",
        transcript_data: "Husten*",
      }),
    ],
    "api.refine-arztbrief-structured": [
      json("POST", "/api/refine-arztbrief-structured", {
        arztbrief_text: "Anamnese: Husten.*",
        query: "kürzer*",
        language_code: "de-DE*",
        section_context: "Anamnese*",
        transcript_data: "Husten*",
      }),
    ],
    "api.rename-file": [
      json("POST", "/api/rename-file", { s3_key: `${ids.recordingKey}*`, display_name: "Visite Frau B*" }),
    ],
    "api.save-realtime-transcript": [json("POST", "/api/save-realtime-transcript", livePayload({ marked: true }))],
    "api.structure.custom-template": [
      json("POST", "/api/structure/custom-template", {
        template_id: "sqlmap-vorlage*",
        custom_name: "Sqlmap Vorlage*",
        language_code: "de-DE*",
        structure_elements: [{ name: "Befund*", description: "Befund*" }],
        prompt: "Kurz.*",
      }),
      last(
        2,
        json("DELETE", `/api/structure/custom-template?template_id=${q(ids.spareTemplateId)}*&language_code=de-DE*`),
      ),
    ],
    "api.structure.repository": [json("GET", "/api/structure/repository?language=de*")],
    "api.structure.templates": [json("GET", "/api/structure/templates?language=de*")],
    "api.structure.user": [
      json("GET", `/api/structure/user?template=${q(ids.structureTemplateId)}*&language=de*`),
      json("PUT", `/api/structure/user?template=${q(ids.structureTemplateId)}*&language=de*`, {
        structure: [{ name: "Befund*", description: "Befund*" }],
        prompt: "Kurz.*",
      }),
    ],
    "api.structure.user_.add-access": [
      json("POST", "/api/structure/user/add-access", { template_id: "entlassbrief*", language_code: "de-DE*" }),
    ],
    "api.structure.user_.rag-permission": [
      json("GET", "/api/structure/user/rag-permission?language=de*"),
      json("POST", "/api/structure/user/rag-permission", { rag_agreed: true, user_id: "x*" }),
    ],
    "api.structure.user_.remove-access": [
      json("POST", "/api/structure/user/remove-access", { template_id: "entlassbrief*", language_code: "de-DE*" }),
    ],
    "api.structure.user_.reset": [json("POST", "/api/structure/user/reset?template=entlassbrief*&language=de*")],
    "api.transcribe_v2": [
      json("POST", "/api/transcribe_v2", {
        s3_key: `${ids.recordingKey}*`,
        metadata: { display_name: "Visite*", language_code: "de*", template_id: "default*", tags: ["kardio*"] },
      }),
    ],
    "api.transcribe_v2_.$job.status": [json("GET", `/api/transcribe_v2/${q(ids.jobName)}*/status`)],
    "api.transcript_v2.$": [json("GET", `/api/transcript_v2/${ids.transcriptParam}*`)],
    "api.update-file-metadata": [
      json("POST", "/api/update-file-metadata", {
        s3_key: `${ids.recordingKey}*`,
        metadata: { display_name: "Visite*", template_id: "default*", tags: ["kardio*"] },
      }),
    ],
    "api.update-file-tags": [
      json("POST", "/api/update-file-tags", {
        s3_key: `${ids.recordingKey}*`,
        tags: ["kardio*", "nachsorge*"],
        update_all_related: true,
      }),
    ],
    "api.upload-parts.abort": [last(3, json("POST", "/api/upload-parts/abort", { key: `${ids.multipartKey}*` }))],
    "api.upload-parts.complete": [json("POST", "/api/upload-parts/complete", { key: `${ids.multipartKey}*` })],
    "api.upload-parts.start": [
      json("POST", "/api/upload-parts/start", {
        file_name: "Lang.wav*",
        file_type: "audio/wav*",
        file_size: 6 * 1024 * 1024,
        language_code: "de*",
        additional_context: "Vorbefund*",
      }),
    ],
    "api.upload-parts.status": [json("POST", "/api/upload-parts/status", { key: `${ids.multipartKey}*` })],
    "api.upload-parts.urls": [
      json("POST", "/api/upload-parts/urls", { key: `${ids.multipartKey}*`, part_numbers: [1, 2] }),
    ],
    "live.sessions": [json("POST", "/live/sessions", { kind: "recording*", language: "de*" })],
    "live.sessions.$": [
      json("GET", `/live/sessions/${ids.liveSessionId}*`),
      last(4, json("POST", `/live/sessions/${ids.liveSessionId}*/discard`)),
    ],
  };
}

/** A live recording's save payload (SPEC §3) as the recorder sends it; `marked`: with sqlmap's `*` marks. */
export function livePayload({ marked = false } = {}) {
  const m = marked ? "*" : "";
  const word = (content, start, speaker) => ({
    type: "word",
    start_time: start,
    end_time: start + 0.4,
    alternatives: [{ content, speaker, confidence: 0.9 }],
  });
  return {
    transcript_data: {
      results: [word(`Guten${m}`, 0, `S1${m}`), word("Tag", 0.5, "S1"), word("Schwindel", 1.2, "S2")],
      job: { started_at: "2025-05-12T08:15:00.000Z", data_name: `live${m}`, language: `de${m}`, duration: 2 },
    },
    display_name: `Live Visite${m}`,
    language_code: `de-DE${m}`,
    duration: 2,
    metadata: { template_id: `default${m}`, tags: `["Kardio"]${m}`, transcription_mode: `transcript${m}` },
    created_via: `realtime${m}`,
    additional_context: `Vorbefund${m}`,
    original_mime_type: `audio/wav${m}`,
  };
}

/** API routes sqlmap is not pointed at, and why. */
export const API_NOT_SCANNED = {
  "api.$": "the catch-all: a JSON 404 for every unknown path before anything is read",
  "api.health": "admin only (the scanned clinician gets 403 before any input is read); covered by admin-access tests",
  "api.usage-dashboard": "admin only (403 for the clinician before any input is read)",
  "api.speechmatics-jwt": "takes no input (no body, no parameters): the token is minted for the session's user alone",
};
