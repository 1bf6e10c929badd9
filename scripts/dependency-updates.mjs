#!/usr/bin/env node
// ASVS 5.0 15.2.1: are the production packages within the update time frames of docs/data-protection.md §4?
// The registry's advisory service (what `npm audit` asks) cannot be reached from here, so this check does not know
// what a release fixed. What it can know from the registry's package documents (plain GETs): for every package a
// production install gets (the SBOM's list, scripts/sbom.mjs), the newer releases the lockfile could take — allowed
// by the range of every package that depends on it, and for the project's own dependencies by npm's caret range
// (the same major; the same minor below 1.0), since changing package.json is ours to do — and since when they are
// out. Such a release out for longer than the longest time frame (90 days: any fix it carried is overdue, whatever
// its severity) that is not installed is LATE, and the check fails. A package held back by a dependent's range is
// not late here: updating that dependent is, and it is judged in its own right. Newer releases still inside the
// frame and deprecated installed versions are listed for the weekly review, without failing it.
//   npm run deps:check                          (the project's lockfile, the registry npm is configured with)
//   node scripts/dependency-updates.mjs --days 90 --registry https://registry.npmjs.org/ --lockfile package-lock.json
// Exit 0: nothing late; 1: something late; 2: a package could not be checked.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import semver from "semver";
import { currentPlatform, npmComponents, npmPurl } from "./sbom.mjs";

export const DEFAULT_DAYS = 90;
const DAY_MS = 86_400_000;

/** Where `name` resolves from the package at lockfile path `from` (Node's lookup: the nearest node_modules up). */
function resolveFrom(packages, from, name) {
  for (let base = from; ;) {
    const candidate = base ? `${base}/node_modules/${name}` : `node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!base) return undefined;
    const up = base.lastIndexOf("/node_modules/");
    base = up === -1 ? "" : base.slice(0, up);
  }
}

/**
 * The packages of a production install on `platform`, each at its place in the tree with the ranges it must keep
 * satisfying: those its dependents declare (any dependent, for the lockfile holds them all), and `^installed` where
 * the project itself depends on it.
 */
export function installedPackages(lock, platform) {
  const packages = lock.packages ?? {};
  const production = new Set(npmComponents(lock, platform).map((c) => c.purl));
  const ranges = new Map();
  for (const [from, entry] of Object.entries(packages)) {
    if (entry.link) continue;
    const declared = { ...entry.peerDependencies, ...entry.optionalDependencies, ...entry.dependencies };
    if (from === "") Object.assign(declared, entry.devDependencies);
    for (const [name, range] of Object.entries(declared)) {
      const at = resolveFrom(packages, from, name);
      if (!at || !packages[at].version) continue;
      const wanted = from === "" ? `^${packages[at].version}` : range;
      ranges.set(at, [...(ranges.get(at) ?? []), wanted]);
    }
  }
  const out = [];
  for (const [at, entry] of Object.entries(packages)) {
    if (!at || entry.link || !entry.version) continue;
    const name = entry.name ?? at.slice(at.lastIndexOf("node_modules/") + "node_modules/".length);
    if (!production.has(npmPurl(name, entry.version))) continue;
    out.push({ name, version: entry.version, path: at, ranges: ranges.get(at) ?? [`^${entry.version}`] });
  }
  return out;
}

/**
 * One installed package against its registry document: the releases newer than the installed one that every range
 * allows, the first of them (since when an update has been possible) and whether that is longer ago than `days`.
 */
export function judgePackage({ name, version, path: at, ranges }, packument, { now, days }) {
  const times = packument.time ?? {};
  const newer = Object.keys(packument.versions ?? {})
    .filter((v) => semver.valid(v) && !semver.prerelease(v) && semver.gt(v, version) && times[v])
    .filter((v) => ranges.every((range) => semver.satisfies(v, range)))
    .sort(semver.compare);
  const first = newer[0];
  const since = first ? new Date(times[first]) : undefined;
  const deprecated = packument.versions?.[version]?.deprecated;
  return {
    name,
    version,
    path: at,
    newest: newer.at(-1),
    since,
    late: since !== undefined && now.getTime() - since.getTime() > days * DAY_MS,
    ...(typeof deprecated === "string" && deprecated ? { deprecated } : {}),
  };
}

/** The registry's document of a package (npm's own URL form: a scoped name with its slash encoded). */
export async function fetchPackument(registry, name) {
  const url = new URL(name.replace("/", "%2f"), registry.endsWith("/") ? registry : `${registry}/`);
  const response = await fetch(url, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(60_000) });
  if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
  return response.json();
}

/** Every installed package judged, one registry request per name, `concurrency` at a time; a name that cannot be
 * fetched leaves its packages `unknown`. */
export async function checkPackages(installed, { registry, now, days, concurrency = 8 }) {
  const names = [...new Set(installed.map((p) => p.name))];
  const documents = new Map();
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const name = names[next++];
      try {
        documents.set(name, await fetchPackument(registry, name));
      } catch (error) {
        documents.set(name, error instanceof Error ? error : new Error(String(error)));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, names.length) }, worker));
  return installed.map((pkg) => {
    const document = documents.get(pkg.name);
    return document instanceof Error
      ? { name: pkg.name, version: pkg.version, path: pkg.path, unknown: document.message }
      : judgePackage(pkg, document, { now, days });
  });
}

const day = (date) => date.toISOString().slice(0, 10);

export function report(results, { days, now }) {
  const late = results.filter((r) => r.late);
  const unknown = results.filter((r) => r.unknown);
  const pending = results.filter((r) => !r.late && r.newest);
  const deprecated = results.filter((r) => r.deprecated);
  const ageDays = (r) => Math.floor((now.getTime() - r.since.getTime()) / DAY_MS);
  const lines = [`${results.length} installed production packages checked against the registry on ${day(now)}:`];
  for (const r of late)
    lines.push(
      `  LATE     ${r.name} ${r.version} (${r.path}): ${r.newest} can be installed; updates out since ${day(r.since)} (${ageDays(r)} days, more than ${days})`,
    );
  for (const r of unknown) lines.push(`  UNKNOWN  ${r.name} ${r.version}: ${r.unknown}`);
  for (const r of pending)
    lines.push(
      `  update   ${r.name} ${r.version} (${r.path}) → ${r.newest} (out since ${day(r.since)}, ${ageDays(r)} days)`,
    );
  for (const r of deprecated) lines.push(`  deprecated  ${r.name} ${r.version}: ${r.deprecated}`);
  lines.push(
    `${late.length} late (a compatible release out more than ${days} days), ${pending.length} within the time frame, ` +
      `${deprecated.length} deprecated, ${unknown.length} not checked.`,
  );
  return { text: lines.join("\n"), exitCode: unknown.length > 0 ? 2 : late.length > 0 ? 1 : 0 };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const { values } = parseArgs({
    options: {
      days: { type: "string", default: String(DEFAULT_DAYS) },
      registry: { type: "string", default: process.env.npm_config_registry || "https://registry.npmjs.org/" },
      lockfile: { type: "string", default: path.join(root, "package-lock.json") },
      concurrency: { type: "string", default: "8" },
    },
  });
  const days = Number(values.days);
  if (!Number.isFinite(days) || days <= 0) {
    console.error("--days must be a positive number");
    process.exit(2);
  }
  const lock = JSON.parse(fs.readFileSync(values.lockfile, "utf8"));
  const packages = installedPackages(lock, currentPlatform());
  const now = new Date();
  const results = await checkPackages(packages, {
    registry: values.registry,
    now,
    days,
    concurrency: Number(values.concurrency),
  });
  const { text, exitCode } = report(results, { days, now });
  console.log(text);
  process.exitCode = exitCode;
}
