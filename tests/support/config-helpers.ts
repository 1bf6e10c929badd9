import { ConfigError, parseEnv } from "~/services/config/config.server";

// For the configuration's tests: a production configuration that starts, and what a configuration gets wrong.

/** Every setting production requires, with values that pass; tests change one thing at a time. */
export const PRODUCTION_ENV: Record<string, string> = {
  APP_ENV: "production",
  APP_URL: "https://skribent.klinik.example",
  OIDC_ISSUER: "https://idp.klinik.example/realms/praxis",
  OIDC_CLIENT_ID: "skribent",
  OIDC_CLIENT_SECRET: "s",
  COOKIE_SECRET: "c".repeat(32),
  STORAGE_SIGNING_SECRET: "s".repeat(32),
  DATA_DIR: "/tmp/skribent-config-test",
  ANTIVIRUS_URL: "unix:///run/clamav/clamd.ctl",
};

/** The configuration check's problems as one text ("" when the configuration starts). */
export function configProblems(env: Record<string, string>) {
  try {
    parseEnv(env);
    return "";
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.problems.join("\n");
  }
}
