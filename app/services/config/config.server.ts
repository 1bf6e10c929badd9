import path from "node:path";
import { z } from "zod";
import { antivirusConfig, antivirusEnvShape, antivirusIssues } from "./antivirus.server";
import { engineEnvShape, engineIssues, llmConfig, modelsConfig, speechConfig } from "./engines.server";
import { bool, flag, optionalUrl } from "./values.server";
import { oidcConfig, oidcEnvShape } from "./oidc.server";
import { readSecretFiles } from "./secret-files.server";
import { persistedDevSecretList, secretListSetting } from "./secrets.server";
import { trustProxySetting } from "./proxy.server";
import { isLoopbackHost, syslogUrlSetting, transportIssues } from "./transport.server";
import { workspaceConfig, workspaceEnvShape } from "./workspace.server";
import { LOG_FORMATS } from "../../../server/log.mjs";

// Configuration is read once, at boot, and validated with zod (STYLE.md §10).
// SPEC §7's "runtime config file fetched from the site root" becomes this
// server-side configuration (ADR 0004): the browser receives only `publicConfig`.

const schema = z
  .object({
    APP_ENV: z.enum(["development", "test", "production"]).default("development"),
    PORT: z.coerce.number().int().min(1).max(65535).default(3000),
    APP_URL: z.string().url().optional(),
    API_URL: optionalUrl,
    DATA_DIR: z.string().default("./data"),
    DATABASE_URL: z.string().url().optional(),
    COOKIE_SECRET: secretListSetting,

    ...oidcEnvShape,

    SESSION_IDLE_MINUTES: z.coerce
      .number()
      .int()
      .min(1)
      .max(24 * 60)
      .default(30),
    SESSION_ABSOLUTE_HOURS: z.coerce
      .number()
      .int()
      .min(1)
      .max(24 * 7)
      .default(12),

    OPERATOR_EMAIL_DOMAIN: z.string().min(3).default("skribent.example"),
    ...workspaceEnvShape,
    SUPPORT_EMAIL: z.string().email().default("support@skribent.example"),
    PARTNER_ORG_LABEL: z.string().min(1).max(60).default("Partnerorganisation"),
    LINK_HOME: z.string().url().default("https://skribent.example/"),
    LINK_PLATFORM: z.string().url().default("https://skribent.example/plattform"),
    LINK_COMPANY_ABOUT: z.string().url().default("https://skribent.example/ueber-uns"),
    LINK_COMPANY_PRIVACY: z.string().url().default("https://skribent.example/datenschutz"),
    LINK_COMPANY_IMPRINT: z.string().url().default("https://skribent.example/impressum"),
    LINK_PRICING: z.string().url().default("https://skribent.example/preise"),

    DISABLE_USER_TEMPLATES: flag.default("0"),
    DISABLE_MFILES: flag.default("1"),
    // 1: no audio is accepted (pages, JSON API, live) until the patient's consent is confirmed (issue 22).
    CONSENT_REQUIRED: flag.default("0"),
    AUTO_START_TRANSCRIPTION: bool.default("true"),

    STORAGE_DRIVER: z.enum(["local", "s3"]).default("local"),
    STORAGE_SIGNING_SECRET: secretListSetting,
    S3_BUCKET: z.string().min(3).optional(),
    S3_REGION: z.string().default("eu-central-1"),
    S3_ENDPOINT: optionalUrl,
    S3_PUBLIC_ENDPOINT: optionalUrl,
    S3_ACCESS_KEY_ID: z.string().optional(),
    S3_SECRET_ACCESS_KEY: z.string().optional(),

    PATIENT_RECORDS_DRIVER: z.enum(["directory", "mfiles"]).default("directory"),
    PATIENT_RECORDS_DIR: z.string().optional(),
    MFILES_BASE_URL: optionalUrl,
    MFILES_VAULT_GUID: z.string().optional(),
    MFILES_USERNAME: z.string().optional(),
    MFILES_PASSWORD: z.string().optional(),
    MFILES_PATIENT_ID_PROPERTY: z.coerce.number().int().positive().optional(),
    RATE_LIMIT_PATIENT_RECORDS_PER_HOUR: z.coerce.number().int().min(1).default(30),
    ...antivirusEnvShape,

    WORKER_IN_PROCESS: bool.default("true"),
    RATE_LIMIT_SIGNIN_PER_MINUTE: z.coerce.number().int().min(1).default(20),
    TRUST_PROXY: trustProxySetting,
    // Read by server/log.mjs and server/log-ship.mjs before the configuration is; validated here too.
    LOG_FORMAT: z.enum(LOG_FORMATS).default("json"),
    LOG_SYSLOG_URL: syslogUrlSetting,

    ...engineEnvShape,
  })
  .superRefine((env, ctx) => {
    const issues: Array<[string, string]> = [];
    if (env.APP_ENV === "production") {
      if (!env.OIDC_ISSUER) issues.push(["OIDC_ISSUER", "is required in production"]);
      if (!env.COOKIE_SECRET) issues.push(["COOKIE_SECRET", "is required in production"]);
      if (!env.APP_URL) issues.push(["APP_URL", "is required in production"]);
      // Secure cookies, HSTS and the __Host- prefix follow an https APP_URL (ASVS 12.2.1); loopback is for trials.
      else if (new URL(env.APP_URL).protocol !== "https:" && !isLoopbackHost(new URL(env.APP_URL).hostname))
        issues.push(["APP_URL", "must be https in production (http only for localhost)"]);
      if (env.STORAGE_DRIVER === "local" && !env.STORAGE_SIGNING_SECRET)
        issues.push(["STORAGE_SIGNING_SECRET", "is required in production"]);
      issues.push(...transportIssues(env));
    }
    if (env.OIDC_ISSUER && !(env.OIDC_CLIENT_ID && env.OIDC_CLIENT_SECRET))
      issues.push(["OIDC_CLIENT_ID", "and OIDC_CLIENT_SECRET are required with OIDC_ISSUER"]);
    if (
      env.PATIENT_RECORDS_DRIVER === "mfiles" &&
      !(
        env.MFILES_BASE_URL &&
        env.MFILES_VAULT_GUID &&
        env.MFILES_USERNAME &&
        env.MFILES_PASSWORD &&
        env.MFILES_PATIENT_ID_PROPERTY
      )
    )
      issues.push([
        "MFILES_BASE_URL",
        "MFILES_BASE_URL, MFILES_VAULT_GUID, MFILES_USERNAME, MFILES_PASSWORD and MFILES_PATIENT_ID_PROPERTY are required when PATIENT_RECORDS_DRIVER=mfiles",
      ]);
    if (env.STORAGE_DRIVER === "s3" && !env.S3_BUCKET) issues.push(["S3_BUCKET", "is required when STORAGE_DRIVER=s3"]);
    issues.push(...engineIssues(env), ...antivirusIssues(env));
    for (const [key, message] of issues) ctx.addIssue({ code: z.ZodIssueCode.custom, path: [key], message });
  });

export type Env = z.infer<typeof schema>;

export type Config = ReturnType<typeof buildConfig>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

export function parseEnv(source: Record<string, string | undefined>): Env {
  // Empty strings in .env files mean "not set".
  const cleaned = Object.fromEntries(
    Object.entries(source).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ""),
  );
  // NAME_FILE settings become NAME before anything is checked (config/secret-files.server.ts).
  const { env, problems } = readSecretFiles(cleaned);
  const result = schema.safeParse(env);
  const issues = result.success ? [] : result.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
  if (problems.length > 0 || !result.success) throw new ConfigError([...problems, ...issues]);
  return result.data;
}

/** Model files are named relative to MODELS_DIR unless given as absolute paths. */
export function buildConfig(env: Env) {
  const dataDir = path.resolve(env.DATA_DIR);
  const appUrl = (env.APP_URL ?? `http://localhost:${env.PORT}`).replace(/\/$/, "");
  return {
    env: env.APP_ENV,
    port: env.PORT,
    appUrl,
    apiUrl: (env.API_URL ?? appUrl).replace(/\/$/, ""),
    secureCookies: appUrl.startsWith("https:"),
    dataDir,
    databaseUrl: env.DATABASE_URL,
    // Rotation lists: the first secret signs, all verify (config/secrets.server.ts).
    cookieSecrets: env.COOKIE_SECRET ?? persistedDevSecretList(dataDir, "cookie-secret"),
    oidc: oidcConfig(env, dataDir),
    session: {
      idleMs: env.SESSION_IDLE_MINUTES * 60_000,
      absoluteMs: env.SESSION_ABSOLUTE_HOURS * 3_600_000,
    },
    operatorEmailDomain: env.OPERATOR_EMAIL_DOMAIN.toLowerCase(),
    consentRequired: env.CONSENT_REQUIRED,
    ...workspaceConfig(env),
    supportEmail: env.SUPPORT_EMAIL,
    partnerOrgLabel: env.PARTNER_ORG_LABEL,
    links: {
      home: env.LINK_HOME,
      platform: env.LINK_PLATFORM,
      companyAbout: env.LINK_COMPANY_ABOUT,
      companyPrivacy: env.LINK_COMPANY_PRIVACY,
      companyImprint: env.LINK_COMPANY_IMPRINT,
      pricing: env.LINK_PRICING,
    },
    flags: {
      disableUserTemplates: env.DISABLE_USER_TEMPLATES,
      disableMfiles: env.DISABLE_MFILES,
      autoStartTranscription: env.AUTO_START_TRANSCRIPTION,
    },
    storage:
      env.STORAGE_DRIVER === "s3"
        ? {
            kind: "s3" as const,
            bucket: env.S3_BUCKET!,
            region: env.S3_REGION,
            endpoint: env.S3_ENDPOINT,
            publicEndpoint: env.S3_PUBLIC_ENDPOINT,
            accessKeyId: env.S3_ACCESS_KEY_ID,
            secretAccessKey: env.S3_SECRET_ACCESS_KEY,
          }
        : {
            kind: "local" as const,
            directory: path.join(dataDir, "objects"),
            publicBaseUrl: appUrl,
            signingSecrets: env.STORAGE_SIGNING_SECRET ?? persistedDevSecretList(dataDir, "storage-signing-secret"),
            maxUploadBytes: 73_400_320,
          },
    patientRecords:
      env.PATIENT_RECORDS_DRIVER === "mfiles"
        ? {
            kind: "mfiles" as const,
            baseUrl: env.MFILES_BASE_URL!,
            vaultGuid: env.MFILES_VAULT_GUID!,
            username: env.MFILES_USERNAME!,
            password: env.MFILES_PASSWORD!,
            patientIdPropertyId: env.MFILES_PATIENT_ID_PROPERTY!,
          }
        : {
            kind: "directory" as const,
            directory: path.resolve(env.PATIENT_RECORDS_DIR ?? path.join(dataDir, "patient-records")),
          },
    antivirus: antivirusConfig(env),
    speech: speechConfig(env),
    llm: llmConfig(env),
    models: modelsConfig(env),
    workerInProcess: env.WORKER_IN_PROCESS,
    trustProxy: env.TRUST_PROXY,
    rateLimits: {
      signInPerMinute: env.RATE_LIMIT_SIGNIN_PER_MINUTE,
      patientRecordsPerHour: env.RATE_LIMIT_PATIENT_RECORDS_PER_HOUR,
    },
  };
}

let current: Config | undefined;

/** The configuration of this process. Reads `process.env` on first use. */
export function getConfig(): Config {
  current ??= buildConfig(parseEnv(process.env));
  return current;
}

/** For tests and the boot sequence: install an explicit configuration. */
export function setConfig(config: Config) {
  current = config;
}

/**
 * The allowlist of what the browser may know (SPEC §7 runtime config).
 * Nothing secret, nothing about other users.
 */
export function publicConfig(config: Config) {
  return {
    apiUrl: config.apiUrl,
    environment: config.env,
    identityProvider: new URL(config.oidc.issuer).host,
    clientId: config.oidc.clientId,
    audience: config.oidc.audience,
    disableUserTemplates: config.flags.disableUserTemplates ? 1 : 0,
    disableMfiles: config.flags.disableMfiles ? 1 : 0,
    links: config.links,
    supportEmail: config.supportEmail,
  };
}
export type PublicConfig = ReturnType<typeof publicConfig>;
