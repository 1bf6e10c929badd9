import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

// A local M-Files Web Service (MFWS, "REST API") that behaves as PROTOCOLS.md §4 describes the real one,
// with an in-memory vault the test fills. Reproduced:
// - POST /REST/server/authenticationtokens (no authentication needed) always answers 200 {"Value": token},
//   also for wrong credentials, an unknown vault or a GUID without braces; such a token fails with 403 on
//   first use. `Expiration` (ISO UTC) is honoured; `expireAllTokens()` makes every token unusable.
// - Every other call needs `X-Authentication`; a missing (assumed, UNCONFIRMED), unknown, expired or
//   unusable token gets 403 with a WebServiceError body. A token issued without VaultGuid only reaches
//   server-level resources, so vault calls fail with 403 as well.
// - Multi-Server Mode (opt-in): the token reply sets an `mfilesmsm` cookie and later calls without it get
//   403 ForbiddenException "Token-based authentication failed." (inner CryptographicException).
// - GET /REST/objects[/{type}]?o=&q=&p{id}{op}=&d=include&limit= with every documented operator (=, <<=,
//   <=, >>=, >=, **=, *=, ^=, each negatable with !), URL-decoded values, comma-separated ids for lookups
//   (any of), %00 for null, deleted objects hidden unless d=include, 500 results by default with
//   MoreResults, `limit` to change the cap. Reply Results<ObjectVersion> {Items, MoreResults}.
// - GET /REST/objects/{type}/{id}/{version|latest}[/files[/{fileId}[/content]]]: ObjectVersion,
//   ObjectFile[] (the same as ObjectVersion.Files), one ObjectFile, raw bytes as application/octet-stream
//   with single-range `Range` support (206, 416). Unknown objects or files give 404 with a WebServiceError
//   (404 itself is UNCONFIRMED), never an empty 200.
// - GET /REST/session/vault (Vault: Name, GUID) — a cheap call to prove a token.
// - An optional .aspx/.ashx suffix on any path, POST ?_method=GET tunnelling, MFWS.ashx?restPath=<resource>.
// - Errors as WebServiceError {Status, URL, Method, Exception{Name, Message, InnerException, Stack}} plus the
//   top-level Message and the ErrorCode the docs say must not be relied on.
// Not reproduced: credentials in headers, SSO cookie sessions, OAuth; value-list conditions (vl…, answered
// 501); ?format=pdf conversion of non-PDF files (501); writes (PUT/POST/DELETE of objects or files),
// history and older versions (only the current version exists); object properties (?include=properties);
// the server-side search time-out; HMAC (?mac); the exact wording of real error messages.
// Test switches: `redirect` answers with 302 to another host, `stall` never answers (or stops in the middle
// of a download), `failure` answers with a status of your choice, `chunkedDownloads` drops Content-Length;
// `requests` logs every call (never bodies or credentials).

export type FakePropertyValue = string | number | boolean | Date | number[] | null;
export type FakeFileInput = { name: string; extension: string; content: Uint8Array | string };
export type FakeObjectInput = {
  /** Object type; 0 (Document) by default. */
  type?: number;
  title: string;
  classId?: number;
  version?: number;
  properties?: Record<number, FakePropertyValue>;
  files?: FakeFileInput[];
  deleted?: boolean;
  lastModified?: Date;
};
export type FakeObjectRef = { type: number; id: number; version: number; fileIds: number[] };
export type FakeRequest = {
  method: string;
  /** The REST path after normalisation (no .aspx, no MFWS.ashx), e.g. "/REST/objects". */
  path: string;
  /** The raw query string, without "?". */
  query: string;
  /** Whether the request carried a token this server accepted. */
  authenticated: boolean;
  /** null while the request is unanswered (stalled). */
  status: number | null;
};
/** "api" = every call except the token endpoint. */
export type FakeScope = "all" | "api";

export type FakeMFilesOptions = {
  vaultGuid: string;
  vaultName?: string;
  users: Array<{ username: string; password: string }>;
  multiServerMode?: boolean;
  now?: () => number;
};

export interface FakeMFilesServer {
  /** The server root; MFWS lives under `${url}/REST`. */
  readonly url: string;
  readonly requests: FakeRequest[];
  /** Number of token requests answered (each one issues a token). */
  readonly tokensIssued: number;
  redirect: { location: string; scope: FakeScope } | null;
  stall: { scope: FakeScope | "content" } | null;
  failure: { status: number; scope: FakeScope } | null;
  /** Send downloads without Content-Length (chunked), as a proxy or a large stream may. */
  chunkedDownloads: boolean;
  addObject(input: FakeObjectInput): FakeObjectRef;
  markDeleted(type: number, id: number): void;
  expireAllTokens(): void;
  close(): Promise<void>;
}

type StoredFile = { id: number; name: string; extension: string; data: Buffer; version: number; changed: Date };
type StoredObject = {
  type: number;
  id: number;
  version: number;
  guid: string;
  title: string;
  classId: number;
  properties: Record<number, FakePropertyValue>;
  files: StoredFile[];
  deleted: boolean;
  created: Date;
  modified: Date;
};
type TokenInfo = {
  credentialsOk: boolean;
  vaultOk: boolean;
  expiresAt: number | null;
  revoked: boolean;
  msm: string | null;
};

class WebServiceError extends Error {
  constructor(
    readonly status: number,
    readonly exceptionName: string,
    message: string,
    readonly inner: { Name: string; Message: string } | null = null,
  ) {
    super(message);
  }
}

const DEFAULT_SEARCH_CAP = 500;
const OPERATORS = new Set(["", "<<", "<", ">>", ">", "**", "*", "^"]);

function decodeComponent(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, " "));
  } catch {
    throw new WebServiceError(400, "ArgumentException", "Malformed URL encoding.");
  }
}

/** Splits at the first "=" of each pair: `p1100>>=1000` is key `p1100>>`, value `1000`. */
function parseQuery(query: string): Array<[string, string]> {
  if (!query) return [];
  return query
    .split("&")
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf("=");
      return at < 0
        ? [decodeComponent(pair), ""]
        : [decodeComponent(pair.slice(0, at)), decodeComponent(pair.slice(at + 1))];
    });
}

function wildcard(pattern: string): RegExp {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${escaped}$`, "is");
}

function compareOrdered(op: string, a: number | string, b: number | string): boolean {
  switch (op) {
    case "<<":
      return a < b;
    case "<":
      return a <= b;
    case ">>":
      return a > b;
    case ">":
      return a >= b;
    default:
      return false;
  }
}

/** One property condition. Text comparisons ignore case (as the real search does, UNCONFIRMED). */
function matches(value: FakePropertyValue | undefined, op: string, raw: string): boolean {
  if (raw === "\0") {
    const isNull = value == null || value === "" || (Array.isArray(value) && value.length === 0);
    return op === "" && isNull;
  }
  if (value == null) return false;
  if (Array.isArray(value)) {
    return op === "" && raw.split(",").some((id) => value.includes(Number(id)));
  }
  if (typeof value === "number") {
    if (op === "") return raw.split(",").some((id) => Number(id) === value);
    const other = Number(raw);
    return !Number.isNaN(other) && compareOrdered(op, value, other);
  }
  if (typeof value === "boolean") return op === "" && raw.toLowerCase() === String(value);
  if (value instanceof Date) {
    const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(raw);
    const a = dateOnly ? value.toISOString().slice(0, 10) : value.getTime();
    const b = dateOnly ? raw : Date.parse(raw);
    if (typeof b === "number" && Number.isNaN(b)) return false;
    return op === "" ? a === b : compareOrdered(op, a, b);
  }
  const a = value.toLowerCase();
  const b = raw.toLowerCase();
  switch (op) {
    case "":
      return a === b;
    case "*":
      return a.includes(b);
    case "^":
      return a.startsWith(b);
    case "**":
      return wildcard(b).test(a);
    default:
      return compareOrdered(op, a, b);
  }
}

function objectFile(file: StoredFile) {
  return {
    ID: file.id,
    Name: file.name,
    Extension: file.extension,
    Version: file.version,
    ChangeTimeUtc: file.changed.toISOString(),
  };
}

function objectVersion(object: StoredObject) {
  return {
    ObjVer: { ID: object.id, Type: object.type, Version: object.version },
    Title: object.title,
    DisplayID: String(object.id),
    Class: object.classId,
    ObjectGUID: object.guid,
    Files: object.files.map(objectFile),
    SingleFile: object.files.length === 1,
    CreatedUtc: object.created.toISOString(),
    LastModifiedUtc: object.modified.toISOString(),
    Deleted: object.deleted,
    ObjectCheckedOut: false,
    CheckedOutTo: 0,
    ObjectVersionFlags: 0,
  };
}

function normaliseGuid(value: string): string {
  return value.trim().toUpperCase();
}

function cookieValue(header: string | undefined, name: string): string | null {
  for (const part of (header ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return rest.join("=");
  }
  return null;
}

async function readRequestBody(req: IncomingMessage, limit = 64 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req) {
    total += (chunk as Buffer).length;
    if (total > limit) throw new WebServiceError(400, "ArgumentException", "Request body too large.");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export async function startFakeMFilesServer(options: FakeMFilesOptions): Promise<FakeMFilesServer> {
  const now = options.now ?? Date.now;
  const vaultGuid = normaliseGuid(options.vaultGuid.startsWith("{") ? options.vaultGuid : `{${options.vaultGuid}}`);
  const objects: StoredObject[] = [];
  const tokens = new Map<string, TokenInfo>();
  const requests: FakeRequest[] = [];
  let nextObjectId = 1;
  let nextFileId = 1;
  let tokensIssued = 0;

  const server = createServer((req, res) => {
    void handle(req, res);
  });

  const state: FakeMFilesServer = {
    url: "",
    requests,
    get tokensIssued() {
      return tokensIssued;
    },
    redirect: null,
    stall: null,
    failure: null,
    chunkedDownloads: false,
    addObject(input) {
      const created = input.lastModified ?? new Date(now());
      const object: StoredObject = {
        type: input.type ?? 0,
        id: nextObjectId++,
        version: input.version ?? 1,
        guid: `{${randomUUID().toUpperCase()}}`,
        title: input.title,
        classId: input.classId ?? 0,
        properties: { ...input.properties },
        files: (input.files ?? []).map((file) => ({
          id: nextFileId++,
          name: file.name,
          extension: file.extension,
          data: Buffer.from(file.content),
          version: 1,
          changed: created,
        })),
        deleted: input.deleted ?? false,
        created,
        modified: created,
      };
      objects.push(object);
      return { type: object.type, id: object.id, version: object.version, fileIds: object.files.map((f) => f.id) };
    },
    markDeleted(type, id) {
      const object = objects.find((o) => o.type === type && o.id === id);
      if (object) object.deleted = true;
    },
    expireAllTokens() {
      for (const info of tokens.values()) info.revoked = true;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };

  function inScope(scope: FakeScope, isTokenCall: boolean) {
    return scope === "all" || !isTokenCall;
  }

  function sendJson(
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string | string[]> = {},
  ) {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      "Content-Type": "application/json; charset=utf-8",
      "Content-Length": Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  }

  function sendError(res: ServerResponse, req: IncomingMessage, method: string, error: WebServiceError) {
    sendJson(res, error.status, {
      Status: error.status,
      URL: req.url ?? "",
      Method: method,
      Exception: {
        Name: error.exceptionName,
        Message: error.message,
        InnerException: error.inner ? { ...error.inner, InnerException: null, Stack: [] } : null,
        Stack: [],
      },
      Message: error.message,
      ErrorCode: "0",
    });
  }

  function authorize(req: IncomingMessage): void {
    const header = req.headers["x-authentication"];
    const token = Array.isArray(header) ? header[0] : header;
    if (!token) throw new WebServiceError(403, "ForbiddenException", "Authentication required.");
    const info = tokens.get(token);
    if (!info) throw new WebServiceError(403, "ForbiddenException", "Invalid authentication token.");
    if (options.multiServerMode && cookieValue(req.headers.cookie, "mfilesmsm") !== info.msm) {
      throw new WebServiceError(403, "ForbiddenException", "Token-based authentication failed.", {
        Name: "CryptographicException",
        Message: "Error occurred while decoding OAEP padding.",
      });
    }
    if (info.revoked || (info.expiresAt !== null && now() >= info.expiresAt))
      throw new WebServiceError(403, "ForbiddenException", "The authentication token has expired.");
    if (!info.credentialsOk)
      throw new WebServiceError(403, "ForbiddenException", "Login to application failed. Authentication failed.");
    if (!info.vaultOk) throw new WebServiceError(403, "ForbiddenException", "Access to the vault was denied.");
  }

  function tokenAccepted(req: IncomingMessage): boolean {
    try {
      authorize(req);
      return true;
    } catch {
      return false;
    }
  }

  async function issueToken(req: IncomingMessage, res: ServerResponse) {
    let body: unknown;
    try {
      body = JSON.parse(await readRequestBody(req));
    } catch (error) {
      if (error instanceof WebServiceError) throw error;
      throw new WebServiceError(400, "ArgumentException", "Invalid JSON in the request body.");
    }
    if (typeof body !== "object" || body === null || Array.isArray(body))
      throw new WebServiceError(400, "ArgumentException", "Authentication details expected.");
    const auth = body as Record<string, unknown>;
    let expiresAt: number | null = null;
    if (typeof auth.Expiration === "string") {
      expiresAt = Date.parse(auth.Expiration);
      if (Number.isNaN(expiresAt)) throw new WebServiceError(400, "FormatException", "Invalid Expiration.");
    }
    const username = typeof auth.Username === "string" ? auth.Username : "";
    const password = typeof auth.Password === "string" ? auth.Password : "";
    const credentialsOk = options.users.some(
      (user) => user.username.toLowerCase() === username.toLowerCase() && user.password === password,
    );
    // Documented form is "{GUID}" with braces; a GUID without them is not treated as the vault (UNCONFIRMED).
    const vaultOk = typeof auth.VaultGuid === "string" && normaliseGuid(auth.VaultGuid) === vaultGuid;
    const token = randomBytes(48).toString("base64");
    const msm = options.multiServerMode ? randomBytes(16).toString("hex") : null;
    tokens.set(token, { credentialsOk, vaultOk, expiresAt, revoked: false, msm });
    tokensIssued++;
    sendJson(res, 200, { Value: token }, msm ? { "Set-Cookie": `mfilesmsm=${msm}; path=/; HttpOnly` } : {});
  }

  function search(res: ServerResponse, params: Array<[string, string]>, pathType: number | null) {
    let type = pathType;
    let includeDeleted = false;
    let cap = DEFAULT_SEARCH_CAP;
    const conditions: Array<(object: StoredObject) => boolean> = [];
    for (const [key, value] of params) {
      if (key === "o") {
        if (!/^\d+$/.test(value)) throw new WebServiceError(400, "ArgumentException", "Invalid object type.");
        type = Number(value);
        continue;
      }
      if (key === "q") {
        const text = value.toLowerCase();
        conditions.push((o) => o.title.toLowerCase().includes(text));
        continue;
      }
      if (key === "d") {
        includeDeleted = value === "include";
        continue;
      }
      if (key === "limit") {
        if (!/^\d+$/.test(value) || Number(value) < 1)
          throw new WebServiceError(400, "ArgumentException", "Invalid limit.");
        cap = Number(value);
        continue;
      }
      if (/^vl\d/.test(key)) throw new WebServiceError(501, "NotImplementedException", "vl conditions not faked.");
      const property = /^p(\d+)(!?)(.*)$/.exec(key);
      if (property) {
        const [, id, negate, op] = property;
        if (!OPERATORS.has(op)) throw new WebServiceError(400, "ArgumentException", `Invalid search condition ${key}.`);
        const propertyId = Number(id);
        conditions.push((o) => matches(o.properties[propertyId], op, value) !== (negate === "!"));
      }
      // Anything else (include, _method, …) is not a condition.
    }
    const found = objects
      .filter((o) => (type === null || o.type === type) && (includeDeleted || !o.deleted))
      .filter((o) => conditions.every((condition) => condition(o)));
    sendJson(res, 200, { Items: found.slice(0, cap).map(objectVersion), MoreResults: found.length > cap });
  }

  function findObject(typeText: string, idText: string, versionText: string): StoredObject {
    const object = objects.find((o) => String(o.type) === typeText && String(o.id) === idText);
    if (!object || (versionText.toLowerCase() !== "latest" && versionText !== String(object.version)))
      throw new WebServiceError(404, "NotFoundException", "Not found.");
    return object;
  }

  function sendContent(req: IncomingMessage, res: ServerResponse, file: StoredFile, stall: boolean) {
    const total = file.data.length;
    const range = req.headers.range;
    let start = 0;
    let end = total - 1;
    let status = 200;
    const headers: Record<string, string | number> = {
      "Content-Type": "application/octet-stream",
      "Accept-Ranges": "bytes",
    };
    const single = range ? /^bytes=(\d*)-(\d*)$/.exec(range.trim()) : null;
    if (single && (single[1] || single[2])) {
      if (single[1]) {
        start = Number(single[1]);
        end = single[2] ? Math.min(Number(single[2]), total - 1) : total - 1;
      } else {
        start = Math.max(total - Number(single[2]), 0);
      }
      if (start >= total || start > end) {
        res.writeHead(416, { "Content-Range": `bytes */${total}`, "Content-Length": 0 });
        res.end();
        return;
      }
      status = 206;
      headers["Content-Range"] = `bytes ${start}-${end}/${total}`;
    }
    const bytes = file.data.subarray(start, end + 1);
    if (!state.chunkedDownloads) headers["Content-Length"] = bytes.length;
    res.writeHead(status, headers);
    if (stall) {
      res.write(bytes.subarray(0, Math.max(1, Math.floor(bytes.length / 2))));
      return; // never ends
    }
    res.end(bytes);
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://fake");
    let method = (req.method ?? "GET").toUpperCase();
    let pathname = url.pathname;
    let query = url.search.slice(1);
    const entry: FakeRequest = { method, path: pathname, query, authenticated: false, status: null };
    requests.push(entry);
    res.on("finish", () => {
      entry.status = res.statusCode;
    });
    try {
      pathname = decodeComponent(pathname);
      let params = parseQuery(query);
      // MFWS.ashx?restPath=<resource>
      if (/\/MFWS\.ashx$/i.test(pathname)) {
        const restPath = params.find(([key]) => key === "restPath")?.[1] ?? "";
        const [resource, inner = ""] = restPath.split("?");
        pathname = `/REST${resource.startsWith("/") ? "" : "/"}${resource}`;
        params = [...params.filter(([key]) => key !== "restPath"), ...parseQuery(inner)];
        query = params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
      }
      pathname = pathname.replace(/\.(aspx|ashx)$/i, "").replace(/\/+$/, "");
      const tunnelled = params.find(([key]) => key === "_method")?.[1];
      if (method === "POST" && tunnelled) method = tunnelled.toUpperCase();
      Object.assign(entry, { method, path: pathname, query });

      const segments = pathname.split("/").filter(Boolean);
      if (segments[0]?.toUpperCase() !== "REST") throw new WebServiceError(404, "NotFoundException", "Not found.");
      const rest = segments.slice(1).map((s) => s.toLowerCase());
      const isTokenCall = rest.join("/") === "server/authenticationtokens";

      if (state.redirect && inScope(state.redirect.scope, isTokenCall)) {
        res.writeHead(302, { Location: `${state.redirect.location}${req.url ?? "/"}`, "Content-Length": 0 });
        res.end();
        return;
      }
      if (state.stall && (state.stall.scope === "all" || (state.stall.scope === "api" && !isTokenCall))) {
        req.resume();
        return; // never answered
      }
      if (state.failure && inScope(state.failure.scope, isTokenCall)) {
        req.resume();
        throw new WebServiceError(state.failure.status, "Exception", "Simulated failure.");
      }

      if (isTokenCall) {
        if (method !== "POST") throw new WebServiceError(405, "MethodNotAllowedException", "Method not allowed.");
        await issueToken(req, res);
        return;
      }

      req.resume();
      entry.authenticated = tokenAccepted(req);
      authorize(req);
      if (method !== "GET") throw new WebServiceError(405, "MethodNotAllowedException", "Method not allowed.");

      if (rest.length === 2 && rest[0] === "session" && rest[1] === "vault") {
        sendJson(res, 200, { Name: options.vaultName ?? "Test vault", GUID: vaultGuid, Authentication: null });
        return;
      }
      if (rest[0] !== "objects") throw new WebServiceError(404, "NotFoundException", "Not found.");
      if (rest.length === 1) return search(res, params, null);
      if (rest.length === 2) {
        if (!/^\d+$/.test(rest[1])) throw new WebServiceError(400, "ArgumentException", "Invalid object type.");
        return search(res, params, Number(rest[1]));
      }
      if (rest.length < 4) throw new WebServiceError(404, "NotFoundException", "Not found.");
      const object = findObject(rest[1], rest[2], rest[3]);
      if (rest.length === 4) return sendJson(res, 200, objectVersion(object));
      if (rest[4] !== "files" || rest.length > 7) throw new WebServiceError(404, "NotFoundException", "Not found.");
      if (rest.length === 5) return sendJson(res, 200, object.files.map(objectFile));
      const file = object.files.find((f) => String(f.id) === rest[5]);
      if (!file) throw new WebServiceError(404, "NotFoundException", "The file was not found.");
      if (rest.length === 6) return sendJson(res, 200, objectFile(file));
      if (rest[6] !== "content") throw new WebServiceError(404, "NotFoundException", "Not found.");
      const format = params.find(([key]) => key === "format")?.[1]?.toLowerCase() ?? "native";
      if (format !== "native" && file.extension.toLowerCase() !== "pdf")
        throw new WebServiceError(501, "NotImplementedException", "PDF conversion is not faked.");
      sendContent(req, res, file, state.stall?.scope === "content");
    } catch (error) {
      const wse =
        error instanceof WebServiceError ? error : new WebServiceError(500, "Exception", "Internal server error.");
      if (!res.headersSent) sendError(res, req, method, wse);
      else res.destroy();
    }
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(state, { url: `http://127.0.0.1:${port}` });
  return state;
}
