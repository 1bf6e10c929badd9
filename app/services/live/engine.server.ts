import { getConfig } from "../config/config.server";
import type { LiveEngine } from "./engine-types";

// The live engine configuration chose (SPEECH_LIVE_ENGINE): one per process, made on first use, so a missing
// model or key shows at the first live session and on /api/health, never as a failed start. The local engine's
// native modules load only when it is used.

let current: { engine: LiveEngine; source: object } | undefined;

function lazy(name: LiveEngine["name"], load: () => Promise<LiveEngine>): LiveEngine {
  let loading: Promise<LiveEngine> | undefined;
  const engine = () => (loading ??= load());
  return {
    name,
    start: async (options) => (await engine()).start(options),
    check: async (timeoutMs) => (await engine()).check(timeoutMs),
  };
}

export function getLiveEngine(): LiveEngine {
  const speech = getConfig().speech;
  if (current?.source === speech) return current.engine;
  const engine =
    speech.live.engine === "speechmatics"
      ? lazy("speechmatics", async () =>
          (await import("./engines/speechmatics-rt.server")).createSpeechmaticsRealtimeEngine({
            apiKey: speech.speechmatics.apiKey ?? "",
            realtimeUrl: speech.speechmatics.realtimeUrl,
          }),
        )
      : lazy("local", async () =>
          (await import("./engines/local-live.server")).createLocalLiveEngine({
            // Live segments get no speaker separation: its models are neither needed nor fetched for live alone.
            ...speech.local,
            segmentationModel: undefined,
            embeddingModel: undefined,
          }),
        );
  current = { engine, source: speech };
  return engine;
}

/** For tests: a real engine built with test settings (a local protocol server, a scripted engine). */
export function setLiveEngine(engine: LiveEngine | undefined) {
  current = engine ? { engine, source: getConfig().speech } : undefined;
}
