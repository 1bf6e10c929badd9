import { LIVE_SAMPLE_RATE } from "~/live/protocol";
import { getConfig } from "../config/config.server";
import { meter } from "../admin/usage.server";
import type { LiveEngineName } from "./engine-types";

// What live recognition costs (issue 8 "Usage"; ADR 0014). Realtime audio is priced per second from
// PRICE_SPEECH_LIVE_PER_MINUTE_USD (the batch price when unset) and recorded under SPEC §7's speechmatics-jwt,
// the call that opens realtime recognition in SPEC's design: the relay meters what each run fed its engine
// (recordings and dictation) past what the session's earlier runs metered, so audio a run re-feeds after a
// takeover is metered once (runner-publish.server.ts); the direct mode what a saved transcript covers (the
// server hears nothing else).
// An engine row, not a call: the calls stay the JSON calls made.

export const LIVE_ENDPOINT = "speechmatics-jwt";

/** Seconds of 16 kHz mono 16-bit PCM in `bytes`. */
export function pcmSeconds(bytes: number) {
  return bytes / (2 * LIVE_SAMPLE_RATE);
}

/** Records `seconds` of realtime recognition for a user without waiting (nothing for none). */
export function meterLiveAudio(args: { userId: string; seconds: number; engine: LiveEngineName }) {
  if (!(args.seconds > 0)) return;
  meter({
    userId: args.userId,
    endpoint: LIVE_ENDPOINT,
    units: Math.round(args.seconds * 1000) / 1000,
    unit: "audio_second",
    unitPriceUsd: args.engine === "local" ? 0 : getConfig().prices.speechLivePerMinuteUsd / 60,
  });
}
