import { stat } from "node:fs/promises";
import path from "node:path";
import { sha256Of } from "./fetch-file.server";
import { knownPin, pinFirstSeen } from "./hub-pin.server";

// The check every engine makes before native code loads a model file (issue 21: "a model loaded without
// verification" is not acceptable). The file's SHA-256 is compared with its pin (catalogue or lock); the result is
// remembered per path, size and modification time, so a file is hashed once per process unless it changes. A file
// nobody pinned is pinned now, on first sight, in the lock beside the models (hub-pin.server.ts).

const verified = new Map<string, Promise<string | undefined>>();

async function check(file: string, modelsDir: string | undefined, size: number): Promise<string | undefined> {
  const name = path.basename(file);
  const pin = await knownPin(modelsDir, file);
  if (pin && pin.size !== size)
    return `${name} has ${size} bytes, its pin says ${pin.size}: it is incomplete or a different file (delete it to fetch it again)`;
  const sha256 = await sha256Of(file);
  if (pin && sha256 !== pin.sha256)
    return `${name} does not match its pinned SHA-256 (altered or a different file; delete it to fetch it again)`;
  if (!pin && modelsDir) {
    await pinFirstSeen(modelsDir, file, { sha256, size });
    console.warn(`[models] ${name} has no published pin; its SHA-256 ${sha256} is now recorded in the lock file`);
  }
  return undefined;
}

/**
 * Undefined when `file` matches its pin (or was pinned just now); otherwise why it must not be loaded. A missing
 * file is reported by the caller's own checks (local-models.server.ts), not here.
 */
export async function verificationProblem(file: string, modelsDir?: string): Promise<string | undefined> {
  let info;
  try {
    info = await stat(file);
  } catch {
    return undefined;
  }
  const key = `${file}:${info.size}:${info.mtimeMs}`;
  let result = verified.get(key);
  if (!result) {
    result = check(file, modelsDir, info.size).catch((error: Error) => `${path.basename(file)}: ${error.message}`);
    verified.set(key, result);
  }
  return result;
}

/** A file whose bytes were just checked against its pin while it was written (a download, a copy): not hashed again. */
export async function markVerified(file: string) {
  const info = await stat(file);
  verified.set(`${file}:${info.size}:${info.mtimeMs}`, Promise.resolve(undefined));
}
