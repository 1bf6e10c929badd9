import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// ASVS 5.0 15.2.1: `npm run deps:check` fails when a production package could have taken a release that has been
// out longer than the time frame (docs/data-protection.md §4), and only then. Run against a registry on loopback
// that answers package documents as registry.npmjs.org does (GET /<name>, a scoped name's slash as %2f).

const DAY = 86_400_000;
// Half a day more: the check's clock starts before the registry answers, and an age counts in whole days.
const ago = (days: number) => new Date(Date.now() - (days + 0.5) * DAY).toISOString();

/** name → version → [days since it was published, deprecation message?] */
const RELEASES: Record<string, Record<string, [number, string?]>> = {
  "late-direct": { "1.2.0": [400], "1.2.1": [100], "1.3.0": [20] },
  "fresh-direct": { "1.0.0": [400], "1.0.1": [10] },
  "major-only": { "1.0.0": [400], "1.1.0-beta.1": [200], "2.0.0": [300] },
  "@scope/zero": { "0.3.1": [400], "0.3.2": [120], "0.4.0": [200] },
  holder: { "2.0.0": [400] },
  pinned: { "1.0.0": [800], "1.0.5": [400] },
  ranged: { "1.0.0": [800], "1.1.0": [95] },
  "old-deprecated": { "3.0.0": [900, "no longer maintained; use new-thing"] },
  "dev-tool": { "1.0.0": [900], "1.5.0": [500] },
};

const LOCK = {
  name: "app",
  lockfileVersion: 3,
  packages: {
    "": {
      name: "app",
      dependencies: {
        "late-direct": "1.2.0",
        "fresh-direct": "1.0.0",
        "major-only": "1.0.0",
        "@scope/zero": "0.3.1",
        holder: "2.0.0",
        "old-deprecated": "3.0.0",
        gone: "1.0.0",
      },
      devDependencies: { "dev-tool": "1.0.0" },
    },
    "node_modules/late-direct": { version: "1.2.0" },
    "node_modules/fresh-direct": { version: "1.0.0" },
    "node_modules/major-only": { version: "1.0.0" },
    "node_modules/@scope/zero": { version: "0.3.1" },
    "node_modules/holder": { version: "2.0.0", dependencies: { pinned: "1.0.0", ranged: "^1.0.0" } },
    "node_modules/pinned": { version: "1.0.0" },
    "node_modules/ranged": { version: "1.0.0" },
    "node_modules/old-deprecated": { version: "3.0.0" },
    "node_modules/gone": { version: "1.0.0" },
    "node_modules/dev-tool": { version: "1.0.0", dev: true },
  },
};

let registry: http.Server;
let registryUrl: string;
const asked: string[] = [];
let work: string;

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-deps-"));
  registry = http.createServer((request, response) => {
    const name = decodeURIComponent(request.url!.slice(1));
    asked.push(name);
    const releases = RELEASES[name];
    if (request.method !== "GET" || !releases) {
      response.writeHead(404, { "content-type": "application/json" }).end('{"error":"Not found"}');
      return;
    }
    const versions = Object.fromEntries(
      Object.entries(releases).map(([v, [, deprecated]]) => [
        v,
        { name, version: v, ...(deprecated ? { deprecated } : {}) },
      ]),
    );
    const time = Object.fromEntries(Object.entries(releases).map(([v, [days]]) => [v, ago(days)]));
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ name, versions, time }));
  });
  await new Promise<void>((resolve) => registry.listen(0, "127.0.0.1", resolve));
  registryUrl = `http://127.0.0.1:${(registry.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await new Promise((resolve) => registry.close(resolve));
  fs.rmSync(work, { recursive: true, force: true });
});

async function check(lock: typeof LOCK, ...args: string[]) {
  const lockfile = path.join(work, `lock-${asked.length}.json`);
  fs.writeFileSync(lockfile, JSON.stringify(lock));
  const script = path.resolve(__dirname, "dependency-updates.mjs");
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [
      script,
      "--registry",
      registryUrl,
      "--lockfile",
      lockfile,
      ...args,
    ]);
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, stdout: failed.stdout };
  }
}

const without = (name: string) => {
  const lock = structuredClone(LOCK);
  delete (lock.packages as Record<string, unknown>)[`node_modules/${name}`];
  delete (lock.packages[""].dependencies as Record<string, string>)[name];
  return lock;
};

describe("the dependency check", () => {
  it("fails on releases the lockfile could take that are out longer than 90 days, and names them", async () => {
    const { code, stdout } = await check(without("gone"));
    expect(code).toBe(1);
    const late = stdout.split("\n").filter((line) => line.includes("LATE"));
    expect(late).toHaveLength(3);
    // The project's own dependency: its caret range (1.3.0 is newest; since the first of them, 100 days).
    expect(late[0]).toMatch(
      /LATE +late-direct 1\.2\.0 \(node_modules\/late-direct\): 1\.3\.0 can be installed;.*\(100 days/,
    );
    // Below 1.0 the caret keeps the minor: 0.3.2 is late, 0.4.0 is a breaking change and not counted.
    expect(late[1]).toMatch(/LATE +@scope\/zero 0\.3\.1 .*: 0\.3\.2 can be installed;.*\(120 days/);
    // A transitive package whose dependent allows ^1.0.0.
    expect(late[2]).toMatch(/LATE +ranged 1\.0\.0 .*: 1\.1\.0 can be installed;.*\(95 days/);
    expect(stdout).toMatch(/update +fresh-direct 1\.0\.0 .* → 1\.0\.1 .*10 days/);
    // Held back by its dependent's exact pin (the dependent itself is current): not late, nothing to install.
    expect(stdout).not.toMatch(/pinned/);
    // Only a major update or a pre-release: nothing.
    expect(stdout).not.toMatch(/major-only/);
    expect(stdout).toMatch(/deprecated +old-deprecated 3\.0\.0: no longer maintained; use new-thing/);
    expect(stdout).toMatch(/3 late .*, 1 within the time frame, 1 deprecated, 0 not checked\./);
  });

  it("never asks about development-only packages", () => {
    expect(asked).not.toContain("dev-tool");
    expect(asked).toContain("@scope/zero");
  });

  it("passes when every possible update is within the time frame given", async () => {
    const { code, stdout } = await check(without("gone"), "--days", "180");
    expect(code).toBe(0);
    expect(stdout).toMatch(/0 late .*, 4 within the time frame/);
  });

  it("says which packages it could not check, and does not pass", async () => {
    const { code, stdout } = await check(LOCK, "--days", "180");
    expect(code).toBe(2);
    expect(stdout).toMatch(/UNKNOWN +gone 1\.0\.0: 404 Not Found/);
  });
});
