import { constants as fsConstants } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";

import { createMFilesPatientRecordSource } from "./mfiles.server";

// Patient records behind one small interface (STYLE.md §3, ARCHITECTURE "Engines behind interfaces"):
// the embedded default reads PDFs from a directory per patient id, the production adapter talks to
// M-Files' REST API (patient-records/mfiles.server.ts). Both hand back PDFs only; text extraction is
// the PDF service's job. Callers gate the feature on disable_mfiles (SPEC §6) and audit every fetch.

export type PatientDocument = { name: string; data: Uint8Array };

export interface PatientRecordSource {
  readonly kind: "directory" | "mfiles";
  /** The patient's PDFs, at most the configured number; [] when the patient has none. */
  fetchDocuments(patientId: string, options?: { signal?: AbortSignal }): Promise<PatientDocument[]>;
  check(timeoutMs?: number): Promise<{ status: "healthy" | "error" | "not_configured"; detail?: string }>;
}

/**
 * 1–32 ASCII letters, digits and hyphens, starting with a letter or digit. Strict on purpose: the id
 * becomes a directory name here and a search value in M-Files, so no dots (no `..`), no slashes, no
 * spaces, no leading hyphen (never mistaken for an option), no non-ASCII look-alikes. Clinic ids such
 * as "P-000123" or "4711" fit; the length leaves room for prefixes without inviting abuse.
 */
export const PATIENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9-]{0,31}$/;

export type PatientRecordErrorCode =
  "invalid_patient_id" | "not_found" | "unavailable" | "unauthorized" | "too_large" | "timeout";

const defaultMessages: Record<PatientRecordErrorCode, string> = {
  invalid_patient_id: "Invalid patient ID",
  not_found: "Patient records not found",
  unavailable: "Patient record system unavailable",
  unauthorized: "Patient record system rejected the credentials",
  too_large: "Patient document too large",
  timeout: "Patient record system did not answer in time",
};

/** Expected failures of a patient-record fetch. Messages never carry credentials or document content. */
export class PatientRecordError extends Error {
  readonly code: PatientRecordErrorCode;

  constructor(code: PatientRecordErrorCode, message: string = defaultMessages[code], options?: ErrorOptions) {
    super(message, options);
    this.name = "PatientRecordError";
    this.code = code;
  }
}

export function assertPatientId(value: unknown): string {
  const id = typeof value === "string" ? value.trim() : value == null ? "" : null;
  if (id === "") throw new PatientRecordError("invalid_patient_id", "Patient ID is required");
  if (id === null || !PATIENT_ID_PATTERN.test(id)) throw new PatientRecordError("invalid_patient_id");
  return id;
}

export type PatientRecordsConfig =
  | { kind: "directory"; directory: string }
  | {
      kind: "mfiles";
      baseUrl: string;
      vaultGuid: string;
      username: string;
      password: string;
      patientIdPropertyId: number;
      timeoutMs?: number;
      maxDocuments?: number;
      maxBytesPerDocument?: number;
    };

export const DEFAULT_MAX_DOCUMENTS = 20;
export const DEFAULT_MAX_BYTES_PER_DOCUMENT = 20 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 10_000;

export function createPatientRecordSource(config: PatientRecordsConfig): PatientRecordSource {
  switch (config.kind) {
    case "directory":
      return createDirectoryPatientRecordSource(config.directory);
    case "mfiles":
      return createMFilesPatientRecordSource(config);
  }
}

export function isPdfMagic(bytes: Uint8Array): boolean {
  // "%PDF-"
  return (
    bytes.length >= 5 &&
    bytes[0] === 0x25 &&
    bytes[1] === 0x50 &&
    bytes[2] === 0x44 &&
    bytes[3] === 0x46 &&
    bytes[4] === 0x2d
  );
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative !== "" && relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/**
 * `<directory>/<patientId>/*.pdf`, sorted by file name, at most DEFAULT_MAX_DOCUMENTS. Only regular
 * files whose name ends in .pdf (any case) and whose first bytes are "%PDF-"; hidden files are
 * ignored. A symlink is followed only when its target stays inside the directory, and the file is
 * then opened with O_NOFOLLOW so a link swapped in after the check is refused. A file over
 * DEFAULT_MAX_BYTES_PER_DOCUMENT is skipped, like in the M-Files adapter; when every PDF was too
 * large the fetch fails with `too_large` so the user learns why nothing came back.
 */
export function createDirectoryPatientRecordSource(directory: string): PatientRecordSource {
  const maxDocuments = DEFAULT_MAX_DOCUMENTS;
  const maxBytes = DEFAULT_MAX_BYTES_PER_DOCUMENT;

  async function rootPath(): Promise<string | null> {
    try {
      return await fs.realpath(directory);
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async function readPdf(file: string): Promise<Uint8Array | "too_large" | null> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
    } catch {
      return null;
    }
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) return null;
      if (stat.size > maxBytes) return "too_large";
      const data = new Uint8Array(stat.size);
      let offset = 0;
      while (offset < stat.size) {
        const { bytesRead } = await handle.read(data, offset, stat.size - offset, offset);
        if (bytesRead === 0) break;
        offset += bytesRead;
      }
      const bytes = data.subarray(0, offset);
      return isPdfMagic(bytes) ? bytes : null;
    } finally {
      await handle.close();
    }
  }

  return {
    kind: "directory",

    async fetchDocuments(patientId, options) {
      const id = assertPatientId(patientId);
      options?.signal?.throwIfAborted();
      const root = await rootPath();
      if (!root) return [];

      let patientDir: string;
      try {
        patientDir = await fs.realpath(path.join(root, id));
      } catch (error) {
        if (isMissing(error)) return [];
        throw new PatientRecordError("unavailable", undefined, { cause: error });
      }
      if (!isInside(root, patientDir)) return [];

      let names: string[];
      try {
        names = await fs.readdir(patientDir);
      } catch (error) {
        if (isMissing(error)) return [];
        throw new PatientRecordError("unavailable", undefined, { cause: error });
      }

      const documents: PatientDocument[] = [];
      let tooLarge = 0;
      for (const name of names.filter((n) => !n.startsWith(".") && n.toLowerCase().endsWith(".pdf")).sort()) {
        if (documents.length >= maxDocuments) break;
        options?.signal?.throwIfAborted();
        let real: string;
        try {
          real = await fs.realpath(path.join(patientDir, name));
        } catch {
          continue;
        }
        if (!isInside(root, real)) continue;
        const data = await readPdf(real);
        if (data === "too_large") tooLarge++;
        else if (data) documents.push({ name, data });
      }
      if (documents.length === 0 && tooLarge > 0) throw new PatientRecordError("too_large");
      return documents;
    },

    async check() {
      try {
        const stat = await fs.stat(directory);
        if (!stat.isDirectory()) return { status: "error", detail: "patient-record path is not a directory" };
        await fs.access(directory, fsConstants.R_OK | fsConstants.X_OK);
        return { status: "healthy" };
      } catch (error) {
        if (isMissing(error)) return { status: "not_configured", detail: "patient-record directory does not exist" };
        return { status: "error", detail: "patient-record directory is not readable" };
      }
    },
  };
}
