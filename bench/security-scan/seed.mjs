// The data the scanners work on: each tool's clinician signs in and seeds one of everything through the JSON API.
import fs from "node:fs";
import path from "node:path";
import { until } from "../support-seed.mjs";
import { signIn } from "../support.mjs";
import { livePayload } from "./api-targets.mjs";
import { APP, run } from "./config.mjs";

const TEXT =
  "Guten Tag, Frau Becker. Seit wann haben Sie die Atemnot? Seit etwa zwei Wochen, vor allem beim Treppensteigen. " +
  "Der Blutdruck liegt bei hundertvierzig zu neunzig. Wir machen ein Belastungs-EKG und sehen uns in einer Woche wieder.";

/** The session cookie of a demo account; sign-in's emptied helper cookies (oauth state, return path) left out. */
export async function sessionOf(account) {
  const cookie = await signIn(APP, account);
  return cookie
    .split("; ")
    .filter((pair) => !pair.endsWith("="))
    .join("; ");
}

/** Ten seconds of German speech (espeak-ng), 16 kHz mono 16-bit WAV. */
export async function makeSpeech(dir) {
  const raw = path.join(dir, "espeak.wav");
  const out = path.join(dir, "speech.wav");
  await run("espeak-ng", ["-v", "de", "-w", raw, "--", TEXT]);
  await run("sox", [raw, "-r", "16000", "-c", "1", "-b", "16", "-e", "signed-integer", out, "trim", "0", "10"]);
  return fs.readFileSync(out);
}

function apiClient(cookie) {
  const call = async (method, p, body, { ok = true } = {}) => {
    const response = await fetch(`${APP}${p}`, {
      method,
      headers: { cookie, origin: APP, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    if (ok && !response.ok) throw new Error(`${method} ${p} → ${response.status} ${text.slice(0, 300)}`);
    try {
      return text ? JSON.parse(text) : null;
    } catch {
      throw new Error(`${method} ${p} → ${response.status}, not JSON: ${text.slice(0, 300)}`);
    }
  };
  return {
    get: (p) => call("GET", p),
    post: (p, body) => call("POST", p, body ?? {}),
    put: (p, body) => call("PUT", p, body),
  };
}

/** One of everything the scanners should find with real ids: recording, transcript, letter, template, … */
export async function seed(cookie, { wav, pdf }) {
  const api = apiClient(cookie);
  const slot = await api.post("/api/get-upload-url", {
    file_name: "Visite Becker.wav",
    file_type: "audio/wav",
    language_code: "de",
    additional_context: "Vorbefund: Belastungsdyspnoe.",
  });
  const put = await fetch(slot.url, { method: "PUT", headers: { "content-type": "audio/wav" }, body: wav });
  if (!put.ok) throw new Error(`PUT recording → ${put.status}`);
  await api.post("/api/update-file-metadata", { s3_key: slot.key, metadata: {} });
  await api.post("/api/rename-file", { s3_key: slot.key, display_name: "Visite Becker" });
  await api.post("/api/update-file-tags", { s3_key: slot.key, tags: ["kardio"], update_all_related: true });
  const { job_name: jobName } = await api.post("/api/transcribe_v2", { s3_key: slot.key });
  const status = await until("transcript", async () => {
    const s = await api.get(`/api/transcribe_v2/${encodeURIComponent(jobName)}/status`);
    if (s.status === "failed") throw new Error(`transcription failed: ${JSON.stringify(s)}`);
    return s.status === "completed" && s;
  });
  const transcriptKey = status.transcript_key;

  const templateBody = (id, name) => ({
    template_id: id,
    custom_name: name,
    language_code: "de-DE",
    structure_elements: [
      { name: "Anamnese", description: "Beschwerden und Verlauf" },
      { name: "Befund", description: "Untersuchungsbefund" },
    ],
    prompt: "Knapp und sachlich.",
  });
  const { template_id: templateId } = await api.post(
    "/api/structure/custom-template",
    templateBody("kardio-kurz", "Kardiologie kurz"),
  );
  const { template_id: structureTemplateId } = await api.post(
    "/api/structure/custom-template",
    templateBody("struktur", "Struktur"),
  );
  const { template_id: spareTemplateId } = await api.post(
    "/api/structure/custom-template",
    templateBody("zum-loeschen", "Zum Löschen"),
  );
  const structure = await api.get(`/api/structure/user?template=${encodeURIComponent(templateId)}&language=de`);
  const elementId = structure.elements.find((e) => e.id)?.id ?? structure.elements[0]?.name;

  // Idempotent: asked again, the call answers with the letter's key once the job has written it.
  const letterRequest = {
    source_key: slot.key,
    transcript_data: "",
    original_filename: "Visite Becker.wav",
    metadata: { template_id: templateId },
  };
  const created = await until("letter", async () => {
    const answer = await api.post("/api/medical-letter-v2", letterRequest);
    return answer.status === "completed" && answer.key && answer;
  });
  const letterKey = created.key;
  const letterParam = letterKey.replace(/^arztbriefe\//, "");
  const { prompt } = await api.post("/api/prompts", { title: "Kürzer", prompt_text: "Bitte kürzer fassen." });

  const pdfs = await api.post("/api/get-pdf-upload-urls", { filenames: ["Befund.pdf"] });
  const [{ upload_url: pdfUrl, s3_key: pdfKey }] = pdfs.upload_urls;
  const pdfPut = await fetch(pdfUrl, { method: "PUT", headers: { "content-type": "application/pdf" }, body: pdf });
  if (!pdfPut.ok) throw new Error(`PUT pdf → ${pdfPut.status}`);
  const multipart = await api.post("/api/upload-parts/start", {
    file_name: "Lang.wav",
    file_type: "audio/wav",
    file_size: 6 * 1024 * 1024,
    language_code: "de",
  });
  // A saved live recording with its audio uploaded afterwards, as the recorder does it.
  const saved = await api.post("/api/save-realtime-transcript", livePayload());
  const liveSlot = await api.post("/api/get-upload-url", {
    file_name: "live.wav",
    file_type: "audio/wav",
    specific_key: saved.audio_key,
  });
  const livePut = await fetch(liveSlot.url, { method: "PUT", headers: { "content-type": "audio/wav" }, body: wav });
  if (!livePut.ok) throw new Error(`PUT live audio → ${livePut.status}`);
  await api.post("/api/confirm-realtime-audio", { key: saved.audio_key });
  const live = await fetch(`${APP}/live/sessions`, {
    method: "POST",
    headers: { cookie, "content-type": "application/json", origin: APP, "sec-fetch-site": "same-origin" },
    body: JSON.stringify({ kind: "recording", language: "de" }),
  }).then((r) => r.json());
  return {
    recordingKey: slot.key,
    jobName,
    transcriptKey,
    transcriptParam: transcriptKey.replace(/^transcripts\//, ""),
    letterKey,
    letterParam,
    templateId,
    structureTemplateId,
    spareTemplateId,
    liveAudioKey: saved.audio_key,
    elementId,
    promptId: prompt.id,
    pdfKey,
    multipartKey: multipart.key,
    liveSessionId: live.id ?? live.session_id,
  };
}
