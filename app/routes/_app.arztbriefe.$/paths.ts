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
