import { PatientRecordError, isPdfMagic } from "./contract.server";

// The HTTP side of the M-Files adapter (patient-records/mfiles.server.ts, PROTOCOLS.md §4): one
// time-out for a whole call, no URL outside the configured origin, no redirect followed, and bodies
// read only up to a byte limit.

/** Search results and file listings are metadata; anything bigger is not an answer we want to parse. */
const MAX_JSON_BYTES = 8 * 1024 * 1024;

/** A login: the token, the cookies of its reply, when to renew it, and whether it has worked yet. */
export type Session = { token: string; cookie: string | null; renewAt: number; proven: boolean };

export type Call = {
  signal: AbortSignal;
  session: Session | null;
  /** The session was obtained during this call (not taken from the cache). */
  fresh: boolean;
  reauthenticated: boolean;
  dispose(): void;
};

export function restRootOf(baseUrl: string): URL {
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

export function discard(response: Response) {
  response.body?.cancel().catch(() => {});
}

export type Body = { kind: "ok"; data: Uint8Array } | { kind: "too_large" } | { kind: "not_pdf" };

/** Streams a body, stopping as soon as it passes `max` bytes or (for PDFs) its first bytes are wrong. */
export async function readBody(response: Response, max: number, expectPdf: boolean): Promise<Body> {
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

export function startCall(limitMs: number, outer?: AbortSignal): Call {
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
export function failure(call: Call, error: unknown): unknown {
  if (call.signal.aborted) return call.signal.reason;
  if (error instanceof PatientRecordError) return error;
  return new PatientRecordError("unavailable", "Patient record system unreachable", { cause: error });
}

export async function readJson(response: Response): Promise<unknown> {
  const body = await readBody(response, MAX_JSON_BYTES, false);
  if (body.kind !== "ok") throw new PatientRecordError("unavailable", "M-Files reply too large");
  try {
    return JSON.parse(new TextDecoder().decode(body.data));
  } catch {
    throw new PatientRecordError("unavailable", "M-Files reply is not JSON");
  }
}

export type MFilesHttp = {
  endpoint(resource: string, query?: string): URL;
  send(call: Call, url: URL, init: { method?: string; body?: string; session?: Session | null }): Promise<Response>;
};

/** `endpoint` and `send` for one REST root; both refuse any URL outside its origin. */
export function createMFilesHttp(restRoot: URL | null): MFilesHttp {
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

  return { endpoint, send };
}
