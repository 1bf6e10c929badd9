// Addresses of the letter screens. A letter's key keeps SPEC §3's "arztbriefe/…" form; its editor lives at
// that key without the prefix (as SPEC §7 strips it), so /arztbriefe/<owner>/<stamp>-<id>.json.

export function letterPath(key: string) {
  return key.replace(/^arztbriefe\//, "");
}

export function editorUrl(key: string) {
  return `/arztbriefe/${letterPath(key)}`;
}

export function redoUrl(key: string) {
  return `/arztbriefe/redo/${letterPath(key)}`;
}

export function deleteUrl(key: string) {
  return `/arztbriefe?delete=${encodeURIComponent(key)}`;
}

export function exportUrl(key: string) {
  return `/arztbriefe/export/${letterPath(key)}`;
}

/** The print view: outside the workspace's frame, so the page prints as the letter alone. */
export function printUrl(key: string) {
  return `/druck/arztbriefe/${letterPath(key)}`;
}

/** Where the export dialog's file buttons post: a resource route, whose answer is the file itself. */
export function downloadUrl(key: string) {
  return `/resources/arztbrief-export/${letterPath(key)}`;
}
