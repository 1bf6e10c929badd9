import fs from "node:fs";
import path from "node:path";

/**
 * From here on the process finds node and nothing else on its PATH — no ffmpeg, no ffprobe — as on a fresh machine
 * (issue 21). Fixtures that need the tools are made before. Returns what puts the PATH back.
 */
export function narrowPathToNode(dir: string) {
  const bin = path.join(dir, "bin");
  fs.mkdirSync(bin, { recursive: true });
  fs.symlinkSync(process.execPath, path.join(bin, "node"));
  const saved = process.env.PATH;
  process.env.PATH = bin;
  return () => {
    process.env.PATH = saved;
  };
}
