import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseEnv } from "./config.server";
import { RESERVED_SEGMENTS } from "./workspace.server";

// ADMIN_PATH is the dashboard's one dynamic segment: a path the app already serves would win over it, and the
// dashboard would silently be unreachable. The refusal has to know every first segment the app serves.

/** The first URL segment of a Remix flat route file or folder name, or null (index, pathless, dynamic). */
function firstSegment(routeName: string) {
  const segments = routeName
    .replace(/\.tsx?$/, "")
    .replace(/\[\.\]/g, "·")
    .split(".")
    .filter((segment) => !segment.startsWith("_"));
  const first = segments[0]?.replace(/_$/, "");
  return !first || first.startsWith("$") ? null : first;
}

describe("ADMIN_PATH", () => {
  it("names every first segment that app/routes and public/ serve as reserved", () => {
    const served = new Set<string>(["build"]); // Remix's publicPath for the client bundles
    for (const entry of fs.readdirSync(path.resolve("app/routes"))) {
      if (entry.includes(".test.")) continue;
      const segment = firstSegment(entry);
      if (segment) served.add(segment);
    }
    for (const entry of fs.readdirSync(path.resolve("public"))) served.add(entry);
    const expected = [...served].filter((segment) => /^[A-Za-z0-9][A-Za-z0-9_-]{2,62}$/.test(segment)).sort();
    expect(expected).toContain("chat");
    expect(expected).toContain("api");
    expect([...RESERVED_SEGMENTS].sort()).toEqual(expect.arrayContaining(expected));
  });

  it("refuses a path the app already serves, in any case, and keeps a free one", () => {
    for (const taken of ["/chat", "/API", "/Settings", "/live"]) {
      expect(() => parseEnv({ ADMIN_PATH: taken })).toThrow(/ADMIN_PATH: must not be a path the app already serves/);
    }
    expect(parseEnv({ ADMIN_PATH: "/betrieb-7f3k" }).ADMIN_PATH).toBe("/betrieb-7f3k");
    expect(parseEnv({}).ADMIN_PATH).toBe("/betrieb");
  });
});
