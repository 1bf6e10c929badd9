#!/usr/bin/env node
// What `npm install` costs on a fresh checkout, as the README's quickstart runs it: the current repository's
// committed HEAD is cloned into a temporary directory (with ../shared beside it, where the tests and the model
// scripts look, as a symlink to this repository's), and `npm install` runs there twice:
//   1. with this machine's PATH: wall time, size of node_modules, and which packages compiled native code at
//      install (a build/Release directory holding a .node file, e.g. smart-whisper's whisper.cpp);
//   2. with a PATH that lacks the compiler toolchain (a temporary directory of symlinks to every program on PATH
//      except cc, c++, gcc, g++, cpp, make, ld, as, clang…): does the install succeed without a compiler?
// The temporary directories are removed afterwards. The npm cache is this user's (as a developer's second
// install would find it) unless --cold-cache gives each install an empty one (everything from the registry).
// A bench prints figures; it is not a test (exit 1 only when the measurement itself fails; a failing install
// is an outcome, printed).
//
// Usage: npm run bench:install
//        node bench/install-time.mjs [--cold-cache] [--keep] [--skip-no-compiler]
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SHARED = path.resolve(ROOT, "../shared");

const { values: opts } = parseArgs({
  options: {
    "cold-cache": { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    "skip-no-compiler": { type: "boolean", default: false },
  },
});

/** Programs of a C/C++ toolchain: none of them may be reachable in the no-compiler install. */
const TOOLCHAIN =
  /^(cc|c\+\+|c89|c99|gcc|g\+\+|cpp|make|gmake|ld|ld\..*|gold|as|clang.*|tcc|cmake|ninja|(x86_64|aarch64|i686)-.*-(gcc|g\+\+|c\+\+|cpp|ld|as|cc)(-[\d.]+)?|(gcc|g\+\+|cpp|c\+\+|cc)-[\d.]+|gcc-(ar|nm|ranlib)(-[\d.]+)?)$/;

const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

/** A directory of symlinks to every program on `PATH` but the toolchain's (first one of a name wins, as on PATH). */
function pathWithoutCompiler(dir) {
  fs.mkdirSync(dir);
  const left = [];
  for (const from of (process.env.PATH ?? "").split(path.delimiter)) {
    let names;
    try {
      names = fs.readdirSync(from);
    } catch {
      continue;
    }
    for (const name of names) {
      const target = path.join(from, name);
      if (TOOLCHAIN.test(name)) {
        left.push(name);
        continue;
      }
      if (fs.existsSync(path.join(dir, name))) continue;
      try {
        const stat = fs.statSync(target);
        if (!stat.isFile() || !(stat.mode & 0o111)) continue;
      } catch {
        continue;
      }
      fs.symlinkSync(target, path.join(dir, name));
    }
  }
  return { dir, left: [...new Set(left)].sort() };
}

/** `npm install` in `cwd`: wall time, exit code, the log's path. */
function npmInstall(cwd, env, log) {
  return new Promise((resolve, reject) => {
    const out = fs.openSync(log, "w");
    const started = performance.now();
    const child = spawn("npm", ["install"], { cwd, env, stdio: ["ignore", out, out] });
    fs.closeSync(out);
    child.on("error", reject);
    child.on("exit", (code, signal) => resolve({ ms: performance.now() - started, code, signal }));
  });
}

/** Packages under node_modules with a build/Release directory holding a .node file (compiled at install). */
function compiledPackages(nodeModules) {
  const found = [];
  const visit = (dir, depth) => {
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.isSymbolicLink()) continue;
      const full = path.join(dir, entry.name);
      if (entry.name.startsWith("@") && depth === 0) {
        visit(full, 0);
        continue;
      }
      const release = path.join(full, "build", "Release");
      if (fs.existsSync(release)) {
        const addons = fs
          .readdirSync(release, { recursive: true })
          .filter((f) => String(f).endsWith(".node"))
          .map(String);
        if (addons.length) found.push({ name: path.relative(nodeModules, full), addons });
      }
      const nested = path.join(full, "node_modules");
      if (fs.existsSync(nested)) visit(nested, 0);
    }
  };
  visit(nodeModules, 0);
  return found;
}

/** Native addons that came prebuilt (.node files outside build/Release), by package: context for the above. */
function prebuiltAddons(nodeModules) {
  const out = execFileSync(
    "find",
    [nodeModules, "-name", "*.node", "-type", "f", "-not", "-path", "*/build/Release/*"],
    {
      encoding: "utf8",
    },
  );
  const packages = new Set();
  for (const file of out.split("\n").filter(Boolean)) {
    const parts = path.relative(nodeModules, file).split(path.sep);
    const at = parts.lastIndexOf("node_modules");
    const rest = at >= 0 ? parts.slice(at + 1) : parts;
    packages.add(rest[0].startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]);
  }
  return [...packages].sort();
}

function sizeOf(dir) {
  const [disk] = execFileSync("du", ["-sk", dir], { encoding: "utf8" }).split("\t");
  const [apparent] = execFileSync("du", ["-sb", "--apparent-size", dir], { encoding: "utf8" }).split("\t");
  // Packages: a package.json directly inside node_modules/<name>/ or node_modules/@scope/<name>/.
  const packages = execFileSync("find", [dir, "-name", "package.json", "-type", "f"], { encoding: "utf8" })
    .split("\n")
    .filter((file) => /node_modules\/(@[^/]+\/)?[^/@][^/]*\/package\.json$/.test(file)).length;
  return { disk: Number(disk) * 1024, apparent: Number(apparent), packages };
}

/** The lines of an npm log that say why it failed. */
function failureLines(log) {
  const lines = fs.readFileSync(log, "utf8").split("\n");
  const interesting = lines.filter((l) =>
    /gyp ERR! (stack Error|not ok)|npm error (code|path|command)|not found/.test(l),
  );
  return (interesting.length ? interesting : lines.slice(-15)).slice(0, 12);
}

function describe(label, result, log) {
  const ok = result.code === 0;
  console.log(
    `\n${label}\n  outcome: ${ok ? "SUCCEEDED" : `FAILED (${result.signal ?? `exit ${result.code}`})`}, ` +
      `wall time ${(result.ms / 1000).toFixed(1)} s`,
  );
  if (!ok) for (const line of failureLines(log)) console.log(`    ${line}`);
  return ok;
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-bench-install-"));
  const onSignal = () => {
    fs.rmSync(tmp, { recursive: true, force: true });
    process.exit(130);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const clone = path.join(tmp, "main");
    execFileSync("git", ["clone", "--quiet", "--no-hardlinks", ROOT, clone]);
    const head = execFileSync("git", ["-C", clone, "log", "-1", "--format=%h %s"], { encoding: "utf8" }).trim();
    if (fs.existsSync(SHARED)) fs.symlinkSync(SHARED, path.join(tmp, "shared"), "dir");
    const dirty = execFileSync(
      "git",
      ["-C", ROOT, "status", "--porcelain", "--", "package.json", "package-lock.json"],
      {
        encoding: "utf8",
      },
    ).trim();

    const cache = (name) => (opts["cold-cache"] ? { npm_config_cache: path.join(tmp, `cache-${name}`) } : {});
    const npmVersion = execFileSync("npm", ["--version"], { encoding: "utf8" }).trim();
    console.log(
      `npm install of a fresh clone of ${ROOT} (HEAD ${head.slice(0, 100)})\n` +
        `node ${process.version}, npm ${npmVersion}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ` +
        `load average ${os.loadavg()[0].toFixed(1)} at the start; npm cache: ` +
        `${opts["cold-cache"] ? "an empty one per install (everything from the registry)" : "this user's (warm)"}` +
        `${process.env.CXXFLAGS ? `; CXXFLAGS=${process.env.CXXFLAGS}` : ""}`,
    );
    if (dirty)
      console.log(
        `  (the working tree's package.json / package-lock.json have uncommitted changes; the clone installs HEAD's)`,
      );

    // 1. With the compiler.
    const log1 = path.join(tmp, "install.log");
    console.log("\ninstalling with this machine's PATH…");
    const first = await npmInstall(clone, { ...process.env, ...cache("1") }, log1);
    const ok = describe("npm install (compiler on PATH)", first, log1);
    const nodeModules = path.join(clone, "node_modules");
    if (fs.existsSync(nodeModules)) {
      const size = sizeOf(nodeModules);
      console.log(
        `  node_modules: ${mb(size.disk)} on disk (${mb(size.apparent)} apparent), ${size.packages} package.json files`,
      );
      const compiled = compiledPackages(nodeModules);
      console.log(
        compiled.length
          ? `  compiled native code at install: ${compiled.map((c) => `${c.name} (${c.addons.join(", ")})`).join("; ")}`
          : "  compiled native code at install: none (no build/Release with a .node file)",
      );
      console.log(`  native addons that came prebuilt: ${prebuiltAddons(nodeModules).join(", ") || "none"}`);
    }
    if (!ok)
      console.log(`  (log: ${log1}${opts.keep ? "" : ", removed with the temporary directory; --keep keeps it"})`);

    // 2. Without the compiler.
    if (!opts["skip-no-compiler"]) {
      fs.rmSync(nodeModules, { recursive: true, force: true });
      const bin = pathWithoutCompiler(path.join(tmp, "bin"));
      const env = { ...process.env, ...cache("2"), PATH: bin.dir };
      for (const name of ["CC", "CXX", "LINK", "AR", "MAKE"]) delete env[name];
      const reachable = ["cc", "c++", "gcc", "g++", "make"].filter(
        (name) => execFileSync("sh", ["-c", `command -v ${name} || true`], { env, encoding: "utf8" }).trim().length > 0,
      );
      if (reachable.length) throw new Error(`the no-compiler PATH still reaches ${reachable.join(", ")}`);
      console.log(
        `\ninstalling again (node_modules removed, same cache) with a PATH of ${fs.readdirSync(bin.dir).length} ` +
          `programs and no toolchain (left out: ${bin.left.join(", ")})…`,
      );
      const log2 = path.join(tmp, "install-no-compiler.log");
      const second = await npmInstall(clone, env, log2);
      describe("npm install (no compiler on PATH)", second, log2);
      if (fs.existsSync(nodeModules)) {
        const compiled = compiledPackages(nodeModules);
        console.log(
          `  node_modules left behind: ${mb(sizeOf(nodeModules).disk)}; compiled addons: ` +
            `${compiled.map((c) => c.name).join(", ") || "none"}`,
        );
      } else console.log("  node_modules left behind: none (npm rolled the install back)");
    }
    console.log(`\nload average at the end: ${os.loadavg()[0].toFixed(1)} (other work on this machine slows installs)`);
  } finally {
    if (opts.keep) console.log(`kept ${tmp}`);
    else fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
