import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { setConfig } from "~/services/config/config.server";
import { startServerApp } from "../support/server-app";
import { setupTestApp } from "../setup/app";

// ASVS 3.4.1, 3.4.4, 3.4.5, 3.4.6 on every answer of server/index.mjs (server/app.mjs): the live client, the build's
// assets and public/ never pass through Remix, and resource routes answer as they like, yet a browser must not sniff
// them into another type, frame them, leak the page address to other sites, or reach them over plain http once HSTS
// is known. Pages and API answers keep the policy the app gives them.
const app = setupTestApp();

let dir: string;
let server: Awaited<ReturnType<typeof startServerApp>> | undefined;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-static-"));
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  };
  write("public/favicon.svg", '<svg xmlns="http://www.w3.org/2000/svg"/>');
  write("public/locales/de/common.json", '{"hallo":"Hallo"}');
  write("public/live/client.js", "export const live = 1;");
  write("assets/entry.client-ABC123.js", "export const entry = 1;");
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  setConfig(app.config);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function serve() {
  server = await startServerApp({
    publicDir: path.join(dir, "public"),
    assetsBuildDirectory: path.join(dir, "assets"),
  });
  return server.url;
}

const FILES: Array<[string, string, RegExp]> = [
  ["the build's assets", "/build/entry.client-ABC123.js", /max-age=31536000, immutable/],
  ["the live client", "/live/client.js", /^no-cache$/],
  ["public/", "/favicon.svg", /^public, max-age=3600$/],
  ["the translations", "/locales/de/common.json", /^public, max-age=3600$/],
  ["a resource route that sets no policy (liveness)", "/resources/healthz", /^no-store$/],
];

describe("static files and resource routes", () => {
  it("declare UTF-8 for the text they serve (ASVS 4.1.1)", async () => {
    const base = await serve();
    const types: string[] = [];
    for (const file of ["/build/entry.client-ABC123.js", "/live/client.js", "/locales/de/common.json"])
      types.push(`${file} ${(await fetch(`${base}${file}`)).headers.get("Content-Type")}`);
    expect(types).toEqual([
      "/build/entry.client-ABC123.js application/javascript; charset=UTF-8",
      "/live/client.js application/javascript; charset=UTF-8",
      "/locales/de/common.json application/json; charset=UTF-8",
    ]);
  });

  it.each(FILES)("%s: nosniff, a Referrer-Policy, no framing, and their own caching", async (_, file, cache) => {
    const response = await fetch(`${await serve()}${file}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(response.headers.get("Referrer-Policy")).toBe("same-origin");
    expect(response.headers.get("X-Frame-Options")).toBe("DENY");
    expect(response.headers.get("Content-Security-Policy")).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(response.headers.get("Cache-Control")).toMatch(cache);
    // APP_URL is http://localhost: no HSTS for a development machine.
    expect(response.headers.get("Strict-Transport-Security")).toBeNull();
  });

  it("carry HSTS under an https APP_URL, like every page", async () => {
    setConfig({ ...app.config, appUrl: "https://skribent.example" });
    const base = await serve();
    for (const [, file] of FILES) {
      const response = await fetch(`${base}${file}`);
      expect(response.headers.get("Strict-Transport-Security")).toBe("max-age=31536000; includeSubDomains");
    }
  });

  it("leave the pages' own policy alone: one CSP, with the page's nonce", async () => {
    const base = await serve();
    const page = await fetch(`${base}/login`);
    expect(page.status).toBe(200);
    const policy = page.headers.get("Content-Security-Policy")!;
    expect(policy).toMatch(/script-src 'nonce-[^']+' 'strict-dynamic'/);
    expect(policy).not.toContain("default-src 'none'");
    // Pages and API answers carry the same Referrer-Policy as the files (ASVS 3.4.5).
    expect(page.headers.get("Referrer-Policy")).toBe("same-origin");
    const api = await fetch(`${base}/api/files`);
    expect(api.status).toBe(401);
    expect(api.headers.get("Referrer-Policy")).toBe("same-origin");
    expect(api.headers.get("Content-Security-Policy")).toBe("default-src 'none'; frame-ancestors 'none'");
  });
});
