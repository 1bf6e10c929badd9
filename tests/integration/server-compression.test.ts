import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServerApp } from "../support/server-app";
import { setupTestApp, signedInUser } from "../setup/app";

// What the compression of server/app.mjs does with the app's answers (docs/performance.md): a JSON answer under 1 KB
// goes out as it is, with its length (a gzip stream of its own cost more than the rest of the answer), while pages
// and larger JSON answers are gzipped for clients that accept it.
setupTestApp();

let server: Awaited<ReturnType<typeof startServerApp>>;
let cookie: string;

beforeAll(async () => {
  server = await startServerApp();
  ({ cookie } = await signedInUser({ email: "gzip@praxis.example", name: "Dr. Gzip" }));
});
afterAll(() => server.close());

async function get(pathname: string) {
  const response = await fetch(`${server.url}${pathname}`, { headers: { cookie, "accept-encoding": "gzip" } });
  const body = await response.text();
  return { response, body };
}

describe("compression of the app's answers", () => {
  it("sends a small JSON answer as it is, with its length", async () => {
    const { response, body } = await get("/api/prompts");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Encoding")).toBeNull();
    expect(response.headers.get("Content-Length")).toBe(String(Buffer.byteLength(body)));
    expect(JSON.parse(body)).toEqual({ prompts: [] });
  });

  it("gzips a page for a client that accepts it", async () => {
    const { response, body } = await get("/settings/account");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Encoding")).toBe("gzip");
    expect(body).toContain("Dr. Gzip");
  });
});
