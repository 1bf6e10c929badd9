import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildConfig, parseEnv } from "./config.server";
import { configProblems as problems } from "../../../tests/support/config-helpers";
import { SECRET_SETTINGS } from "./secret-files.server";

// Secrets delivered as files by a secrets manager (ASVS 5.0 13.3.1): NAME_FILE stands for NAME, and a mistake
// stops the start naming the variable, never the secret.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-secret-files-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function secretFile(name: string, content: string) {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content, { mode: 0o600 });
  return file;
}

const base = { DATA_DIR: dir };
const cookieOld = "alt-".repeat(10);
const cookieNew = "neu-".repeat(10);

describe("secrets from files", () => {
  it("reads each secret setting from NAME_FILE, dropping the newline a file ends with", () => {
    const config = buildConfig(
      parseEnv({
        ...base,
        OIDC_ISSUER: "https://idp.klinik.example/realms/praxis",
        OIDC_CLIENT_ID: "skribent",
        COOKIE_SECRET_FILE: secretFile("cookie", `${cookieNew},${cookieOld}\n`),
        OIDC_CLIENT_SECRET_FILE: secretFile("oidc", "client secret with spaces\r\n"),
        DATABASE_URL_FILE: secretFile("db", "postgres://skribent:pw@127.0.0.1:5432/skribent\n"),
        STORAGE_DRIVER: "s3",
        S3_BUCKET: "skribent",
        S3_ACCESS_KEY_ID_FILE: secretFile("s3-id", "AKIA-TEST"),
        S3_SECRET_ACCESS_KEY_FILE: secretFile("s3-key", "s3 secret\n"),
        LLM_ENGINE: "openai",
        LLM_OPENAI_URL: "http://127.0.0.1:9/v1",
        LLM_OPENAI_API_KEY_FILE: secretFile("llm", "sk-test\n"),
      }),
    );
    // A rotation list from a file is a rotation list: the first signs.
    expect(config.cookieSecrets).toEqual([cookieNew, cookieOld]);
    expect(config.oidc.clientSecret).toBe("client secret with spaces");
    expect(config.databaseUrl).toBe("postgres://skribent:pw@127.0.0.1:5432/skribent");
    expect(config.storage).toMatchObject({ accessKeyId: "AKIA-TEST", secretAccessKey: "s3 secret" });
    expect(config.llm.openai.apiKey).toBe("sk-test");
  });

  it("stops the start on both forms, a missing file or an empty one — naming the variable, never the value", () => {
    const value = "c".repeat(40);
    expect(problems({ ...base, COOKIE_SECRET: value, COOKIE_SECRET_FILE: secretFile("both", value) })).toMatch(
      /COOKIE_SECRET_FILE: set either COOKIE_SECRET or COOKIE_SECRET_FILE, not both/,
    );
    expect(problems({ ...base, MFILES_PASSWORD_FILE: path.join(dir, "nicht-da") })).toMatch(
      /MFILES_PASSWORD_FILE: cannot be read \(ENOENT\)/,
    );
    expect(problems({ ...base, SPEECHMATICS_API_KEY_FILE: secretFile("empty", "\n") })).toMatch(
      /SPEECHMATICS_API_KEY_FILE: names an empty file/,
    );
    // A secret from a file is checked like any other; the message says how long it is, not what it is.
    const short = problems({ ...base, COOKIE_SECRET_FILE: secretFile("short", "zu-kurz-geheim\n") });
    expect(short).toMatch(/COOKIE_SECRET: must be at least 32 characters \(the secret has 14\)/);
    expect(short).not.toContain("zu-kurz-geheim");
  });

  it("covers every setting that holds a secret, a key or a password (read from the configuration's own sources)", () => {
    const settings = new Set<string>();
    for (const file of fs.readdirSync(__dirname).filter((f) => /^[a-z-]+\.server\.ts$/.test(f)))
      for (const match of fs.readFileSync(path.join(__dirname, file), "utf8").matchAll(/^\s+([A-Z][A-Z0-9_]+): /gm))
        settings.add(match[1]!);
    const secretLooking = [...settings].filter((name) =>
      /SECRET|PASSWORD|API_KEY|ACCESS_KEY|_TOKEN$|DATABASE_URL/.test(name),
    );
    expect(secretLooking.length).toBeGreaterThanOrEqual(SECRET_SETTINGS.length);
    expect(secretLooking.sort()).toEqual([...SECRET_SETTINGS].sort());
  });
});
