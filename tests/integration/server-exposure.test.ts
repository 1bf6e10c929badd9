import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServerApp } from "../support/server-app";
import { setupTestApp } from "../setup/app";

// ASVS 13.4.1, 13.4.3 through server/index.mjs's Express layer with the real public/ directory, run from the repository:
// the working tree around it (.git, the sources, package.json, the data directory) is never served, however the
// path is spelled, and no directory is listed.
setupTestApp();

let server: Awaited<ReturnType<typeof startServerApp>>;
beforeAll(async () => {
  server = await startServerApp();
});
afterAll(() => server?.close());

/** The status line and body for a request target sent exactly as written (fetch would normalise the dots). */
function raw(target: string) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const { port } = new URL(server.url);
    const socket = net.connect({ host: "127.0.0.1", port: Number(port) });
    let answer = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (answer += chunk));
    socket.once("end", () => {
      const [head, ...rest] = answer.split("\r\n\r\n");
      resolve({ status: Number(head.split(" ")[1]), body: rest.join("\r\n\r\n") });
    });
    socket.once("error", reject);
    socket.write(`GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
  });
}

describe("the repository around public/", () => {
  const TARGETS = [
    "/.git/config",
    "/.git/HEAD",
    "/../.git/config",
    "/%2e%2e/.git/config",
    "/..%2f.git%2fconfig",
    "/locales/../../.git/HEAD",
    "/package.json",
    "/../package.json",
    "/%2e%2e/package.json",
    "/server.mjs",
    "/.env",
    "/app/root.tsx",
    "/../app/root.tsx",
    "/data/secrets/cookie",
    "/../data/secrets/cookie",
    "/.ci/run",
  ];

  it.each(TARGETS)("%s is not served", async (target) => {
    const { status, body } = await raw(target);
    expect([404, 400]).toContain(status);
    // Nothing of the files: git's config, the package manifest, source code, a secret.
    expect(body).not.toMatch(/\[core\]|ref: refs\/|"dependencies"|import |createServerApp/);
  });

  it("lists no directory", async () => {
    for (const target of ["/locales/", "/locales/de/", "/live/", "/pe/", "/build/"]) {
      const { status, body } = await raw(target);
      expect([target, status]).toEqual([target, 404]);
      expect(body).not.toMatch(/common\.json|recorder\.js|Index of|<ul/);
    }
  });
});
