import path from "node:path";
import { defineConfig, devices } from "@playwright/test";

// End-to-end tests drive Debian's Chromium (never a downloaded browser) against
// the built app on embedded defaults, with a fresh data directory per run.
const PORT = Number(process.env.E2E_PORT ?? 3100);
export const e2eDataDir = `./data/e2e-${PORT}`;
export const FLAG_PORT = PORT + 2;
/** The protocol-faithful Speechmatics server the main app transcribes with (tests/support/fake-speechmatics.ts). */
export const SPEECH_PORT = PORT + 5;
/** The protocol-faithful OpenAI-compatible chat server the main app writes letters with (tests/support/fake-llm-letters.ts). */
export const LLM_PORT = PORT + 6;
/** The protocol-faithful Speechmatics realtime server live recording relays to (tests/support/fake-speechmatics-rt.ts). */
export const RT_PORT = PORT + 7;
const flagDataDir = `./data/e2e-${FLAG_PORT}`;
/** An app on the embedded engines whose models come from the tests' model mirror (issue 21: first start). */
export const MODELS_APP_PORT = PORT + 8;
/** The protocol-faithful model mirror (tests/support/model-mirror.ts); it starts on hold, answering 503. */
export const MIRROR_PORT = PORT + 10;
const modelsDataDir = `./data/e2e-${MODELS_APP_PORT}`;

function serverEnv(port: number, dataDir: string) {
  return {
    PORT: String(port),
    DEV_OIDC_PORT: String(port + 1),
    APP_URL: `http://localhost:${port}`,
    DATA_DIR: dataDir,
    APP_ENV: "test",
    RATE_LIMIT_SIGNIN_PER_MINUTE: "1000",
    SESSION_IDLE_MINUTES: "30",
  };
}

/** Where scripts/test.mjs collects what the web servers print, for the log hygiene check (issue 9). */
const logCaptureDir = process.env.SKRIBENT_LOG_CAPTURE_DIR;
/** The web servers' names: the prefix of their lines in the output, and what the log capture keeps. */
const SERVERS = {
  speech: "fake-speech",
  llm: "fake-llm",
  realtime: "fake-speechmatics-rt",
  app: "app",
  flagApp: "app-flags",
  mirror: "fake-model-mirror",
  modelsApp: "app-models",
};
const logCapture: Array<[string, unknown]> = logCaptureDir
  ? [["./tests/setup/log-capture-reporter.ts", { dir: logCaptureDir, servers: Object.values(SERVERS) }]]
  : [];

const chromiumArgs = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
  // A microphone that plays a committed consultation (espeak-ng; see tests/e2e/fixtures/README.md), granted
  // without a prompt; tests that need a denied microphone revoke the permission in their own context.
  "--use-fake-ui-for-media-stream",
  "--use-fake-device-for-media-stream",
  `--use-file-for-fake-audio-capture=${path.resolve("tests/e2e/fixtures/consultation.wav")}`,
];

export default defineConfig({
  testDir: "tests/e2e",
  fullyParallel: false,
  workers: 1,
  forbidOnly: !!process.env.CI,
  retries: 0,
  timeout: 30_000,
  reporter: [...(process.env.PLAYWRIGHT_REPORTERS ?? "list").split(",").map((name) => [name]), ...logCapture] as never,
  use: {
    baseURL: `http://localhost:${PORT}`,
    locale: "de-DE",
    timezoneId: "Europe/Berlin",
    trace: "retain-on-failure",
    launchOptions: { executablePath: "/usr/bin/chromium", args: chromiumArgs },
  },
  projects: [
    {
      name: "js",
      // The view without JavaScript is the no-js project's alone.
      testIgnore: /-nojs\.spec\.ts/,
      use: { ...devices["Desktop Chrome"], javaScriptEnabled: true },
    },
    {
      name: "no-js",
      // The JavaScript budget is measured once, with JavaScript on; the upload script's and live audio's tests need it.
      // The first-start download is one download for the app: its test opens a page with and one without JavaScript.
      testIgnore: /(js-budget|upload-script|live|a11y|models-first-start)\.spec\.ts/,
      use: { ...devices["Desktop Chrome"], javaScriptEnabled: false },
    },
  ],
  webServer: [
    // Every server's stdout is piped, so that the log capture sees all they print.
    {
      name: SERVERS.speech,
      command: `node scripts/fake-speech-server.mjs --port ${SPEECH_PORT}`,
      port: SPEECH_PORT,
      stdout: "pipe",
      reuseExistingServer: false,
      timeout: 60_000,
    },
    {
      name: SERVERS.llm,
      command: `node scripts/fake-llm-server.mjs --port ${LLM_PORT}`,
      port: LLM_PORT,
      stdout: "pipe",
      reuseExistingServer: false,
      timeout: 60_000,
    },
    {
      name: SERVERS.realtime,
      command: `node scripts/fake-speechmatics-rt-server.mjs --port ${RT_PORT}`,
      port: RT_PORT,
      stdout: "pipe",
      reuseExistingServer: false,
      timeout: 60_000,
    },
    {
      name: SERVERS.app,
      command: `rm -rf ${e2eDataDir} build/.e2e-ready && npm run build --silent && touch build/.e2e-ready && node server/index.mjs`,
      url: `http://localhost:${PORT}/resources/healthz`,
      reuseExistingServer: false,
      timeout: 120_000,
      stdout: "pipe",
      env: {
        ...serverEnv(PORT, e2eDataDir),
        SPEECH_ENGINE: "speechmatics",
        SPEECHMATICS_API_KEY: "test-key",
        SPEECHMATICS_BATCH_URL: `http://127.0.0.1:${SPEECH_PORT}/eu1/v2`,
        SPEECH_LIVE_ENGINE: "speechmatics",
        SPEECHMATICS_RT_URL: `ws://127.0.0.1:${RT_PORT}/v2`,
        LLM_ENGINE: "openai",
        LLM_OPENAI_URL: `http://127.0.0.1:${LLM_PORT}/v1`,
        LLM_OPENAI_API_KEY: "test-key",
      },
    },
    {
      name: SERVERS.mirror,
      command: `node scripts/fake-model-mirror.mjs --port ${MIRROR_PORT} --hold`,
      port: MIRROR_PORT,
      stdout: "pipe",
      reuseExistingServer: false,
      timeout: 60_000,
    },
    {
      // The same build on the embedded engines with no model yet: they come from the mirror, which is on hold
      // until tests/e2e/models-first-start.spec.ts releases it. Letters go to the fake chat server.
      name: SERVERS.modelsApp,
      command: `until [ -f build/.e2e-ready ]; do sleep 0.2; done; rm -rf ${modelsDataDir} && node server/index.mjs`,
      url: `http://localhost:${MODELS_APP_PORT}/resources/healthz`,
      reuseExistingServer: false,
      timeout: 120_000,
      stdout: "pipe",
      env: {
        ...serverEnv(MODELS_APP_PORT, modelsDataDir),
        SPEECH_ENGINE: "local",
        // A Parakeet-shaped test model from the mirror's hub routes (scripts/fake-model-mirror.mjs), pinned from
        // the hub's LFS hashes into models.lock.json, that hears a known German sentence.
        LOCAL_RECOGNISER: "parakeet",
        LOCAL_PARAKEET_MODEL: "hf:skribent-tests/parakeet-tdt-test/parakeet-test",
        MODELS_HUB_URL: `http://127.0.0.1:${MIRROR_PORT}`,
        LOCAL_VAD_MODEL: "silero_vad.onnx",
        LOCAL_SEGMENTATION_MODEL: "none",
        LLM_ENGINE: "openai",
        LLM_OPENAI_URL: `http://127.0.0.1:${LLM_PORT}/v1`,
        LLM_OPENAI_API_KEY: "test-key",
        MODELS_URL: `http://127.0.0.1:${MIRROR_PORT}`,
        MODELS_RETRY_MAX_SECONDS: "2",
      },
    },
    {
      // The same build with disable_user_templates=1, for the flag's tests, and live audio in direct mode
      // (SPEECH_LIVE_MODE=direct, ADR 0013): the browser talks to the realtime server itself, with a short-lived key.
      name: SERVERS.flagApp,
      command: `until [ -f build/.e2e-ready ]; do sleep 0.2; done; rm -rf ${flagDataDir} && node server/index.mjs`,
      url: `http://localhost:${FLAG_PORT}/resources/healthz`,
      reuseExistingServer: false,
      timeout: 120_000,
      stdout: "pipe",
      // It also transcribes with the embedded local engine on the small test models of ../shared/models,
      // which load and run but recognise nothing: the clear "no speech" path end to end.
      env: {
        ...serverEnv(FLAG_PORT, flagDataDir),
        DISABLE_USER_TEMPLATES: "1",
        SPEECHMATICS_API_KEY: "test-key",
        SPEECH_LIVE_ENGINE: "speechmatics",
        SPEECH_LIVE_MODE: "direct",
        SPEECHMATICS_RT_URL: `ws://127.0.0.1:${RT_PORT}/v2`,
        SPEECHMATICS_MP_URL: `http://127.0.0.1:${RT_PORT}/v1`,
        SPEECH_ENGINE: "local",
        LOCAL_RECOGNISER: "whisper",
        LOCAL_WHISPER_MODEL: path.resolve("../shared/models/for-tests-ggml-tiny.bin"),
        LOCAL_VAD_MODEL: path.resolve("../shared/models/silero_vad.onnx"),
        LOCAL_SEGMENTATION_MODEL: "none",
        // The letter model is not there and is not fetched: this app's tests end before any letter.
        MODELS_AUTO_DOWNLOAD: "0",
      },
    },
  ],
});
