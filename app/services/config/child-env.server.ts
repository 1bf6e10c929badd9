// The environment of the programs the app starts — ffprobe and ffmpeg on every upload, which decode untrusted audio,
// and the local engines' load check. They inherit none of the app's settings: COOKIE_SECRET, the storage and API
// keys, DATABASE_URL with its password. A decoder exploited by a crafted file reads /proc/self/environ first (ASVS
// 5.0 13.3.1, 5.4). Only what a program needs to find its libraries, its locale and its temporary files goes along.

const PASSED = ["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "LD_LIBRARY_PATH"] as const;

/** The variables a child process is started with (besides `extra`). */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: Record<string, string> = {};
  for (const name of PASSED) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  // Typed as the process's own (whose declaration requires NODE_ENV, which no child needs).
  return { ...env, ...extra } as NodeJS.ProcessEnv;
}
