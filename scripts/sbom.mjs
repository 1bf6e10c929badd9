#!/usr/bin/env node
// The software bill of materials (ASVS 5.0 15.1.2): what a production install of Skribent runs, as CycloneDX 1.5
// JSON. Made from package-lock.json (every package a production install on this platform gets, with the registry's
// SHA-512 and its licence; development-only packages and those for other platforms are left out) and, where dpkg can say, the Debian packages the app starts
// itself (ffmpeg and ffprobe) with their installed versions, plus the Node.js that runs it. No network: the lockfile
// is the inventory npm installs from, so the SBOM names exactly what `npm ci --omit=dev` puts on a server.
//   npm run sbom                      (to standard output)
//   npm run sbom -- --out build/sbom.cdx.json
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

/** The Debian packages whose programs the app runs (ffprobe and ffmpeg: app/services/audio-*.server.ts). */
export const DEBIAN_RUNTIME_PACKAGES = ["ffmpeg"];

/** `pkg:npm/…` as the purl specification spells it: the scope's `@` percent-encoded. */
export function npmPurl(name, version) {
  return `pkg:npm/${name.replace(/^@/, "%40")}@${encodeURIComponent(version)}`;
}

/** The package's name as its lockfile path ends: `node_modules/a/node_modules/@s/b` → `@s/b`. */
function nameFromPath(lockPath) {
  const at = lockPath.lastIndexOf("node_modules/");
  return lockPath.slice(at + "node_modules/".length);
}

function hashes(integrity) {
  const out = [];
  for (const entry of (integrity ?? "").split(/\s+/)) {
    const [alg, base64] = entry.split("-", 2);
    const name = { sha512: "SHA-512", sha384: "SHA-384", sha256: "SHA-256", sha1: "SHA-1" }[alg];
    if (name && base64) out.push({ alg: name, content: Buffer.from(base64, "base64").toString("hex") });
  }
  return out;
}

/** npm's own rule (npm-install-checks): a list names the platforms a package is for, `!x` the ones it is not. */
function allows(list, value) {
  if (!Array.isArray(list) || list.length === 0 || value === undefined) return true;
  if (list.includes(`!${value}`)) return false;
  const positive = list.filter((item) => !item.startsWith("!"));
  return positive.length === 0 || positive.includes(value);
}

/** This machine as npm matches a package's `os`, `cpu` and `libc` against it. */
export function currentPlatform() {
  const glibc = process.platform === "linux" ? process.report?.getReport().header.glibcVersionRuntime : undefined;
  return {
    os: process.platform,
    cpu: process.arch,
    libc: process.platform === "linux" ? (glibc ? "glibc" : "musl") : undefined,
  };
}

/**
 * The npm components of a production install on `platform`: every lockfile entry not marked dev, and not a
 * package for another operating system, processor or C library (npm skips those), once per name and version.
 */
export function npmComponents(lock, platform) {
  const byRef = new Map();
  for (const [lockPath, entry] of Object.entries(lock.packages ?? {})) {
    if (!lockPath || entry.dev || entry.link || !entry.version) continue;
    if (!allows(entry.os, platform.os) || !allows(entry.cpu, platform.cpu) || !allows(entry.libc, platform.libc))
      continue;
    const name = entry.name ?? nameFromPath(lockPath);
    const purl = npmPurl(name, entry.version);
    if (byRef.has(purl)) continue;
    const slash = name.startsWith("@") ? name.indexOf("/") : -1;
    byRef.set(purl, {
      type: "library",
      "bom-ref": purl,
      ...(slash > 0 ? { group: name.slice(0, slash), name: name.slice(slash + 1) } : { name }),
      version: entry.version,
      purl,
      ...(entry.integrity ? { hashes: hashes(entry.integrity) } : {}),
      ...(entry.license ? { licenses: [{ expression: String(entry.license) }] } : {}),
      ...(entry.resolved?.startsWith("https://")
        ? { externalReferences: [{ type: "distribution", url: entry.resolved }] }
        : {}),
      ...(entry.optional || entry.devOptional ? { scope: "optional" } : {}),
    });
  }
  return [...byRef.values()].sort((a, b) => a.purl.localeCompare(b.purl));
}

/** The installed version of each Debian package dpkg knows; packages it does not know are left out (and said so). */
export function debianVersions(packages, query = dpkgQuery) {
  const found = [];
  for (const name of packages) {
    const version = query(name);
    if (version) found.push({ name, version });
  }
  return found;
}

function dpkgQuery(name) {
  try {
    const out = execFileSync("dpkg-query", ["-W", "-f", "${Status}\t${Version}\t${Architecture}", name], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    const [status, version, arch] = out.split("\t");
    return status.endsWith(" installed") ? { version, arch } : undefined;
  } catch {
    return undefined;
  }
}

function debianComponent({ name, version }) {
  // The epoch's colon stays as the purl specification's own Debian examples write it (`attr@1:2.4.47-2`).
  const purl = `pkg:deb/debian/${name}@${encodeURIComponent(version.version).replace(/%3A/g, ":")}?arch=${version.arch}`;
  return { type: "application", "bom-ref": purl, name, version: version.version, purl };
}

export function buildSbom({ pkg, lock, platform, debian, nodeVersion, appVersion, timestamp, serial }) {
  return {
    bomFormat: "CycloneDX",
    specVersion: "1.5",
    serialNumber: `urn:uuid:${serial}`,
    version: 1,
    metadata: {
      timestamp,
      tools: { components: [{ type: "application", name: "scripts/sbom.mjs" }] },
      component: { type: "application", "bom-ref": pkg.name, name: pkg.name, version: appVersion },
    },
    components: [
      ...npmComponents(lock, platform),
      ...debian.map(debianComponent),
      {
        type: "platform",
        "bom-ref": `pkg:generic/node@${nodeVersion}`,
        name: "node",
        version: nodeVersion,
        purl: `pkg:generic/node@${nodeVersion}`,
      },
    ],
  };
}

function appVersion(root) {
  try {
    return execFileSync("git", ["rev-parse", "--short=12", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { out: { type: "string" } } });
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const read = (file) => JSON.parse(fs.readFileSync(path.join(root, file), "utf8"));
  const debian = debianVersions(DEBIAN_RUNTIME_PACKAGES);
  for (const name of DEBIAN_RUNTIME_PACKAGES)
    if (!debian.some((d) => d.name === name)) console.error(`sbom: ${name} is not installed through dpkg; not listed`);
  const sbom = buildSbom({
    pkg: read("package.json"),
    lock: read("package-lock.json"),
    platform: currentPlatform(),
    debian,
    nodeVersion: process.versions.node,
    appVersion: appVersion(root),
    timestamp: new Date().toISOString(),
    serial: randomUUID(),
  });
  const text = `${JSON.stringify(sbom, null, 2)}\n`;
  if (values.out) {
    fs.mkdirSync(path.dirname(path.resolve(values.out)), { recursive: true });
    fs.writeFileSync(values.out, text);
    console.error(`sbom: ${sbom.components.length} components → ${values.out}`);
  } else process.stdout.write(text);
}
