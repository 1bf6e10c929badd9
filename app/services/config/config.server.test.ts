import { describe, expect, it } from "vitest";
import { buildConfig, ConfigError, parseEnv, publicConfig } from "./config.server";

describe("configuration", () => {
  it("starts with embedded defaults and no configuration at all", () => {
    const config = buildConfig(
      parseEnv({
        DATA_DIR: "/tmp/skribent-config-test",
        COOKIE_SECRET: "c".repeat(32),
        STORAGE_SIGNING_SECRET: "s".repeat(32),
      }),
    );
    expect(config.databaseUrl).toBeUndefined();
    expect(config.storage.kind).toBe("local");
    expect(config.oidc.dev).toBe(true);
    expect(config.flags).toEqual({ disableUserTemplates: false, disableMfiles: true, autoStartTranscription: true });
    expect(config.session).toEqual({ idleMs: 30 * 60_000, absoluteMs: 12 * 3_600_000 });
  });

  it("never runs the development provider in production or with an issuer", () => {
    const withIssuer = buildConfig(
      parseEnv({
        OIDC_ISSUER: "https://idp.example",
        OIDC_CLIENT_ID: "c",
        OIDC_CLIENT_SECRET: "s",
        COOKIE_SECRET: "c".repeat(32),
        STORAGE_SIGNING_SECRET: "s".repeat(32),
        DATA_DIR: "/tmp/skribent-config-test",
      }),
    );
    expect(withIssuer.oidc.dev).toBe(false);
    expect(() => parseEnv({ APP_ENV: "production" })).toThrow(ConfigError);
  });

  it("lists every problem readably", () => {
    const problems = (env: Record<string, string>) => {
      try {
        parseEnv(env);
      } catch (error) {
        return (error as ConfigError).problems.join("\n");
      }
      throw new Error("expected a ConfigError");
    };
    const shape = problems({ DISABLE_MFILES: "yes", PORT: "abc" });
    expect(shape).toMatch(/DISABLE_MFILES: must be 0 or 1/);
    expect(shape).toMatch(/PORT/);
    const production = problems({ APP_ENV: "production" });
    expect(production).toMatch(/OIDC_ISSUER: is required in production/);
    expect(production).toMatch(/COOKIE_SECRET: is required in production/);
    expect(production).toMatch(/APP_URL: is required in production/);
    // Secure cookies and HSTS need https; a trial on this machine may use http.
    const overHttp = problems({ APP_ENV: "production", APP_URL: "http://skribent.example.org" });
    expect(overHttp).toMatch(/APP_URL: must be https in production \(http only for localhost\)/);
    for (const local of ["http://localhost:3000", "http://127.0.0.1:3000", "https://skribent.example.org"])
      expect(problems({ APP_ENV: "production", APP_URL: local })).not.toMatch(/APP_URL/);
    // Direct live mode only reaches Speechmatics; the embedded engine needs the relay.
    expect(problems({ SPEECH_LIVE_MODE: "direct" })).toMatch(/SPEECH_LIVE_MODE: direct needs SPEECH_LIVE_ENGINE/);
    expect(problems({ SPEECH_LIVE_MODE: "sideways" })).toMatch(/SPEECH_LIVE_MODE/);
  });

  it("relays live audio unless told to let the browser talk to Speechmatics directly", () => {
    const base = { DATA_DIR: "/tmp/skribent-config-test", COOKIE_SECRET: "c".repeat(32) };
    expect(buildConfig(parseEnv(base)).speech.live).toEqual({ engine: "local", mode: "relay" });
    const direct = {
      ...base,
      SPEECH_LIVE_MODE: "direct",
      SPEECH_LIVE_ENGINE: "speechmatics",
      SPEECHMATICS_API_KEY: "k",
    };
    expect(buildConfig(parseEnv(direct)).speech.live).toEqual({ engine: "speechmatics", mode: "direct" });
  });

  it("takes a Parakeet model from the hub by prefix: its four files, each pinned from the hub", () => {
    const env = {
      DATA_DIR: "/tmp/skribent-config-test",
      LOCAL_PARAKEET_MODEL: "hf:clinic/parakeet-de@v2/export/model-int8",
    };
    const config = buildConfig(parseEnv(env));
    expect(config.speech.local.parakeet?.encoder).toBe("/tmp/skribent-config-test/models/model-int8.encoder.onnx");
    const speech = config.models.needed.filter((m) => m.role === "speech").map((m) => m.setting.hub);
    expect(speech).toEqual(
      ["encoder.onnx", "decoder.onnx", "joiner.onnx", "tokens.txt"].map((part) => ({
        repo: "clinic/parakeet-de",
        revision: "v2",
        file: `export/model-int8.${part}`,
      })),
    );
    expect(() => parseEnv({ ...env, LOCAL_PARAKEET_MODEL: "hf:no-repo" })).toThrow(/LOCAL_PARAKEET_MODEL/);
  });

  it("believes no proxy unless TRUST_PROXY names it, and refuses what Express would misread", () => {
    const trust = (value?: string) => parseEnv(value === undefined ? {} : { TRUST_PROXY: value }).TRUST_PROXY;
    expect(trust()).toBe(false);
    expect(trust("false")).toBe(false);
    expect(trust("2")).toBe(2);
    expect(trust(" loopback , 10.0.0.0/8,, 2001:db8::/32 ")).toBe("loopback,10.0.0.0/8,2001:db8::/32");
    const problem = (value: string) => {
      try {
        parseEnv({ TRUST_PROXY: value });
      } catch (error) {
        return (error as ConfigError).problems.join("\n");
      }
      throw new Error("expected a ConfigError");
    };
    // true would take the leftmost X-Forwarded-For entry, which any client writes.
    expect(problem("true")).toMatch(/^TRUST_PROXY: true would let every client name its own address; expected false/);
    expect(problem("10.0.0.0/8, proxy.internal")).toMatch(/^TRUST_PROXY: invalid IP address: proxy.internal; expected/);
    expect(problem("10.0.0.0/33")).toMatch(/^TRUST_PROXY: invalid range on address: 10.0.0.0\/33; expected/);
  });

  it("reads COOKIE_SECRET and STORAGE_SIGNING_SECRET as rotation lists, the first one signing", () => {
    const [newer, older] = ["n".repeat(32), "o".repeat(40)];
    const rotated = buildConfig(
      parseEnv({
        DATA_DIR: "/tmp/skribent-config-test",
        COOKIE_SECRET: `${newer}, ${older}`,
        STORAGE_SIGNING_SECRET: ` ${newer},${older} `,
      }),
    );
    expect(rotated.cookieSecrets).toEqual([newer, older]);
    expect(rotated.storage).toMatchObject({ kind: "local", signingSecrets: [newer, older] });
    const single = buildConfig(
      parseEnv({ DATA_DIR: "/tmp/skribent-config-test", COOKIE_SECRET: older, STORAGE_SIGNING_SECRET: newer }),
    );
    expect(single.cookieSecrets).toEqual([older]);
    expect(single.storage).toMatchObject({ signingSecrets: [newer] });
  });

  it("refuses a too-short secret anywhere in a rotation list, naming its place but not its value", () => {
    const problems = (env: Record<string, string>) => {
      try {
        parseEnv({ DATA_DIR: "/tmp/skribent-config-test", ...env });
      } catch (error) {
        return (error as ConfigError).problems.join("\n");
      }
      throw new Error("expected a ConfigError");
    };
    const good = "g".repeat(32);
    const short = "tooShortSecret-31-characters-xx";
    expect(problems({ COOKIE_SECRET: `${good},${short}` })).toBe(
      "COOKIE_SECRET: must be at least 32 characters (secret 2 of 2 has 31); several secrets are separated by commas, the first signs",
    );
    expect(problems({ STORAGE_SIGNING_SECRET: `${short},${good},${good}` })).toMatch(
      /^STORAGE_SIGNING_SECRET: must be at least 32 characters \(secret 1 of 3 has 31\)/,
    );
    expect(problems({ COOKIE_SECRET: short })).toMatch(
      /^COOKIE_SECRET: must be at least 32 characters \(the secret has 31\)/,
    );
    // A stray comma is an empty secret, not a shorter list.
    expect(problems({ COOKIE_SECRET: `${good},` })).toMatch(/secret 2 of 2 has 0/);
    expect(problems({ COOKIE_SECRET: `${good},${short}` })).not.toContain(short);
  });

  it("lets only the allowlist reach the browser", () => {
    const config = buildConfig(
      parseEnv({
        COOKIE_SECRET: "c".repeat(32),
        STORAGE_SIGNING_SECRET: "s".repeat(32),
        DATA_DIR: "/tmp/skribent-config-test",
        DISABLE_MFILES: "0",
      }),
    );
    const exposed = JSON.stringify(publicConfig(config));
    expect(exposed).not.toContain(config.cookieSecrets[0]);
    expect(exposed).not.toContain(config.oidc.clientSecret);
    expect(publicConfig(config).disableMfiles).toBe(0);
    expect(Object.keys(publicConfig(config)).sort()).toEqual(
      [
        "apiUrl",
        "audience",
        "clientId",
        "disableMfiles",
        "disableUserTemplates",
        "environment",
        "identityProvider",
        "links",
        "supportEmail",
      ].sort(),
    );
  });
});
