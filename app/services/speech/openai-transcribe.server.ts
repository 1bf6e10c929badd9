import { openAsBlob } from "node:fs";
import { FormData, type Response } from "undici";

import { DEFAULT_RETRY, fetchWithTimeout, httpErrorFactory, withRetries, type RetryPolicy } from "./retry";
// One prompt rule for every Whisper engine (local and OpenAI-compatible): vocabulary.server.ts.
import { whisperPrompt } from "./vocabulary.server";
import { answerSchema, toResult } from "./openai-transcribe-answer.server";
import {
  SpeechEngineError,
  type EngineHealth,
  type EngineResult,
  type SpeechEngine,
  type SpeechRequest,
} from "./types";

// The speech engine for an OpenAI-compatible transcription server (PROTOCOLS.md §3.1, §3.3, §3.4): OpenAI's
// whisper-1, speaches/faster-whisper-server, vLLM, Ollama. One multipart POST per recording asking for
// verbose_json with word and segment timestamps; the answer is read tolerantly because every server fills
// it differently:
// - Confidence: OpenAI gives no per-word probability. A word takes exp(avg_logprob) of the segment it falls
//   in (the mean token probability of that segment, clamped to 0..1); a word's own `probability`
//   (faster-whisper/speaches) wins when present. No figure at all → 0.5 (unknown).
// - Words: `words` when the server sent them. Without them, each segment's text is split on whitespace and
//   the segment's time is shared evenly between its words (times are then approximate, to the segment).
//   With neither (Ollama answers only {"text"}), the words are spread evenly over the whole recording.
// - Punctuation: Whisper attaches it to the word ("Tag."); trailing . , ? ! ; : become tokens of their own.
//   OpenAI's `words` carry no punctuation at all, so it is taken back from the punctuated `text` when the
//   word sequence lines up with it.
// - No speaker separation: every word is speaker "S1".

export type OpenAiTranscriptionConfig = {
  /** The API root, e.g. http://whisper.local:8000/v1 */
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** For the whole upload and answer; 10 min by default (openai-node's default). */
  requestTimeoutMs?: number;
  retry?: RetryPolicy;
};

const DEFAULT_REQUEST_TIMEOUT_MS = 10 * 60_000;
const DEFAULT_CHECK_TIMEOUT_MS = 5_000;
// ---- The engine ----------------------------------------------------------------------------------------

export function createOpenAiTranscriptionEngine(config: OpenAiTranscriptionConfig): SpeechEngine {
  const baseUrl = config.baseUrl.trim().replace(/\/+$/, "");
  const timeoutMs = config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const policy = config.retry ?? DEFAULT_RETRY;
  const host = baseUrl ? safeHost(baseUrl) : "";

  function safeHost(url: string) {
    try {
      return new URL(url).host;
    } catch {
      return "the transcription server";
    }
  }

  function headers(): Record<string, string> {
    const out: Record<string, string> = { Accept: "application/json" };
    if (config.apiKey) out.Authorization = `Bearer ${config.apiKey}`;
    return out;
  }

  // openai-node's reading (PROTOCOLS.md §3.3): statuses, x-should-retry, quota, Retry-After (speech/retry.ts).
  const httpError = httpErrorFactory(SpeechEngineError, {
    host,
    apiKey: config.apiKey,
    settings: {
      apiKey: "OPENAI_TRANSCRIBE_API_KEY",
      url: "OPENAI_TRANSCRIBE_URL",
      notFound: "OPENAI_TRANSCRIBE_URL and OPENAI_TRANSCRIBE_MODEL",
    },
    notConfiguredKey: "transcriptions:errors.engineNotConfigured",
    special: (status, _detail, said) =>
      status === 413
        ? `${host} refused the audio as too large (413; OpenAI takes at most 25 MiB, about 13 minutes of WAV)${said}`
        : undefined,
  });

  async function readBody(response: Response, signal: AbortSignal | undefined): Promise<string> {
    try {
      return await response.text();
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      throw new SpeechEngineError(
        "transient",
        `The answer from ${host} broke off or did not complete within ${timeoutMs} ms`,
        { cause: error },
      );
    }
  }

  async function attempt(request: SpeechRequest, audio: Blob, prompt: string): Promise<EngineResult> {
    const form = new FormData();
    form.append("file", audio, "audio.wav");
    form.append("model", config.model);
    form.append("language", request.language);
    form.append("response_format", "verbose_json");
    form.append("timestamp_granularities[]", "word");
    form.append("timestamp_granularities[]", "segment");
    form.append("temperature", "0");
    if (prompt) form.append("prompt", prompt);

    const response = await fetchWithTimeout(`${baseUrl}/audio/transcriptions`, {
      method: "POST",
      headers: headers(),
      body: form,
      timeoutMs,
      signal: request.signal,
      upload: true,
    });
    const body = await readBody(response, request.signal);
    if (response.status < 200 || response.status >= 300) throw httpError(response, body);

    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch (error) {
      // Most likely cut off on the way (a proxy, a restarting server): worth another try.
      throw new SpeechEngineError("transient", `${host} answered 200 without valid JSON`, { cause: error });
    }
    const parsed = answerSchema.safeParse(json);
    if (!parsed.success) {
      // Well-formed JSON of the wrong shape is what this server answers; asking again will not change it.
      throw new SpeechEngineError("permanent", `${host} answered with an unexpected transcription format`, {
        cause: parsed.error,
      });
    }
    return toResult(parsed.data, request);
  }

  return {
    name: "openai",

    async transcribe(request) {
      if (!baseUrl) throw new SpeechEngineError("not_configured", "OPENAI_TRANSCRIBE_URL is not set");
      let audio: Blob;
      try {
        audio = await openAsBlob(request.file, { type: "audio/wav" });
      } catch (error) {
        throw new SpeechEngineError("permanent", "The normalised audio file cannot be read", { cause: error });
      }
      const prompt = whisperPrompt(request.vocabulary);
      return withRetries(() => attempt(request, audio, prompt), { policy, signal: request.signal });
    },

    async check(checkTimeoutMs = DEFAULT_CHECK_TIMEOUT_MS): Promise<EngineHealth> {
      if (!baseUrl) return { status: "not_configured", detail: "OPENAI_TRANSCRIBE_URL is not set" };
      try {
        const response = await fetchWithTimeout(`${baseUrl}/models`, {
          method: "GET",
          headers: headers(),
          timeoutMs: checkTimeoutMs,
        });
        await response.body?.cancel().catch(() => {});
        const { status } = response;
        if (status >= 200 && status < 300) return { status: "healthy" };
        // Not every compatible server lists models; one that answers at all is up.
        if (status === 404 || status === 405) return { status: "healthy", detail: "no /models endpoint" };
        if (status === 401 || status === 403)
          return { status: "error", detail: `${host} refused the API key (${status})` };
        return { status: "error", detail: `${host} answered ${status}` };
      } catch (error) {
        return {
          status: "error",
          detail: error instanceof SpeechEngineError ? error.message : `Cannot reach ${host}`,
        };
      }
    },
  };
}
