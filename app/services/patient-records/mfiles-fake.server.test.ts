import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { startFakeMFilesServer, type FakeMFilesServer } from "../../../tests/support/fake-mfiles-server";

import { PASSWORD, USER, VAULT, pdf } from "../../../tests/support/mfiles-helpers";

// tests/support/fake-mfiles-server.ts, which the M-Files adapter tests run against, checked against
// the published REST API it stands in for (PROTOCOLS.md §4).

describe("the fake M-Files server follows PROTOCOLS.md §4", () => {
  let server: FakeMFilesServer;
  let rest: string;

  beforeEach(async () => {
    server = await startFakeMFilesServer({ vaultGuid: VAULT, users: [{ username: USER, password: PASSWORD }] });
    rest = `${server.url}/REST`;
  });
  afterEach(async () => {
    await server.close();
  });

  async function token(body: Record<string, unknown>): Promise<string> {
    const response = await fetch(`${rest}/server/authenticationtokens`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    const reply = (await response.json()) as { Value: string };
    expect(typeof reply.Value).toBe("string");
    return reply.Value;
  }

  async function get(path: string, auth?: string, headers: Record<string, string> = {}) {
    return fetch(`${rest}${path}`, { headers: { ...(auth ? { "X-Authentication": auth } : {}), ...headers } });
  }

  it("issues a token for wrong credentials that fails with a 403 WebServiceError on first use", async () => {
    const bad = await token({ Username: USER, Password: "nope", VaultGuid: VAULT });
    const response = await get("/objects?o=0", bad);
    expect(response.status).toBe(403);
    const body = (await response.json()) as {
      Status: number;
      Method: string;
      URL: string;
      Exception: { Name: string };
    };
    expect(body).toMatchObject({ Status: 403, Method: "GET", Exception: { Name: "ForbiddenException" } });
    expect(body.URL).toContain("/REST/objects");
  });

  it("answers 403 without a token, for a GUID without braces and after expiry", async () => {
    expect((await get("/objects")).status).toBe(403);
    const noBraces = await token({ Username: USER, Password: PASSWORD, VaultGuid: VAULT.slice(1, -1) });
    expect((await get("/objects", noBraces)).status).toBe(403);
    const past = await token({
      Username: USER,
      Password: PASSWORD,
      VaultGuid: VAULT,
      Expiration: new Date(Date.now() - 1_000).toISOString(),
    });
    expect((await get("/objects", past)).status).toBe(403);
    const good = await token({ Username: USER, Password: PASSWORD, VaultGuid: VAULT });
    expect((await get("/objects", good)).status).toBe(200);
    server.expireAllTokens();
    expect((await get("/objects", good)).status).toBe(403);
  });

  it("parses search conditions, hides deleted objects and caps results", async () => {
    const auth = await token({ Username: USER, Password: PASSWORD, VaultGuid: VAULT });
    const a = server.addObject({ title: "Alpha", properties: { 1002: "ESTT", 1100: 1500, 1200: [3, 4] } });
    const b = server.addObject({ title: "Beta", properties: { 1002: "estt-x", 1100: 900 } });
    const c = server.addObject({ title: "Gamma", properties: { 1002: "ESTT", 1100: 2000 }, deleted: true });
    server.addObject({ type: 9, title: "Delta", properties: { 1002: "ESTT" } });
    const search = async (query: string) => {
      const response = await get(`/objects?${query}`, auth);
      expect(response.status).toBe(200);
      const body = (await response.json()) as { Items: Array<{ ObjVer: { ID: number } }>; MoreResults: boolean };
      return { ids: body.Items.map((i) => i.ObjVer.ID), more: body.MoreResults };
    };
    expect((await search("o=0&p1002=ESTT&p1100>>=1000")).ids).toEqual([a.id]);
    expect((await search("o=0&p1002=estt")).ids).toEqual([a.id]);
    expect((await search("o=0&p1002^=ES")).ids).toEqual([a.id, b.id]);
    expect((await search("o=0&p1002!=ESTT")).ids).toEqual([b.id]);
    expect((await search("o=0&p1002**=e%3Ftt*")).ids).toEqual([a.id, b.id]);
    expect((await search("o=0&p1100<=900")).ids).toEqual([b.id]);
    expect((await search("o=0&p1200=1,4")).ids).toEqual([a.id]);
    expect((await search("o=0&p1200=%00")).ids).toEqual([b.id]);
    expect((await search("o=0&p1002=ESTT&d=include")).ids).toEqual([a.id, c.id]);
    expect(await search("o=0&limit=1")).toEqual({ ids: [a.id], more: true });
    expect((await get("/objects?o=0&p1002~=x", auth)).status).toBe(400);
  });

  it("lists files like ObjectVersion.Files, streams content with Range, and 404s unknown files", async () => {
    const auth = await token({ Username: USER, Password: PASSWORD, VaultGuid: VAULT });
    const ref = server.addObject({ title: "Doc", files: [{ name: "Contract", extension: "pdf", content: pdf("x") }] });
    const base = `/objects/0/${ref.id}/latest/files`;
    const files = (await (await get(base, auth)).json()) as Array<{ ID: number; Name: string; Extension: string }>;
    expect(files).toMatchObject([{ ID: ref.fileIds[0], Name: "Contract", Extension: "pdf" }]);
    const full = await get(`${base}/${ref.fileIds[0]}/content`, auth);
    expect(full.headers.get("content-type")).toBe("application/octet-stream");
    expect(Buffer.from(await full.arrayBuffer())).toEqual(pdf("x"));
    const part = await get(`${base}/${ref.fileIds[0]}/content.aspx`, auth, { Range: "bytes=0-4" });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe("%PDF-");
    const missing = await get(`${base}/999/content`, auth);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { Status: number }).Status).toBe(404);
    expect((await get(`/objects/0/${ref.id}/7/files`, auth)).status).toBe(404);
  });

  it("accepts .aspx suffixes, _method tunnelling and MFWS.ashx?restPath=", async () => {
    const response = await fetch(`${rest}/server/authenticationtokens.aspx`, {
      method: "POST",
      body: JSON.stringify({ Username: USER, Password: PASSWORD, VaultGuid: VAULT }),
    });
    const { Value } = (await response.json()) as { Value: string };
    expect((await get("/session/vault.aspx", Value)).status).toBe(200);
    const tunnelled = await fetch(`${rest}/objects?_method=GET&o=0`, {
      method: "POST",
      headers: { "X-Authentication": Value },
    });
    expect(tunnelled.status).toBe(200);
    const ashx = await fetch(`${server.url}/REST/MFWS.ashx?restPath=${encodeURIComponent("/session/vault")}`, {
      headers: { "X-Authentication": Value },
    });
    expect(((await ashx.json()) as { GUID: string }).GUID).toBe(VAULT);
  });

  it("fails calls without the mfilesmsm cookie in Multi-Server Mode", async () => {
    await server.close();
    server = await startFakeMFilesServer({
      vaultGuid: VAULT,
      users: [{ username: USER, password: PASSWORD }],
      multiServerMode: true,
    });
    rest = `${server.url}/REST`;
    const response = await fetch(`${rest}/server/authenticationtokens`, {
      method: "POST",
      body: JSON.stringify({ Username: USER, Password: PASSWORD, VaultGuid: VAULT }),
    });
    const cookie = response.headers.getSetCookie()[0].split(";")[0];
    const { Value } = (await response.json()) as { Value: string };
    const without = await get("/session/vault", Value);
    expect(without.status).toBe(403);
    expect(((await without.json()) as { Exception: { Message: string } }).Exception.Message).toBe(
      "Token-based authentication failed.",
    );
    expect((await get("/session/vault", Value, { Cookie: cookie })).status).toBe(200);
  });
});
