// The M-Files replies the adapter reads (PROTOCOLS.md §4): search results (ObjectVersion with ObjVer
// and Files) and file listings, parsed defensively, plus the label a PDF is handed back under.

export const DOCUMENT_OBJECT_TYPE = 0;

export type FileRef = { id: number; name: string; extension: string };
export type ObjectRef = { type: number; id: number; version: number; modified: number; files: FileRef[] | null };

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function nonNegativeInteger(value: unknown): number | null {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

export function parseFile(value: unknown): FileRef | null {
  if (!isRecord(value)) return null;
  const id = nonNegativeInteger(value.ID);
  if (id === null) return null;
  return {
    id,
    name: typeof value.Name === "string" ? value.Name : "",
    extension: typeof value.Extension === "string" ? value.Extension : "",
  };
}

export function parseFiles(value: unknown): FileRef[] {
  return Array.isArray(value) ? value.map(parseFile).filter((f): f is FileRef => f !== null) : [];
}

export function parseObject(value: unknown): ObjectRef | null {
  if (!isRecord(value) || !isRecord(value.ObjVer) || value.Deleted === true) return null;
  const type = nonNegativeInteger(value.ObjVer.Type);
  const id = nonNegativeInteger(value.ObjVer.ID);
  const version = nonNegativeInteger(value.ObjVer.Version);
  if (type !== DOCUMENT_OBJECT_TYPE || id === null || version === null) return null;
  const modified = typeof value.LastModifiedUtc === "string" ? Date.parse(value.LastModifiedUtc) : NaN;
  return {
    type,
    id,
    version,
    modified: Number.isNaN(modified) ? -Infinity : modified,
    files: Array.isArray(value.Files) ? parseFiles(value.Files) : null,
  };
}

export function isPdfFile(file: FileRef): boolean {
  return file.extension.trim().toLowerCase() === "pdf";
}

export function displayName(file: FileRef): string {
  // Name and Extension are separate fields (PROTOCOLS §4); the result is a label, never a path.
  // eslint-disable-next-line no-control-regex
  const base = file.name.replace(/[\u0000-\u001f\u007f/\\]/g, "_").trim() || `file-${file.id}`;
  return `${base}.pdf`;
}
