import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { npmComponents, npmPurl } from "./sbom.mjs";

// ASVS 5.0 15.1.2: the SBOM (`npm run sbom`) lists what a production install runs: checked against what npm really
// installed in node_modules, dpkg's ffmpeg and this Node.js, not against the lockfile the script reads.

type Component = { type: string; "bom-ref": string; name: string; group?: string; version: string; purl: string };
type Sbom = {
  bomFormat: string;
  specVersion: string;
  serialNumber: string;
  metadata: { component: { name: string; version: string } };
  components: (Component & { hashes?: { alg: string; content: string }[] })[];
};

const root = path.resolve(__dirname, "..");
const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
let sbom: Sbom;

beforeAll(() => {
  sbom = JSON.parse(
    execFileSync(process.execPath, ["scripts/sbom.mjs"], { cwd: root, encoding: "utf8", maxBuffer: 64 << 20 }),
  ) as Sbom;
});

/** name@version of every package installed under node_modules, nested ones too, read from their package.json. */
function installed(dir = path.join(root, "node_modules"), found = new Set<string>()) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const dirs = entry.name.startsWith("@")
      ? fs.readdirSync(path.join(dir, entry.name)).map((child) => path.join(dir, entry.name, child))
      : [path.join(dir, entry.name)];
    for (const packageDir of dirs) {
      const manifest = path.join(packageDir, "package.json");
      if (!fs.existsSync(manifest)) continue;
      const { name, version } = JSON.parse(fs.readFileSync(manifest, "utf8")) as { name: string; version: string };
      found.add(`${name}@${version}`);
      const nested = path.join(packageDir, "node_modules");
      if (fs.existsSync(nested)) installed(nested, found);
    }
  }
  return found;
}

const npmName = (c: Component) => (c.group ? `${c.group}/${c.name}` : c.name);

describe("the SBOM", () => {
  it("is CycloneDX 1.5 naming this commit, with one entry per component", () => {
    expect(sbom.bomFormat).toBe("CycloneDX");
    expect(sbom.specVersion).toBe("1.5");
    expect(sbom.serialNumber).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
    const head = execFileSync("git", ["rev-parse", "--short=12", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
    expect(sbom.metadata.component).toMatchObject({ name: "skribent", version: head });
    const refs = sbom.components.map((c) => c["bom-ref"]);
    expect(new Set(refs).size).toBe(refs.length);
  });

  it("names every production dependency at its installed version with the registry's SHA-512, and no dev tool", () => {
    const libraries = sbom.components.filter((c) => c.type === "library");
    for (const name of Object.keys(pkg.dependencies)) {
      const { version } = JSON.parse(fs.readFileSync(path.join(root, "node_modules", name, "package.json"), "utf8"));
      const component = libraries.find((c) => c.purl === npmPurl(name, version));
      expect(component, `${name}@${version}`).toBeDefined();
      expect(component!.hashes?.[0]).toMatchObject({
        alg: "SHA-512",
        content: expect.stringMatching(/^[0-9a-f]{128}$/),
      });
    }
    const names = new Set(libraries.map(npmName));
    for (const tool of ["vitest", "@playwright/test", "eslint", "lighthouse"]) {
      expect(pkg.devDependencies[tool], `${tool} is a dev dependency`).toBeDefined();
      expect(names.has(tool), tool).toBe(false);
    }
  });

  it("names only packages that npm installed here", () => {
    const present = installed();
    const absent = sbom.components
      .filter((c) => c.type === "library")
      .map((c) => `${npmName(c)}@${c.version}`)
      .filter((id) => !present.has(id));
    expect(absent).toEqual([]);
  });

  it("names the Debian ffmpeg the app runs and the Node.js it runs on, at their installed versions", () => {
    const version = execFileSync("dpkg-query", ["-W", "-f", "${Version}", "ffmpeg"], { encoding: "utf8" });
    expect(sbom.components).toContainEqual(expect.objectContaining({ type: "application", name: "ffmpeg", version }));
    expect(sbom.components).toContainEqual(
      expect.objectContaining({ type: "platform", name: "node", version: process.versions.node }),
    );
  });

  it("leaves out what npm would not install on the platform: other systems, processors and C libraries", () => {
    const lock = {
      packages: {
        "": { name: "app" },
        "node_modules/any": { version: "1.0.0" },
        "node_modules/darwin-only": { version: "1.0.0", os: ["darwin"], optional: true },
        "node_modules/not-windows": { version: "1.0.0", os: ["!win32"] },
        "node_modules/arm64": { version: "1.0.0", cpu: ["arm64"], optional: true },
        "node_modules/musl": { version: "1.0.0", os: ["linux"], libc: ["musl"], optional: true },
        "node_modules/glibc": { version: "1.0.0", os: ["linux"], libc: ["glibc"], optional: true },
        "node_modules/dev-tool": { version: "1.0.0", dev: true },
        "node_modules/any/node_modules/@scope/nested": { version: "2.0.0" },
        "node_modules/again/node_modules/@scope/nested": { version: "2.0.0" },
      },
    };
    const names = (platform: object) => (npmComponents(lock, platform) as Component[]).map(npmName);
    expect(names({ os: "linux", cpu: "x64", libc: "glibc" })).toEqual(["@scope/nested", "any", "glibc", "not-windows"]);
    expect(names({ os: "darwin", cpu: "arm64" })).toEqual([
      "@scope/nested",
      "any",
      "arm64",
      "darwin-only",
      "not-windows",
    ]);
  });
});
