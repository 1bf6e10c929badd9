import { antivirusHealthCheck } from "../antivirus/antivirus.server";
import { getConfig } from "../config/config.server";
import { getDb, pingDatabase } from "../../models/db.server";
import { getLanguageModel } from "../llm/engine.server";
import { mediaConversionHealthCheck } from "../media/probe.server";
import { getSpeechEngine } from "../speech/engine.server";
import { getStorage } from "../storage/storage.server";
import { getLiveEngine } from "../live/engine.server";
import { createRealtimeToken } from "../live/speechmatics-token.server";

async function liveSpeechCheck(): Promise<{ status: CheckStatus; detail?: string }> {
  const { live, speechmatics } = getConfig().speech;
  const engine = await getLiveEngine().check(TIMEOUT_MS - 500);
  const parts = [`live engine ${live.engine}: ${engine.detail ?? engine.status}`];
  let status: CheckStatus = engine.status;
  // /api/speechmatics-jwt is served whenever a Speechmatics key is configured: ask for a temporary key.
  if (speechmatics.apiKey) {
    try {
      await createRealtimeToken({
        apiKey: speechmatics.apiKey,
        managementUrl: speechmatics.managementUrl,
        timeoutMs: 2_000,
      });
      parts.push("temporary keys: issued");
    } catch (error) {
      status = "error";
      parts.push(`temporary keys: ${error instanceof Error ? error.message : "request failed"}`);
    }
  }
  return { status, detail: parts.join("; ") };
}

// SPEC §3 "Health check". Every entry is a live check with a time-out; a
// service that is not configured (or not built yet) says so — never a
// hard-coded "healthy". Later capabilities register their own checks.

export type CheckStatus = "healthy" | "error" | "not_configured";
export type CheckResult = { status: CheckStatus; detail?: string; latency_ms?: number };
type Check = () => Promise<Omit<CheckResult, "latency_ms">>;

export const serviceTestNames = [
  "antivirus",
  "database",
  "llm_primary",
  "llm_secondary",
  "media_conversion",
  "speech_recognition",
  "speech_token",
] as const;
export const serviceNames = ["speech_service", "llm_client"] as const;

const TIMEOUT_MS = 3_000;

const notYet: Check = async () => ({ status: "not_configured", detail: "not available in this version" });

const checks = new Map<string, Check>([
  [
    "database",
    async () => {
      await pingDatabase(getDb(), 2_000);
      return { status: "healthy" };
    },
  ],
  ["storage", async () => getStorage().check(TIMEOUT_MS)],
  // Uploads are decoded in process (WebAssembly/JavaScript, media/decode.server.ts); the detail also names ffmpeg,
  // which the live path still encodes and remuxes with.
  ["media_conversion", () => mediaConversionHealthCheck()],
  // The clamd every upload is scanned by (ADR 0024), or "not configured".
  ["antivirus", () => antivirusHealthCheck(TIMEOUT_MS - 500)],
  // The configured speech engine's own live check (Speechmatics and OpenAI-compatible servers are asked;
  // the local engine checks its model files).
  ["speech_recognition", () => getSpeechEngine().check(TIMEOUT_MS - 200)],
  // The live side (ADR 0013): the live engine's own check (the relay's handshake, or the local models) and, when
  // a Speechmatics key is configured, the token service.
  ["speech_token", () => liveSpeechCheck()],
  [
    "speech_service",
    async () => {
      const result = await getSpeechEngine().check(TIMEOUT_MS - 200);
      return { ...result, detail: [`engine ${getConfig().speech.engine}`, result.detail].filter(Boolean).join(": ") };
    },
  ],
  // The configured language model's own live check (an OpenAI-compatible server is asked for its models; the
  // local engine checks its GGUF file). There is one model, so no secondary one to check.
  ["llm_primary", () => getLanguageModel().check(TIMEOUT_MS - 200)],
  ["llm_secondary", async () => ({ status: "not_configured", detail: "no secondary language model configured" })],
  [
    "llm_client",
    async () => {
      const result = await getLanguageModel().check(TIMEOUT_MS - 200);
      return { ...result, detail: [`engine ${getConfig().llm.engine}`, result.detail].filter(Boolean).join(": ") };
    },
  ],
]);

export function registerHealthCheck(name: string, check: Check) {
  checks.set(name, check);
}

async function run(name: string): Promise<CheckResult> {
  const check = checks.get(name) ?? notYet;
  const started = performance.now();
  try {
    const result = await Promise.race([
      check(),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS).unref(),
      ),
    ]);
    return { ...result, latency_ms: Math.round(performance.now() - started) };
  } catch (error) {
    return {
      status: "error",
      detail: error instanceof Error ? error.message.slice(0, 200) : "check failed",
      latency_ms: Math.round(performance.now() - started),
    };
  }
}

export async function healthReport() {
  const [storage, tests, services] = await Promise.all([
    run("storage"),
    Promise.all(serviceTestNames.map((name) => run(name))),
    Promise.all(serviceNames.map((name) => run(name))),
  ]);
  return {
    s3_connected: storage.status === "healthy",
    storage: { kind: getConfig().storage.kind, ...storage },
    service_tests: Object.fromEntries(serviceTestNames.map((name, i) => [name, tests[i]])),
    services: Object.fromEntries(serviceNames.map((name, i) => [name, services[i]])),
  };
}
