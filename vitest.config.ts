import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { tsconfigPaths: true },
  test: {
    include: ["app/**/*.test.{ts,tsx}", "tests/**/*.test.{ts,tsx}", "scripts/**/*.test.ts"],
    exclude: ["tests/e2e/**", "node_modules/**"],
    globals: false,
    environment: "node",
    // log-capture.ts after console.ts: its afterEach must run before console.ts's restores the console.error spy.
    setupFiles: ["./tests/setup/console.ts", "./tests/setup/log-capture.ts"],
    globalSetup: ["./tests/setup/global-db.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
