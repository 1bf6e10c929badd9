import { defineConfig, devices } from "@playwright/test";

// End-to-end tests drive Debian's Chromium (never a downloaded browser) against
// the built app on embedded defaults, with a fresh data directory per run.
const PORT = Number(process.env.E2E_PORT ?? 3100);
const OIDC_PORT = PORT + 1;
export const e2eDataDir = `./data/e2e-${PORT}`;

const chromiumArgs = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

export default defineConfig({
  testDir: "tests/e2e",
  fullyParallel: false,
  workers: 1,
  forbidOnly: !!process.env.CI,
  retries: 0,
  timeout: 30_000,
  reporter: (process.env.PLAYWRIGHT_REPORTERS ?? "list").split(",").map((name) => [name]) as never,
  use: {
    baseURL: `http://localhost:${PORT}`,
    locale: "de-DE",
    timezoneId: "Europe/Berlin",
    trace: "retain-on-failure",
    launchOptions: { executablePath: "/usr/bin/chromium", args: chromiumArgs },
  },
  projects: [
    { name: "js", use: { ...devices["Desktop Chrome"], javaScriptEnabled: true } },
    { name: "no-js", use: { ...devices["Desktop Chrome"], javaScriptEnabled: false } },
  ],
  webServer: {
    command: `rm -rf ${e2eDataDir} && npm run build --silent && npx remix-serve ./build/index.js`,
    url: `http://localhost:${PORT}/resources/healthz`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "pipe",
    env: {
      PORT: String(PORT),
      DEV_OIDC_PORT: String(OIDC_PORT),
      APP_URL: `http://localhost:${PORT}`,
      DATA_DIR: e2eDataDir,
      APP_ENV: "test",
      RATE_LIMIT_SIGNIN_PER_MINUTE: "1000",
      SESSION_IDLE_MINUTES: "30",
    },
  },
});
