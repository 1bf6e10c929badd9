import { buildConfig, ConfigError, parseEnv } from "~/services/config/config.server";

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

/** The least a development configuration (the built-in dev provider) needs to start. */
export const DEV_ENV: Record<string, string> = { DATA_DIR: "/tmp/skribent-config-test", COOKIE_SECRET: "c".repeat(32) };

/** The configuration of DEV_ENV with `vars` set. */
export function devConfigWith(vars: Record<string, string>) {
  return buildConfig(parseEnv({ ...DEV_ENV, ...vars }));
}

/** The same with an identity provider of its own instead of the dev provider, as a deployment has. */
export function providerConfigWith(vars: Record<string, string>) {
  return devConfigWith({ OIDC_ISSUER: "https://idp.example", OIDC_CLIENT_ID: "c", OIDC_CLIENT_SECRET: "s", ...vars });
}

/** The configuration check's problems with `name` set to `value` on DEV_ENV; fails the test when there are none. */
export function problemsWith(name: string, value: string): string {
  try {
    parseEnv({ ...DEV_ENV, [name]: value });
  } catch (error) {
    return (error as ConfigError).problems.join("\n");
  }
  throw new Error("expected a ConfigError");
}
