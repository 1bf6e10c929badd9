import {
  DEFAULT_MAX_BYTES_PER_DOCUMENT,
  DEFAULT_MAX_DOCUMENTS,
  DEFAULT_TIMEOUT_MS,
  PatientRecordError,
  assertPatientId,
  isPdfMagic,
  type PatientDocument,
  type PatientRecordSource,
  type PatientRecordsConfig,
} from "./patient-records.server";

// The M-Files Web Service (MFWS, "REST API") adapter, written against PROTOCOLS.md §4:
// - POST /REST/server/authenticationtokens answers 200 with a token even for wrong credentials; the
//   failure shows as 403 on first use. So a 401/403 on a token just issued that has not worked yet
//   means the credentials are wrong (`unauthorized`, no second login that could count towards an
//   account lock-out); on a cached token, or one that worked before, it means "expired or unusable":
//   log in again once per call and retry once.
// - Cookies of the token reply (Multi-Server Mode's `mfilesmsm`) are sent back on every later call.
// - GET /REST/objects?o=0&p<property>=<patient id> finds the documents; deleted ones are excluded by
//   the server; ObjVer gives type, id and version; .../files lists files; .../files/<id>/content streams
//   the bytes. Only files with extension "pdf" whose first bytes are "%PDF-" are returned.
// - One time-out covers the whole call (login, search, listings, downloads). No redirect is followed
//   (redirect: "manual", any 3xx is `unavailable`) and no URL outside the configured origin is called,
//   so the X-Authentication header never leaves the configured host.
// - A document over maxBytesPerDocument is skipped (Content-Length or streamed count, the download is
//   cancelled at the limit) and the others are still returned; only when every PDF was too large does
//   the call fail with `too_large`. Credentials, tokens and document content are never logged.

type MFilesConfig = Extract<PatientRecordsConfig, { kind: "mfiles" }>;

const DOCUMENT_OBJECT_TYPE = 0;
/** Sent as `Expiration`: a leaked token dies on its own. Renewed a minute before it runs out. */
const TOKEN_LIFETIME_MS = 60 * 60 * 1000;
const TOKEN_RENEW_MARGIN_MS = 60 * 1000;
/** Search results and file listings are metadata; anything bigger is not an answer we want to parse. */
const MAX_JSON_BYTES = 8 * 1024 * 1024;
const GUID = /^\{?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\}?$/i;

type Session = { token: string; cookie: string | null; renewAt: number; proven: boolean };

type Call = {
  signal: AbortSignal;
  session: Session | null;
  /** The session was obtained during this call (not taken from the cache). */
  fresh: boolean;
  reauthenticated: boolean;
  dispose(): void;
};

type FileRef = { id: number; name: string; extension: string };
type ObjectRef = { type: number; id: number; version: number; modified: number; files: FileRef[] | null };

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`M-Files ${name} must be a positive integer`);
  return value;
}

function restRootOf(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    throw new Error("M-Files base URL is not a valid URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("M-Files base URL must be http(s)");
  if (url.username || url.password || url.search || url.hash)
    throw new Error("M-Files base URL must not carry credentials, a query or a fragment");
  // Accept both the web server's URL (".../m-files") and the REST root (".../m-files/REST").
  const trimmed = url.pathname.replace(/\/+$/, "");
  url.pathname = /\/REST$/i.test(trimmed) ? trimmed : `${trimmed}/REST`;
  return url;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function nonNegativeInteger(value: unknown): number | null {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

function parseFile(value: unknown): FileRef | null {
  if (!isRecord(value)) return null;
  const id = nonNegativeInteger(value.ID);
  if (id === null) return null;
  return {
    id,
    name: typeof value.Name === "string" ? value.Name : "",
    extension: typeof value.Extension === "string" ? value.Extension : "",
  };
}

function parseFiles(value: unknown): FileRef[] {
  return Array.isArray(value) ? value.map(parseFile).filter((f): f is FileRef => f !== null) : [];
}

function parseObject(value: unknown): ObjectRef | null {
  if (!isRecord(value) || !isRecord(value.ObjVer) || value.Deleted === true) return null;
  const type = nonNegativeInteger(value.ObjVer.Type);
  const id = nonNegativeInteger(value.ObjVer.ID);
  const version = nonNegativeInteger(value.ObjVer.Version);
  if (type !== DOCUMENT_OBJECT_TYPE || id === null || version === null) return null;
  const modified = typeof value.LastModifiedUtc === "string" ? Date.parse(value.LastModifiedUtc) : NaN;
  return {
    type,
    id,
    version,
    modified: Number.isNaN(modified) ? -Infinity : modified,
    files: Array.isArray(value.Files) ? parseFiles(value.Files) : null,
  };
}

function isPdfFile(file: FileRef): boolean {
  return file.extension.trim().toLowerCase() === "pdf";
}

function displayName(file: FileRef): string {
  // Name and Extension are separate fields (PROTOCOLS §4); the result is a label, never a path.
  // eslint-disable-next-line no-control-regex
  const base = file.name.replace(/[\u0000-\u001f\u007f/\\]/g, "_").trim() || `file-${file.id}`;
  return `${base}.pdf`;
}

function setCookies(headers: Headers): string[] {
  const withGetter = headers as Headers & { getSetCookie?: () => string[] };
  if (typeof withGetter.getSetCookie === "function") return withGetter.getSetCookie();
  // Remix's fetch polyfill (remix-serve without single fetch) joins them with commas.
  const joined = headers.get("set-cookie");
  return joined ? joined.split(/,(?=\s*[^;,=\s]+=)/) : [];
}

function cookieHeader(headers: Headers): string | null {
  const pairs = setCookies(headers)
    .map((cookie) => cookie.split(";")[0].trim())
    .filter((pair) => /^[^=\s]+=/.test(pair));
  return pairs.length > 0 ? pairs.join("; ") : null;
}

function discard(response: Response) {
  response.body?.cancel().catch(() => {});
}

function isAuthFailure(status: number) {
  return status === 401 || status === 403;
}

type Body = { kind: "ok"; data: Uint8Array } | { kind: "too_large" } | { kind: "not_pdf" };

/** Streams a body, stopping as soon as it passes `max` bytes or (for PDFs) its first bytes are wrong. */
async function readBody(response: Response, max: number, expectPdf: boolean): Promise<Body> {
  const declared = Number(response.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > max) {
    discard(response);
    return { kind: "too_large" };
  }
  if (!response.body) return expectPdf ? { kind: "not_pdf" } : { kind: "ok", data: new Uint8Array() };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let checked = !expectPdf;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      reader.cancel().catch(() => {});
      return { kind: "too_large" };
    }
    chunks.push(value);
    if (!checked && total >= 5) {
      if (!isPdfMagic(concat(chunks, total).subarray(0, 5))) {
        reader.cancel().catch(() => {});
        return { kind: "not_pdf" };
      }
      checked = true;
    }
  }
  const data = concat(chunks, total);
  if (expectPdf && !isPdfMagic(data)) return { kind: "not_pdf" };
  return { kind: "ok", data };
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const data = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    data.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return data;
}

export function createMFilesPatientRecordSource(config: MFilesConfig): PatientRecordSource {
  const configured = Boolean(config.baseUrl?.trim() && config.vaultGuid?.trim() && config.username?.trim());
  const timeoutMs = positiveInteger(config.timeoutMs, DEFAULT_TIMEOUT_MS, "timeoutMs");
  const maxDocuments = positiveInteger(config.maxDocuments, DEFAULT_MAX_DOCUMENTS, "maxDocuments");
  const maxBytes = positiveInteger(config.maxBytesPerDocument, DEFAULT_MAX_BYTES_PER_DOCUMENT, "maxBytesPerDocument");

  let restRoot: URL | null = null;
  let vaultGuid = "";
  if (configured) {
    restRoot = restRootOf(config.baseUrl);
    const guid = GUID.exec(config.vaultGuid.trim());
    if (!guid) throw new Error("M-Files vault GUID must look like {C840BE1A-5B47-4AC0-8EF7-835C166C8E24}");
    vaultGuid = `{${guid[1]}}`; // the documented form, with braces
    positiveInteger(config.patientIdPropertyId, 1, "patientIdPropertyId");
  }

  let cached: Session | null = null;

  function startCall(limitMs: number, outer?: AbortSignal): Call {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new PatientRecordError("timeout")), limitMs);
    const onAbort = () => controller.abort(outer?.reason);
    if (outer?.aborted) onAbort();
    else outer?.addEventListener("abort", onAbort, { once: true });
    return {
      signal: controller.signal,
      session: null,
      fresh: false,
      reauthenticated: false,
      dispose() {
        clearTimeout(timer);
        outer?.removeEventListener("abort", onAbort);
      },
    };
  }

  /** A time-out becomes `timeout`; the caller's own abort is passed on as its reason. */
  function failure(call: Call, error: unknown): unknown {
    if (call.signal.aborted) return call.signal.reason;
    if (error instanceof PatientRecordError) return error;
    return new PatientRecordError("unavailable", "Patient record system unreachable", { cause: error });
  }

  function endpoint(resource: string, query = ""): URL {
    const root = restRoot!;
    const url = new URL(`${root.href}${resource}${query ? `?${query}` : ""}`);
    if (url.origin !== root.origin)
      throw new PatientRecordError("unavailable", "Refused a URL outside the M-Files host");
    return url;
  }

  async function send(call: Call, url: URL, init: { method?: string; body?: string; session?: Session | null }) {
    if (url.origin !== restRoot!.origin)
      throw new PatientRecordError("unavailable", "Refused a URL outside the M-Files host");
    const headers: Record<string, string> = { Accept: "application/json" };
    if (init.body !== undefined) headers["Content-Type"] = "application/json";
    if (init.session) {
      headers["X-Authentication"] = init.session.token;
      if (init.session.cookie) headers.Cookie = init.session.cookie;
    }
    const response = await fetch(url, {
      method: init.method ?? "GET",
      headers,
      body: init.body,
      redirect: "manual",
      signal: call.signal,
    });
    if ((response.status >= 300 && response.status < 400) || response.type === "opaqueredirect") {
      discard(response);
      throw new PatientRecordError(
        "unavailable",
        `M-Files answered with a redirect (HTTP ${response.status}), not followed`,
      );
    }
    return response;
  }

  async function readJson(response: Response): Promise<unknown> {
    const body = await readBody(response, MAX_JSON_BYTES, false);
    if (body.kind !== "ok") throw new PatientRecordError("unavailable", "M-Files reply too large");
    try {
      return JSON.parse(new TextDecoder().decode(body.data));
    } catch {
      throw new PatientRecordError("unavailable", "M-Files reply is not JSON");
    }
  }

  async function authenticate(call: Call): Promise<Session> {
    const expiration = Date.now() + TOKEN_LIFETIME_MS;
    const response = await send(call, endpoint("/server/authenticationtokens"), {
      method: "POST",
      body: JSON.stringify({
        Username: config.username,
        Password: config.password,
        VaultGuid: vaultGuid,
        Expiration: new Date(expiration).toISOString(),
      }),
    });
    if (!response.ok) {
      discard(response);
      if (isAuthFailure(response.status)) throw new PatientRecordError("unauthorized");
      throw new PatientRecordError("unavailable", `M-Files token request failed (HTTP ${response.status})`);
    }
    const cookie = cookieHeader(response.headers);
    const reply = await readJson(response);
    const token = isRecord(reply) && typeof reply.Value === "string" ? reply.Value : "";
    if (!token) throw new PatientRecordError("unavailable", "M-Files token reply carries no token");
    const session = { token, cookie, renewAt: expiration - TOKEN_RENEW_MARGIN_MS, proven: false };
    cached = session;
    call.session = session;
    call.fresh = true;
    return session;
  }

  function forget(session: Session | null) {
    if (cached && cached === session) cached = null;
  }

  /**
   * GET with the session token. A 401/403 on a token that worked before, or came from the cache, means
   * it expired: log in again (once per call) and retry once. On a token just issued it is final.
   */
  async function authorizedGet(call: Call, url: URL): Promise<Response> {
    if (!call.session) {
      call.session = cached && cached.renewAt > Date.now() ? cached : await authenticate(call);
    }
    let session = call.session;
    let response = await send(call, url, { session });
    if (isAuthFailure(response.status) && !call.reauthenticated && (!call.fresh || session.proven)) {
      discard(response);
      forget(session);
      call.reauthenticated = true;
      session = await authenticate(call);
      response = await send(call, url, { session });
    }
    if (isAuthFailure(response.status)) {
      discard(response);
      forget(session);
      throw new PatientRecordError("unauthorized");
    }
    session.proven = true;
    return response;
  }

  async function search(call: Call, patientId: string): Promise<ObjectRef[]> {
    const query = `o=${DOCUMENT_OBJECT_TYPE}&p${config.patientIdPropertyId}=${encodeURIComponent(patientId)}`;
    const response = await authorizedGet(call, endpoint("/objects", query));
    if (!response.ok) {
      discard(response);
      throw new PatientRecordError("unavailable", `M-Files search failed (HTTP ${response.status})`);
    }
    const reply = await readJson(response);
    const items = isRecord(reply) && Array.isArray(reply.Items) ? reply.Items : null;
    if (!items) throw new PatientRecordError("unavailable", "M-Files search reply has no Items");
    // Newest first, so the limit keeps the most recent documents.
    return items
      .map(parseObject)
      .filter((o): o is ObjectRef => o !== null)
      .sort((a, b) => b.modified - a.modified);
  }

  async function fetchDocuments(patientId: string, call: Call): Promise<PatientDocument[]> {
    const documents: PatientDocument[] = [];
    let tooLarge = 0;
    for (const object of await search(call, patientId)) {
      if (documents.length >= maxDocuments) break;
      // The search result already lists the files; skip objects without a PDF without asking again.
      if (object.files && !object.files.some(isPdfFile)) continue;
      const prefix = `/objects/${object.type}/${object.id}/${object.version}/files`;
      const listing = await authorizedGet(call, endpoint(prefix));
      if (listing.status === 404) {
        discard(listing); // deleted between search and listing
        continue;
      }
      if (!listing.ok) {
        discard(listing);
        throw new PatientRecordError("unavailable", `M-Files file listing failed (HTTP ${listing.status})`);
      }
      for (const file of parseFiles(await readJson(listing)).filter(isPdfFile)) {
        if (documents.length >= maxDocuments) break;
        const content = await authorizedGet(call, endpoint(`${prefix}/${file.id}/content`));
        if (content.status === 404) {
          discard(content);
          continue;
        }
        if (!content.ok) {
          discard(content);
          throw new PatientRecordError("unavailable", `M-Files download failed (HTTP ${content.status})`);
        }
        const body = await readBody(content, maxBytes, true);
        if (body.kind === "too_large") {
          tooLarge++;
          console.warn(
            `patient-records: skipped M-Files file ${object.type}/${object.id}/${file.id}, larger than ${maxBytes} bytes`,
          );
        } else if (body.kind === "ok") {
          documents.push({ name: displayName(file), data: body.data });
        }
      }
    }
    if (documents.length === 0 && tooLarge > 0) throw new PatientRecordError("too_large");
    return documents;
  }

  return {
    kind: "mfiles",

    async fetchDocuments(patientId, options) {
      const id = assertPatientId(patientId);
      if (!configured) throw new PatientRecordError("unavailable", "M-Files is not configured");
      const call = startCall(timeoutMs, options?.signal);
      try {
        return await fetchDocuments(id, call);
      } catch (error) {
        throw failure(call, error);
      } finally {
        call.dispose();
      }
    },

    async check(limitMs = timeoutMs) {
      if (!configured) return { status: "not_configured", detail: "M-Files is not configured" };
      const call = startCall(limitMs);
      try {
        // A token comes back even for wrong credentials, so only a call that uses it proves them.
        const session = await authenticate(call);
        const response = await send(call, endpoint("/session/vault"), { session });
        discard(response);
        if (isAuthFailure(response.status)) {
          forget(session);
          return { status: "error", detail: "M-Files rejected the credentials" };
        }
        if (!response.ok) return { status: "error", detail: `M-Files answered HTTP ${response.status}` };
        return { status: "healthy" };
      } catch (error) {
        const mapped = failure(call, error);
        return { status: "error", detail: mapped instanceof Error ? mapped.message : "M-Files check failed" };
      } finally {
        call.dispose();
      }
    },
  };
}
