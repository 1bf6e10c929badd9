import fs from "node:fs";

// Secrets from files (ASVS 5.0 13.3.1): each secret setting can be given as `<NAME>_FILE`, the path of a file that
// holds it — what a secrets manager delivers without putting the value into the process environment: HashiCorp
// Vault Agent or the Kubernetes Secrets Store CSI driver writing to a memory-backed volume, Kubernetes and Docker
// secrets, systemd credentials (`Environment=COOKIE_SECRET_FILE=%d/cookie_secret` with `LoadCredential=`). The file
// is read once at start; one trailing newline is dropped. Naming both NAME and NAME_FILE, an unreadable file or an
// empty one stops the start with a message naming the variable and the reason, never the value or the path's content.

/** The settings that hold secrets (or, DATABASE_URL, a password), and so may come from a file. */
export const SECRET_SETTINGS = [
  "COOKIE_SECRET",
  "STORAGE_SIGNING_SECRET",
  "OIDC_CLIENT_SECRET",
  "DATABASE_URL",
  "S3_ACCESS_KEY_ID",
  "S3_SECRET_ACCESS_KEY",
  "SPEECHMATICS_API_KEY",
  "OPENAI_TRANSCRIBE_API_KEY",
  "LLM_OPENAI_API_KEY",
  "MFILES_PASSWORD",
] as const;

/** `source` with every NAME_FILE replaced by NAME, and what went wrong as "NAME_FILE: reason" lines. */
export function readSecretFiles(source: Record<string, string>) {
  const env: Record<string, string> = { ...source };
  const problems: string[] = [];
  for (const name of SECRET_SETTINGS) {
    const fileSetting = `${name}_FILE`;
    const file = env[fileSetting];
    if (file === undefined) continue;
    delete env[fileSetting];
    if (env[name] !== undefined) {
      problems.push(`${fileSetting}: set either ${name} or ${fileSetting}, not both`);
      continue;
    }
    let value: string;
    try {
      value = fs.readFileSync(file, "utf8").replace(/\r?\n$/, "");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
      problems.push(`${fileSetting}: cannot be read (${code})`);
      continue;
    }
    if (value.trim() === "") problems.push(`${fileSetting}: names an empty file`);
    else env[name] = value;
  }
  return { env, problems };
}
