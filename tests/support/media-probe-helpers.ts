/**
 * Shared helpers for the audio-check test files (media-*.server.test.ts). Not a test file itself.
 */

export function bytes(...values: (number | string)[]) {
  const out: number[] = [];
  for (const v of values) {
    if (typeof v === "number") out.push(v);
    else for (const c of v) out.push(c.charCodeAt(0));
  }
  return new Uint8Array(out);
}

export const unsupported = (type: string) =>
  `File type "${type}" is not supported. Please upload only MP3, or WAV files.` as const;
