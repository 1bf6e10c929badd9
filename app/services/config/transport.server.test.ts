import { describe, expect, it } from "vitest";
import { buildConfig, parseEnv } from "./config.server";
import { configProblems, PRODUCTION_ENV } from "../../../tests/support/config-helpers";

// ASVS 5.0 12.3.1: a production configuration that would send patient data, tokens or keys over a plain connection
// leaving the machine does not start; the operator reads which variable and what to change.

const PRODUCTION = PRODUCTION_ENV;
const problems = configProblems;

describe("a production configuration", () => {
  it("starts with encrypted connections everywhere", () => {
    expect(
      problems({
        ...PRODUCTION,
        DATABASE_URL: "postgres://skribent@db.klinik.example:5432/skribent?sslmode=verify-full",
        STORAGE_DRIVER: "s3",
        S3_BUCKET: "audio",
        S3_ENDPOINT: "https://s3.klinik.example",
        LLM_ENGINE: "openai",
        LLM_OPENAI_URL: "https://llm.klinik.example/v1",
        LLM_OPENAI_API_KEY: "k",
      }),
    ).toBe("");
  });

  it("refuses a plain URL to another machine, naming the variable", () => {
    const cases = {
      OIDC_ISSUER: "http://idp.klinik.example/realms/praxis",
      S3_ENDPOINT: "http://minio.intern:9000",
      LLM_OPENAI_URL: "http://10.0.0.20:8000/v1",
      OPENAI_TRANSCRIBE_URL: "http://whisper.intern/v1",
      SPEECHMATICS_RT_URL: "ws://rt.speechmatics.example/v2",
      MFILES_BASE_URL: "http://mfiles.intern/REST",
    };
    for (const [name, value] of Object.entries(cases))
      expect(problems({ ...PRODUCTION, [name]: value }), name).toContain(
        `${name}: must be https (wss) in production (plain http only for localhost)`,
      );
  });

  it("allows plain connections that stay on this machine", () => {
    for (const host of ["localhost", "127.0.0.1", "[::1]"])
      expect(
        problems({
          ...PRODUCTION,
          LLM_OPENAI_URL: `http://${host}:8080/v1`,
          DATABASE_URL: `postgres://skribent@${host}:5432/skribent`,
        }),
        host,
      ).toBe("");
    expect(problems({ ...PRODUCTION, DATABASE_URL: "postgres:///skribent?host=/var/run/postgresql" })).toBe("");
  });

  it("asks PostgreSQL on another machine for TLS with a verified certificate", () => {
    const on = (query: string) =>
      problems({ ...PRODUCTION, DATABASE_URL: `postgres://skribent@db.klinik.example:5432/skribent${query}` });
    for (const query of ["", "?sslmode=disable", "?sslmode=prefer", "?sslmode=no-verify"])
      expect(on(query), query).toMatch(/DATABASE_URL: must ask for TLS in production: add sslmode=verify-full/);
    for (const query of ["?sslmode=require", "?sslmode=verify-ca", "?sslmode=verify-full&sslrootcert=/etc/ca.pem"])
      expect(on(query), query).toBe("");
  });

  it("leaves development and the tests alone", () => {
    expect(problems({ DATA_DIR: "/tmp/skribent-config-test", LLM_OPENAI_URL: "http://10.0.0.20:8000/v1" })).toBe("");
  });
});

describe("the virus scanner in production (ADR 0024)", () => {
  it("is named, or declined on purpose with none; clamd over TCP only on this machine", () => {
    const { ANTIVIRUS_URL: _named, ...unnamed } = PRODUCTION;
    expect(problems(unnamed)).toMatch(/ANTIVIRUS_URL: is required in production \(a clamd to scan uploads, or none/);
    expect(problems({ ...PRODUCTION, ANTIVIRUS_URL: "none" })).toBe("");
    expect(buildConfig(parseEnv({ ...PRODUCTION, ANTIVIRUS_URL: "none" })).antivirus.target).toBeNull();
    expect(buildConfig(parseEnv({ ...PRODUCTION, ANTIVIRUS_URL: "tcp://127.0.0.1:3310" })).antivirus).toEqual({
      url: "tcp://127.0.0.1:3310",
      target: { host: "127.0.0.1", port: 3310 },
      timeoutMs: 60_000,
    });
    expect(problems({ ...PRODUCTION, ANTIVIRUS_URL: "tcp://av.klinik.example:3310" })).toMatch(
      /ANTIVIRUS_URL: tcp:\/\/ only to localhost/,
    );
    // Development and the tests scan only when a scanner is named.
    expect(buildConfig(parseEnv({ DATA_DIR: "/tmp/skribent-config-test" })).antivirus.target).toBeNull();
  });
});
