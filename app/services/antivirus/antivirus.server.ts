import { audit } from "../audit/audit.server";
import {
  ClamdError,
  clamdVersion,
  scanFileWithClamd,
  scanWithClamd,
  type ClamdTarget,
  type ClamdVerdict,
} from "./clamd.server";
import { getConfig } from "../config/config.server";
import { DomainError } from "../web/domain-error.server";
import { sanitiseFileName } from "~/models/recording-rules";

// Every file a user sends — recordings on each upload door, the live recorder's copy, PDFs for a letter's context
// or the chat — is scanned by clamd before it is checked, decoded, stored as accepted or read (ASVS 5.0 5.4.3, ADR
// 0024). A hit refuses the file and the caller removes what was staged; a scanner that cannot answer refuses it
// too (fail closed: an unscanned file is never accepted while a scanner is configured). Both leave a content-free
// audit row ("upload.scan", denied or failure) and a log line naming the signature or the reason, never the file.

export type ScanSubject = {
  userId: string;
  /** The file's name as the user gave it: only for the message, sanitised there. */
  name: string;
  entityType: "recording" | "context" | "chat";
  entityId?: string;
  request?: Request;
};

async function judge(subject: ScanSubject, scan: (target: ClamdTarget, timeoutMs: number) => Promise<ClamdVerdict>) {
  const { target, timeoutMs } = getConfig().antivirus;
  if (!target) return;
  const record = (outcome: "denied" | "failure") =>
    audit({
      userId: subject.userId,
      action: "upload.scan",
      entityType: subject.entityType,
      entityId: subject.entityId,
      outcome,
      request: subject.request,
    });
  const values = { name: sanitiseFileName(subject.name) };
  let verdict: ClamdVerdict;
  try {
    verdict = await scan(target, timeoutMs);
  } catch (error) {
    const reason = error instanceof ClamdError ? `${error.reason}: ${error.message}` : String(error);
    console.error(`[antivirus] an upload could not be scanned and was refused (${reason})`);
    await record("failure");
    throw new DomainError("unavailable", "common:errors.scanUnavailable", [], values);
  }
  if (verdict.infected) {
    console.warn(`[antivirus] an upload was refused: ${verdict.signature}`);
    await record("denied");
    throw new DomainError("invalid", "common:errors.malwareFound", [], values);
  }
}

/** Throws a DomainError (refused, or not scannable) unless clamd finds the file clean or none is configured. */
export function scanUploadedFile(subject: ScanSubject, file: string) {
  return judge(subject, (target, timeoutMs) => scanFileWithClamd(target, file, timeoutMs));
}

/** The same for files held in memory (PDFs, at most a few MB each). */
export async function scanUploadedFiles(
  subject: Omit<ScanSubject, "name">,
  files: ReadonlyArray<{ name: string; data: Uint8Array }>,
) {
  for (const file of files) {
    if (file.data.byteLength === 0) continue;
    await judge({ ...subject, name: file.name }, (target, timeoutMs) => scanWithClamd(target, [file.data], timeoutMs));
  }
}

/** Signatures older than this mean freshclam has stopped updating them: the health check says so. */
export const MAX_SIGNATURE_AGE_HOURS = 72;

/**
 * clamd's VERSION line — "ClamAV 1.4.6/27468/Thu Nov 26 09:28:02 2026": engine, signature database version and its
 * date — judged for the health check. A clamd without an official database (only local signatures) names no date.
 * clamd writes the date in its host's local time (ctime) and names no zone; it runs beside the app (a unix socket or
 * localhost, config/antivirus.server.ts), so the date is read in the app's local time, not as UTC.
 */
export function judgeClamdVersion(line: string, now = new Date()) {
  const [engine, database, built] = line.split("/");
  const detail = line.slice(0, 200);
  if (!database || !built) return { status: "healthy" as const, detail: `${engine} (no official signature database)` };
  const age = (now.getTime() - Date.parse(built.trim())) / 3_600_000;
  if (!Number.isFinite(age)) return { status: "healthy" as const, detail };
  if (age > MAX_SIGNATURE_AGE_HOURS)
    return {
      status: "error" as const,
      detail: `${detail}: signatures ${Math.floor(age / 24)} days old (is freshclam running?)`,
    };
  return { status: "healthy" as const, detail };
}

/** The "antivirus" entry of the health check: clamd's PING, its engine and how current its signatures are. */
export async function antivirusHealthCheck(timeoutMs: number) {
  const { target } = getConfig().antivirus;
  if (!target) return { status: "not_configured" as const, detail: "no virus scanner configured (ANTIVIRUS_URL)" };
  try {
    return judgeClamdVersion(await clamdVersion(target, timeoutMs));
  } catch (error) {
    const detail = error instanceof Error ? error.message.slice(0, 200) : "clamd check failed";
    return { status: "error" as const, detail };
  }
}
