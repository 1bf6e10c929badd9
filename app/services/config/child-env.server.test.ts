import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runProgram } from "../media/ffprobe.server";

// The programs the app starts (ffprobe and ffmpeg decode untrusted uploads) see none of its secrets.

const SECRETS = {
  COOKIE_SECRET: "keks-geheimnis-das-niemand-sehen-darf-0001",
  S3_SECRET_ACCESS_KEY: "s3-geheimnis-das-niemand-sehen-darf-0002",
  DATABASE_URL: "postgres://skribent:db-passwort-0003@db.klinik.example/skribent",
};

afterEach(() => {
  for (const name of Object.keys(SECRETS)) delete process.env[name];
});

/** Every call that starts a program in app/, with its arguments (up to the matching parenthesis). */
function childProcessCalls() {
  const calls: Array<{ file: string; call: string }> = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) {
        const source = fs.readFileSync(full, "utf8");
        for (const match of source.matchAll(/(?<!\.)\b(spawn|spawnSync|execFile|execFileSync|exec|execSync|fork)\(/g)) {
          let depth = 0;
          let end = match.index + match[0].length - 1;
          for (; end < source.length; end++) {
            if (source[end] === "(") depth++;
            else if (source[end] === ")" && --depth === 0) break;
          }
          calls.push({ file: path.relative(process.cwd(), full), call: source.slice(match.index, end + 1) });
        }
      }
    }
  };
  walk(path.resolve("app"));
  return calls;
}

describe("child processes", () => {
  it("are started without the app's secrets", async () => {
    Object.assign(process.env, SECRETS);
    const run = await runProgram("/usr/bin/env", [], 5_000);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^PATH=/m);
    for (const [name, value] of Object.entries(SECRETS)) {
      expect(run.stdout).not.toContain(name);
      expect(run.stdout).not.toContain(value);
    }
  });

  it("every place in app/ that starts a program hands it childEnv(), so a new one cannot forget", () => {
    const calls = childProcessCalls();
    expect(calls.length).toBeGreaterThanOrEqual(3);
    for (const { file, call } of calls)
      expect({ file, call }).toEqual({ file, call: expect.stringContaining("env: childEnv(") });
  });
});
