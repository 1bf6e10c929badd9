// What every patient-record source is and answers (STYLE.md §3): the interface, its errors, the patient id it
// accepts, its settings and limits. The sources (a directory, M-Files) and the module that picks one import this.

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
