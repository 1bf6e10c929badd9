import { getConfig } from "../config/config.server";
import { createOpenAiTranscriptionEngine } from "./openai-transcribe.server";
import { createSpeechmaticsEngine } from "./speechmatics.server";
import type { SpeechEngine } from "./types";

// The engine configuration chose (SPEECH_ENGINE): one instance per process, made on first use, so a
// missing model or key shows as a clear error at the first transcription and on /api/health, never as
// a failed start.

let current: { engine: SpeechEngine; source: object } | undefined;

/** The local engine's module (and its native bindings) loads on first use, not with the app. */
function lazyLocalEngine(config: Parameters<typeof import("./local-engine.server").createLocalSpeechEngine>[0]) {
  let loading: Promise<SpeechEngine> | undefined;
  const load = () =>
    (loading ??= import("./local-engine.server").then((module) => module.createLocalSpeechEngine(config)));
  return {
    name: "local",
    transcribe: async (request) => (await load()).transcribe(request),
    check: async (timeoutMs) => (await load()).check(timeoutMs),
  } satisfies SpeechEngine;
}

export function getSpeechEngine(): SpeechEngine {
  const config = getConfig();
  // A new configuration (tests install one per suite) gets a new engine.
  if (current?.source === config.speech) return current.engine;
  const speech = config.speech;
  let engine: SpeechEngine;
  switch (speech.engine) {
    case "speechmatics":
      engine = createSpeechmaticsEngine({
        apiKey: speech.speechmatics.apiKey ?? "",
        batchUrl: speech.speechmatics.batchUrl,
      });
      break;
    case "openai":
      engine = createOpenAiTranscriptionEngine({
        baseUrl: speech.openai.baseUrl!,
        apiKey: speech.openai.apiKey,
        model: speech.openai.model,
      });
      break;
    case "local":
      engine = lazyLocalEngine(speech.local);
      break;
  }
  current = { engine, source: speech };
  return engine;
}

/** For tests: a real adapter built with test settings (short backoff, a local server). */
export function setSpeechEngine(engine: SpeechEngine | undefined) {
  current = engine ? { engine, source: getConfig().speech } : undefined;
}
