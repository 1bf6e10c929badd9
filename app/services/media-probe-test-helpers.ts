/**
 * Shared helpers for the audio-check test files (media-*.server.test.ts). Not a test file itself.
 */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";

/** A stand-in for ffprobe that only leaves a marker file behind when it is run. */
export async function makeMarkerProbe(dir: string, name: string) {
  const marker = path.join(dir, `${name}.ran`);
  const script = path.join(dir, `${name}.sh`);
  await writeFile(script, `#!/bin/sh\ntouch '${marker}'\nexit 1\n`, { mode: 0o755 });
  return { script, marker, ran: () => existsSync(marker) };
}

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
