import { constants as fsConstants } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";

import {
  DEFAULT_MAX_BYTES_PER_DOCUMENT,
  DEFAULT_MAX_DOCUMENTS,
  PatientRecordError,
  assertPatientId,
  isPdfMagic,
  type PatientDocument,
  type PatientRecordSource,
  type PatientRecordsConfig,
} from "./contract.server";
import { createMFilesPatientRecordSource } from "./mfiles.server";

export * from "./contract.server";

// Patient records behind one small interface (STYLE.md §3, ARCHITECTURE "Engines behind interfaces"):
// the embedded default reads PDFs from a directory per patient id, the production adapter talks to
// M-Files' REST API (patient-records/mfiles.server.ts). Both hand back PDFs only; text extraction is
// the PDF service's job. Callers gate the feature on disable_mfiles (SPEC §6) and audit every fetch.

export function createPatientRecordSource(config: PatientRecordsConfig): PatientRecordSource {
  switch (config.kind) {
    case "directory":
      return createDirectoryPatientRecordSource(config.directory);
    case "mfiles":
      return createMFilesPatientRecordSource(config);
  }
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
