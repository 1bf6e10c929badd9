import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";

// The layering rules of .dependency-cruiser.cjs (issue 23), run by `npm run lint`, on small trees laid out like
// the app's: a tree that keeps the rules passes, and each kind of wrong arrow fails with its rule's name.

const ROOT = path.resolve(__dirname, "..");
const CONFIG = path.join(ROOT, ".dependency-cruiser.cjs");
const DEPCRUISE = path.join(ROOT, "node_modules", ".bin", "depcruise");

let tree: string | undefined;
afterEach(() => {
  if (tree) fs.rmSync(tree, { recursive: true, force: true });
  tree = undefined;
});

/** Writes the files (path → source) into a fresh folder and runs the project's rules over it. */
function cruise(files: Record<string, string>) {
  tree = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-deps-"));
  const all = {
    "tsconfig.json": JSON.stringify({ compilerOptions: { baseUrl: ".", paths: { "~/*": ["./app/*"] } } }),
    ...files,
  };
  for (const [name, source] of Object.entries(all)) {
    fs.mkdirSync(path.dirname(path.join(tree, name)), { recursive: true });
    fs.writeFileSync(path.join(tree, name), source);
  }
  const run = spawnSync(DEPCRUISE, ["app", "--config", CONFIG, "--output-type", "err"], {
    cwd: tree,
    encoding: "utf8",
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

const layered = {
  "app/routes/api.files.tsx":
    'import { listFiles } from "~/services/recordings/recordings.server";\nexport const x = listFiles;\n',
  "app/services/recordings/recordings.server.ts":
    'import { put } from "~/services/storage/storage.server";\nimport { rows } from "~/models/recording.server";\nexport const listFiles = [put, rows];\n',
  "app/services/storage/storage.server.ts": "export const put = 1;\n",
  "app/models/recording.server.ts": "export const rows = 1;\n",
};

describe("the dependency rules", () => {
  it("pass a tree where routes call services, services call adapters and models", () => {
    const { status, output } = cruise(layered);
    expect(output).toContain("no dependency violations");
    expect(status).toBe(0);
  });

  it("fail on an import cycle", () => {
    const { status, output } = cruise({
      ...layered,
      "app/services/storage/storage.server.ts": 'import { key } from "./keys.server";\nexport const put = key;\n',
      "app/services/storage/keys.server.ts": 'import { put } from "./storage.server";\nexport const key = () => put;\n',
    });
    expect(status).not.toBe(0);
    expect(output).toContain("no-circular");
  });

  it("fail when an adapter imports a use case, or a model a service", () => {
    const { status, output } = cruise({
      ...layered,
      "app/services/storage/storage.server.ts":
        'import { listFiles } from "~/services/recordings/recordings.server";\nexport const put = listFiles;\n',
      "app/models/recording.server.ts":
        'import { put } from "~/services/storage/storage.server";\nexport const rows = put;\n',
    });
    expect(status).not.toBe(0);
    expect(output).toContain("adapters-below-use-cases");
    expect(output).toContain("models-below-services");
  });

  it("fail when anything but the start-up imports the job registry", () => {
    const { status, output } = cruise({
      ...layered,
      "app/services/jobs/registry.server.ts": "export const startJobs = 1;\n",
      "app/services/boot.server.ts":
        'import { startJobs } from "./jobs/registry.server";\nexport const boot = startJobs;\n',
      "app/services/letters/letters.server.ts":
        'import { startJobs } from "~/services/jobs/registry.server";\nexport const letters = startJobs;\n',
    });
    expect(status).not.toBe(0);
    expect(output).toContain("only-start-up-imports-the-job-registry");
    expect(output).toContain("app/services/letters/letters.server.ts");
    expect(output).not.toMatch(/boot\.server\.ts →/);
  });
});
