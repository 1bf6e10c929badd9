import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { startFakeMFilesServer, type FakeMFilesServer } from "../../tests/support/fake-mfiles-server";

import {
  PatientRecordError,
  createPatientRecordSource,
  type PatientRecordSource,
  type PatientRecordsConfig,
} from "./patient-records.server";

// The M-Files adapter against tests/support/fake-mfiles-server.ts, a local server that follows the
// published REST API (PROTOCOLS.md §4). The last block checks the fake itself against that description.

const VAULT = "{C840BE1A-5B47-4AC0-8EF7-835C166C8E24}";
const PATIENT_PROPERTY = 1150;
const USER = "svc-skribent";
const PASSWORD = "correct horse battery staple";

function pdf(label: string, padTo = 0): Buffer {
  const text = Buffer.from(`%PDF-1.7\n% ${label}\n%%EOF\n`);
  return padTo > text.length ? Buffer.concat([text, Buffer.alloc(padTo - text.length, 0x20)]) : text;
}

async function rejection(promise: Promise<unknown>): Promise<PatientRecordError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PatientRecordError);
  return error as PatientRecordError;
}

/** A second host that must never be contacted. */
async function startBystander(): Promise<{ url: string; hits: number; close(): Promise<void> }> {
  const state = { url: "", hits: 0, close: async () => {} };
  const server: Server = createServer((_req, res) => {
    state.hits++;
    res.end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((error) => (error ? reject(error) : resolve()));
    });
  return state;
}

describe("M-Files patient records", () => {
  let server: FakeMFilesServer;
  let users: Array<{ username: string; password: string }>;
  let ids: Record<string, { id: number; fileIds: number[] }>;

  function source(overrides: Partial<Extract<PatientRecordsConfig, { kind: "mfiles" }>> = {}): PatientRecordSource {
    return createPatientRecordSource({
      kind: "mfiles",
      baseUrl: server.url,
      vaultGuid: VAULT,
      username: USER,
      password: PASSWORD,
      patientIdPropertyId: PATIENT_PROPERTY,
      timeoutMs: 5_000,
      ...overrides,
    });
  }

  function contentRequests() {
    return server.requests.filter((r) => r.path.endsWith("/content"));
  }

  beforeEach(async () => {
    users = [{ username: USER, password: PASSWORD }];
    server = await startFakeMFilesServer({ vaultGuid: VAULT, users });
    const at = (day: number) => new Date(Date.UTC(2024, 0, day));
    const add = (key: string, input: Parameters<FakeMFilesServer["addObject"]>[0]) => {
      const ref = server.addObject(input);
      ids = { ...ids, [key]: { id: ref.id, fileIds: ref.fileIds } };
    };
    ids = {};
    add("befund", {
      title: "Befund",
      properties: { [PATIENT_PROPERTY]: "P-1", 0: "Befund" },
      files: [{ name: "Befund", extension: "pdf", content: pdf("P-1 befund") }],
      lastModified: at(3),
    });
    add("labor", {
      title: "Labor",
      properties: { [PATIENT_PROPERTY]: "P-1" },
      files: [{ name: "Labor 01/2024", extension: "PDF", content: pdf("P-1 labor") }],
      lastModified: at(2),
    });
    add("docx", {
      title: "Notizen",
      properties: { [PATIENT_PROPERTY]: "P-1" },
      files: [{ name: "Notizen", extension: "docx", content: "PK\u0003\u0004 not a pdf" }],
      lastModified: at(4),
    });
    add("disguised", {
      title: "Scan",
      properties: { [PATIENT_PROPERTY]: "P-1" },
      files: [{ name: "Scan", extension: "pdf", content: "<html>login page</html>" }],
      lastModified: at(5),
    });
    add("truncated", {
      title: "Abgebrochen",
      properties: { [PATIENT_PROPERTY]: "P-1" },
      files: [{ name: "Truncated", extension: "pdf", content: "%PD" }],
      lastModified: at(1),
    });
    add("deleted", {
      title: "Gelöscht",
      properties: { [PATIENT_PROPERTY]: "P-1" },
      files: [{ name: "Deleted", extension: "pdf", content: pdf("P-1 deleted") }],
      deleted: true,
    });
    add("otherType", {
      type: 9,
      title: "Not a document",
      properties: { [PATIENT_PROPERTY]: "P-1" },
      files: [{ name: "Other", extension: "pdf", content: pdf("P-1 other type") }],
    });
    add("otherPatient", {
      title: "Fremder Befund",
      properties: { [PATIENT_PROPERTY]: "P-2" },
      files: [{ name: "Fremd", extension: "pdf", content: pdf("P-2 befund") }],
    });
    add("otherProperty", {
      title: "Same value, other property",
      properties: { 1151: "P-1" },
      files: [{ name: "Wrong property", extension: "pdf", content: pdf("other property") }],
    });
  });

  afterEach(async () => {
    await server.close();
  });

  it("returns the patient's PDFs, skips other files, and never another patient's documents", async () => {
    const documents = await source().fetchDocuments("P-1");

    expect(documents.map((d) => d.name)).toEqual(["Befund.pdf", "Labor 01_2024.pdf"]);
    expect(Buffer.from(documents[0].data)).toEqual(pdf("P-1 befund"));
    expect(Buffer.from(documents[1].data)).toEqual(pdf("P-1 labor"));

    const search = server.requests.find((r) => r.path === "/REST/objects");
    expect(search?.query).toBe(`o=0&p${PATIENT_PROPERTY}=P-1`);
    const downloaded = contentRequests().map((r) => r.path);
    expect(downloaded).not.toContainEqual(expect.stringContaining(`/objects/0/${ids.docx.id}/`));
    for (const key of ["otherPatient", "otherProperty", "deleted"]) {
      expect(server.requests.some((r) => r.path.includes(`/objects/0/${ids[key].id}/`))).toBe(false);
    }
    expect(server.requests.every((r) => r.status !== null && r.status < 400)).toBe(true);
    expect(server.tokensIssued).toBe(1);

    const other = await source().fetchDocuments("P-2");
    expect(other.map((d) => d.name)).toEqual(["Fremd.pdf"]);
    expect(Buffer.from(other[0].data)).toEqual(pdf("P-2 befund"));
  });

  it("returns [] for a patient without documents and validates the id first", async () => {
    expect(await source().fetchDocuments("P-404")).toEqual([]);
    const error = await rejection(source().fetchDocuments("../x"));
    expect(error.message).toBe("Invalid patient ID");
    expect((await rejection(source().fetchDocuments(" "))).message).toBe("Patient ID is required");
    expect(server.requests.filter((r) => r.path === "/REST/objects")).toHaveLength(1);
  });

  it("accepts the REST root as base URL and a vault GUID without braces", async () => {
    const documents = await source({ baseUrl: `${server.url}/REST/`, vaultGuid: VAULT.slice(1, -1) }).fetchDocuments(
      "P-1",
    );
    expect(documents).toHaveLength(2);
  });

  it("maps a wrong password to unauthorized without logging in twice", async () => {
    const error = await rejection(source({ password: "wrong" }).fetchDocuments("P-1"));
    expect(error.code).toBe("unauthorized");
    expect(error.message).not.toContain("wrong");
    expect(server.tokensIssued).toBe(1);
    expect(server.requests.filter((r) => r.status === 403)).toHaveLength(1);
  });

  it("logs in again once when the cached token has expired, then succeeds", async () => {
    const records = source();
    expect(await records.fetchDocuments("P-1")).toHaveLength(2);
    expect(server.tokensIssued).toBe(1);

    server.expireAllTokens();
    expect(await records.fetchDocuments("P-1")).toHaveLength(2);
    expect(server.tokensIssued).toBe(2);
    expect(server.requests.filter((r) => r.status === 403)).toHaveLength(1);

    // The new token is cached: a third call logs in no more.
    expect(await records.fetchDocuments("P-1")).toHaveLength(2);
    expect(server.tokensIssued).toBe(2);
  });

  it("gives up after one new login when the credentials stopped working", async () => {
    const records = source();
    await records.fetchDocuments("P-1");
    users[0].password = "rotated";
    server.expireAllTokens();
    expect((await rejection(records.fetchDocuments("P-1"))).code).toBe("unauthorized");
    expect(server.tokensIssued).toBe(2);
  });

  it("sends the Multi-Server Mode cookie back", async () => {
    await server.close();
    server = await startFakeMFilesServer({ vaultGuid: VAULT, users, multiServerMode: true });
    server.addObject({
      title: "Befund",
      properties: { [PATIENT_PROPERTY]: "P-1" },
      files: [{ name: "Befund", extension: "pdf", content: pdf("msm") }],
    });
    const documents = await source().fetchDocuments("P-1");
    expect(documents.map((d) => d.name)).toEqual(["Befund.pdf"]);
  });

  describe("redirects", () => {
    let bystander: Awaited<ReturnType<typeof startBystander>>;
    beforeEach(async () => {
      bystander = await startBystander();
    });
    afterEach(async () => {
      await bystander.close();
    });

    it("does not follow a redirect on an authenticated call", async () => {
      const records = source();
      server.redirect = { location: bystander.url, scope: "api" };
      const error = await rejection(records.fetchDocuments("P-1"));
      expect(error.code).toBe("unavailable");
      expect(server.requests.some((r) => r.status === 302)).toBe(true);
      expect(bystander.hits).toBe(0);
    });

    it("does not follow a redirect of the token request", async () => {
      server.redirect = { location: bystander.url, scope: "all" };
      expect((await rejection(source().fetchDocuments("P-1"))).code).toBe("unavailable");
      expect((await source().check()).status).toBe("error");
      expect(bystander.hits).toBe(0);
    });
  });

  it("times out within the configured time-out when the server stalls", async () => {
    server.stall = { scope: "api" };
    const started = performance.now();
    const error = await rejection(source({ timeoutMs: 300 }).fetchDocuments("P-1"));
    const elapsed = performance.now() - started;
    expect(error.code).toBe("timeout");
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(2_000);
  });

  it("times out when a download stops half-way", async () => {
    server.stall = { scope: "content" };
    const error = await rejection(source({ timeoutMs: 300 }).fetchDocuments("P-1"));
    expect(error.code).toBe("timeout");
    // The disguised "PDF" is abandoned after its first bytes; the real one stalls half-way.
    expect(contentRequests().map((r) => r.path)).toEqual([
      `/REST/objects/0/${ids.disguised.id}/1/files/${ids.disguised.fileIds[0]}/content`,
      `/REST/objects/0/${ids.befund.id}/1/files/${ids.befund.fileIds[0]}/content`,
    ]);
  });

  it("passes the caller's abort on as it is", async () => {
    server.stall = { scope: "all" };
    const controller = new AbortController();
    const pending = source().fetchDocuments("P-1", { signal: controller.signal });
    const reason = new Error("user left");
    queueMicrotask(() => controller.abort(reason));
    await expect(pending).rejects.toBe(reason);
  });

  describe("size limit", () => {
    beforeEach(() => {
      server.addObject({
        title: "Large scan",
        properties: { [PATIENT_PROPERTY]: "P-3" },
        files: [{ name: "Large", extension: "pdf", content: pdf("large", 5_000) }],
        lastModified: new Date(Date.UTC(2024, 1, 2)),
      });
      server.addObject({
        title: "Small",
        properties: { [PATIENT_PROPERTY]: "P-3" },
        files: [{ name: "Small", extension: "pdf", content: pdf("small", 1_000) }],
        lastModified: new Date(Date.UTC(2024, 1, 1)),
      });
      server.addObject({
        title: "Only large",
        properties: { [PATIENT_PROPERTY]: "P-4" },
        files: [{ name: "Large", extension: "pdf", content: pdf("large", 5_000) }],
      });
    });

    it.each([
      ["with Content-Length", false],
      ["streamed without Content-Length", true],
    ])("skips a PDF over maxBytesPerDocument (%s) and keeps the others", async (_label, chunked) => {
      server.chunkedDownloads = chunked;
      const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
      try {
        const documents = await source({ maxBytesPerDocument: 1_000 }).fetchDocuments("P-3");
        expect(documents.map((d) => d.name)).toEqual(["Small.pdf"]);
        expect(documents[0].data.byteLength).toBe(1_000);
        expect(warn).toHaveBeenCalledTimes(1);
        const logged = warn.mock.calls.flat().join(" ");
        expect(logged).not.toContain(PASSWORD);
        expect(logged).not.toContain("%PDF");
        expect(logged).not.toContain("P-3");
      } finally {
        warn.mockRestore();
      }
    });

    it("fails with too_large when every PDF of the patient is over the limit", async () => {
      server.chunkedDownloads = true;
      const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
      try {
        expect((await rejection(source({ maxBytesPerDocument: 1_000 }).fetchDocuments("P-4"))).code).toBe("too_large");
      } finally {
        warn.mockRestore();
      }
    });
  });

  it("returns at most maxDocuments, newest first, and downloads no more", async () => {
    for (let day = 1; day <= 5; day++) {
      server.addObject({
        title: `Dokument ${day}`,
        properties: { [PATIENT_PROPERTY]: "P-5" },
        files: [{ name: `Dokument ${day}`, extension: "pdf", content: pdf(`day ${day}`) }],
        lastModified: new Date(Date.UTC(2024, 2, day)),
      });
    }
    const documents = await source({ maxDocuments: 3 }).fetchDocuments("P-5");
    expect(documents.map((d) => d.name)).toEqual(["Dokument 5.pdf", "Dokument 4.pdf", "Dokument 3.pdf"]);
    expect(contentRequests()).toHaveLength(3);
  });

  it("counts documents across the files of one object", async () => {
    server.addObject({
      title: "Mappe",
      properties: { [PATIENT_PROPERTY]: "P-6" },
      files: [
        { name: "Teil 1", extension: "pdf", content: pdf("1") },
        { name: "Teil 2", extension: "txt", content: "plain" },
        { name: "Teil 3", extension: "pdf", content: pdf("3") },
        { name: "Teil 4", extension: "pdf", content: pdf("4") },
      ],
    });
    const documents = await source({ maxDocuments: 2 }).fetchDocuments("P-6");
    expect(documents.map((d) => d.name)).toEqual(["Teil 1.pdf", "Teil 3.pdf"]);
  });

  it("maps server errors to unavailable", async () => {
    server.failure = { status: 500, scope: "api" };
    expect((await rejection(source().fetchDocuments("P-1"))).code).toBe("unavailable");
  });

  it("maps an unreachable host to unavailable", async () => {
    const url = server.url;
    await server.close();
    expect((await rejection(source({ baseUrl: url }).fetchDocuments("P-1"))).code).toBe("unavailable");
    server = await startFakeMFilesServer({ vaultGuid: VAULT, users });
  });

  describe("check()", () => {
    it("is healthy with working credentials", async () => {
      expect(await source().check()).toEqual({ status: "healthy" });
      expect(server.requests.map((r) => r.path)).toEqual(["/REST/server/authenticationtokens", "/REST/session/vault"]);
    });

    it("reports wrong credentials as an error without echoing them", async () => {
      const result = await source({ password: "wrong-password" }).check();
      expect(result.status).toBe("error");
      expect(result.detail).toBe("M-Files rejected the credentials");
    });

    it("reports a stalled server within its time-out", async () => {
      server.stall = { scope: "all" };
      const started = performance.now();
      const result = await source().check(300);
      expect(result.status).toBe("error");
      expect(result.detail).toBe(new PatientRecordError("timeout").message);
      expect(performance.now() - started).toBeLessThan(2_000);
    });

    it("says when M-Files is not configured", async () => {
      const records = source({ baseUrl: "", vaultGuid: "", username: "" });
      expect(await records.check()).toEqual({ status: "not_configured", detail: "M-Files is not configured" });
      expect((await rejection(records.fetchDocuments("P-1"))).code).toBe("unavailable");
      expect(server.requests).toHaveLength(0);
    });
  });

  it.each([
    ["ftp://mfiles.example", "http(s)"],
    ["https://user:pw@mfiles.example", "credentials"],
    ["https://mfiles.example/?x=1", "query"],
    ["not a url", "valid URL"],
  ])("refuses the base URL %s", (baseUrl, message) => {
    expect(() => source({ baseUrl })).toThrow(message);
  });

  it("refuses a vault id that is not a GUID and limits that are not positive integers", () => {
    expect(() => source({ vaultGuid: "Sample Vault" })).toThrow("GUID");
    expect(() => source({ maxDocuments: 0 })).toThrow("maxDocuments");
    expect(() => source({ patientIdPropertyId: -1 })).toThrow("patientIdPropertyId");
  });
});

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
