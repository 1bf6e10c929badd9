import fs from "node:fs";
import path from "node:path";
import { getStorage, setStorage, STORAGE_AREAS, type ObjectStorage } from "~/services/storage/storage.server";
import type { ApiClient } from "./api-client";
import { APP_URL, callRoute, request } from "../setup/app";

// The access-control matrix of issue 9: every route module of app/routes, found on disk at test time, with how
// it is checked. The table itself lives in access-matrix-api.ts and access-matrix-screens.ts; the data of the
// first user in access-matrix-fixture.ts.

const ROUTES_DIR = path.resolve(__dirname, "../../app/routes");

/** Remix flat routes: a module file directly in app/routes, or a folder with a route.* module. */
export function routeModules(): Map<string, string> {
  const found = new Map<string, string>();
  for (const entry of fs.readdirSync(ROUTES_DIR, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      const file = fs.readdirSync(path.join(ROUTES_DIR, entry.name)).find((f) => /^route\.(tsx?|jsx?)$/.test(f));
      if (file) found.set(entry.name, path.join(ROUTES_DIR, entry.name, file));
    } else if (/\.(tsx?|jsx?)$/.test(entry.name) && !/\.test\.(tsx?|jsx?)$/.test(entry.name)) {
      found.set(entry.name.replace(/\.(tsx?|jsx?)$/, ""), path.join(ROUTES_DIR, entry.name));
    }
  }
  return found;
}

/** How a request reaches the app: the session cookie of a page, or a bearer token of an API client. */
export type Door = "cookie" | "bearer";

/** Builds B's requests for one door; posts from a page carry the same-origin headers a browser sends. */
export type Caller = {
  door: Door;
  get(path: string): Request;
  json(path: string, method: string, body?: unknown): Request;
  form(path: string, fields: Record<string, string>): Request;
};

export function cookieCaller(cookie: string): Caller {
  const sameOrigin = { Origin: APP_URL, "Sec-Fetch-Site": "same-origin" };
  return {
    door: "cookie",
    get: (p) => request(p, { cookie, headers: { "Sec-Fetch-Site": "same-origin" } }),
    json: (p, method, body) =>
      request(p, {
        method,
        cookie,
        headers: { ...sameOrigin, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    form: (p, fields) =>
      request(p, {
        method: "POST",
        cookie,
        headers: { ...sameOrigin, "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields).toString(),
      }),
  };
}

export function bearerCaller(client: ApiClient): Caller {
  return {
    door: "bearer",
    get: (p) => client(p),
    json: (p, method, body) => client(p, { method, json: body ?? {} }),
    form: (p, fields) =>
      client(p, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields).toString(),
      }),
  };
}

/**
 * One call of a route module. `expect` is what B must get: 404 with A's ids and keys (the default of an owned
 * route); "no-leak" for a call on B's own data (any answer but a crash, and nothing of A's in it); 405 for a
 * method the route refuses to everyone before it looks at any id; or `{ like }`: exactly the answer to the same
 * call with a made-up id, for an id of A's named inside an object of B's (a form's own "not found" message).
 */
export type Probe = {
  label: string;
  method: "loader" | "action";
  request: (as: Caller) => Request;
  params?: Record<string, string>;
  expect?: 404 | 405 | "no-leak" | { like: Probe };
  /** Names an object of B's, so A's own call is no control for it. */
  insideOwn?: boolean;
  /** A JSON call's path, method and body, for tests that vary the body (api-wrong-types.test.ts). */
  json?: { path: string; method: string; body: unknown };
};

/** A loader call; `params` are the route's URL parameters as Remix would pass them. */
export function get(path: string, params?: Record<string, string>, expect?: Probe["expect"]): Probe {
  return { label: `GET ${path}`, method: "loader", request: (as) => as.get(path), params, expect };
}

/** An action call with a JSON body (POST unless said otherwise). */
export function send(
  path: string,
  body?: unknown,
  options: { method?: string; params?: Record<string, string> } = {},
): Probe {
  const method = options.method ?? "POST";
  return {
    label: `${method} ${path}`,
    method: "action",
    request: (as) => as.json(path, method, body),
    params: options.params,
    json: { path, method, body },
  };
}

/** A form post, as a page without JavaScript sends it. */
export function submit(path: string, fields: Record<string, string>, params?: Record<string, string>): Probe {
  return {
    label: `POST ${path} ${fields.intent ?? ""}`.trim(),
    method: "action",
    request: (as) => as.form(path, fields),
    params,
  };
}

export type RouteCheck<F> =
  | { kind: "owned"; doors: Door[]; probes: (a: F) => Probe[] }
  | { kind: "own-data-only"; doors: Door[]; probes: (a: F) => Probe[] }
  | { kind: "public"; reason: string }
  | { kind: "admin"; coveredBy: string };

/** The exported loader and action of a route module, loaded by its file on disk. */
export async function routeExports(file: string) {
  const module = (await import(/* @vite-ignore */ file)) as Record<string, unknown>;
  return {
    loader: typeof module.loader === "function" ? (module.loader as (a: never) => unknown) : undefined,
    action: typeof module.action === "function" ? (module.action as (a: never) => unknown) : undefined,
  };
}

export async function runProbe(file: string, probe: Probe, as: Caller) {
  const fn = (await routeExports(file))[probe.method];
  if (!fn) throw new Error(`${probe.label}: the module exports no ${probe.method}`);
  const req = probe.request(as);
  // What B sent is B's to see again: an answer echoing it tells B nothing new.
  const sent = `${decodeURIComponent(req.url)}\n${await req.clone().text()}`;
  const response = await callRoute(fn, req, probe.params ?? {});
  const body = await boundedText(response);
  return { status: response.status, body, location: response.headers.get("Location"), sent };
}

/** The body as text; an event stream is read only up to its first chunk, so a stream that stays open ends. */
async function boundedText(response: Response) {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const streaming = (response.headers.get("Content-Type") ?? "").includes("text/event-stream");
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
    if (streaming || text.length > 2_000_000) {
      await reader.cancel();
      return text;
    }
  }
}

/** Which of A's secrets (ids, keys, names, text) an answer contains that B did not send itself. */
function leaked(answer: string, sent: string, secrets: string[]) {
  const [haystack, echo] = [answer.toLowerCase(), sent.toLowerCase()];
  return secrets.filter((secret) => haystack.includes(secret.toLowerCase()) && !echo.includes(secret.toLowerCase()));
}

// Every storage method is recorded except those that touch no object: the health check and the local store's
// signature check. A presigned URL counts as a read or write (whoever holds it can use it); a listing counts too.
const UNTOUCHING = new Set(["check", "verifyRequest"]);

export type StorageCall = { method: string; key: string };

/** Wraps the app's storage so every object touched is recorded; `restore` puts the real one back. */
export function spyOnStorage() {
  const real = getStorage();
  const calls: StorageCall[] = [];
  const spy = new Proxy(real, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function" || typeof property !== "string" || UNTOUCHING.has(property)) return value;
      return (...args: unknown[]) => {
        const first = args[0] as string | { key?: unknown; prefix?: unknown } | undefined;
        const key = typeof first === "string" ? first : String(first?.key ?? first?.prefix);
        calls.push({ method: property, key });
        return (value as (...a: unknown[]) => unknown).apply(receiver, args);
      };
    },
  }) as ObjectStorage;
  setStorage(spy);
  return {
    calls,
    /** The calls made while `run` ran. */
    async during<T>(run: () => Promise<T>) {
      const from = calls.length;
      const result = await run();
      return { result, calls: calls.slice(from) };
    },
    restore: () => setStorage(real),
  };
}

/** Calls on an object under one of the user's prefixes (`<area>/<user id>/…`). */
export function touchesOwner(calls: StorageCall[], ownerId: string) {
  return calls.filter((call) => STORAGE_AREAS.some((area) => call.key.startsWith(`${area}/${ownerId}/`)));
}

type Expected = NonNullable<Probe["expect"]>;

/** What is wrong with B's answer to one probe: the status, anything of A's in it, any object of A's touched. */
export async function problemsOf(args: {
  file: string;
  probe: Probe;
  as: Caller;
  expected: Expected;
  storage: ReturnType<typeof spyOnStorage>;
  owner: { userId: string; secrets: string[] };
}): Promise<string[]> {
  const { file, probe, as, expected, storage, owner } = args;
  const where = `${as.door} ${probe.label}`;
  // A use case's error escaping the route is a 500 for the browser: reported, and the next probe runs.
  const outcome = await storage.during(() => runProbe(file, probe, as)).catch((error: Error) => error);
  if (outcome instanceof Error) return [`${where}: threw ${outcome.message} (a 500)`];
  const { result, calls } = outcome;
  const problems: string[] = [];
  if (typeof expected === "object") {
    const twin = await runProbe(file, expected.like, as);
    if (result.status === 500 || twin.status !== result.status || twin.body !== result.body)
      problems.push(`${where}: ${result.status} ${result.body.slice(0, 120)} — a made-up id gets ${twin.status}`);
  } else if (expected === "no-leak" ? result.status === 500 : result.status !== expected) {
    problems.push(`${where}: ${result.status} (expected ${expected}) ${result.body.slice(0, 200)}`);
  }
  const seen = leaked(`${result.location ?? ""}\n${result.body}`, result.sent, owner.secrets);
  if (seen.length > 0) problems.push(`${where}: answer contains A's ${seen.join(", ")}`);
  for (const call of touchesOwner(calls, owner.userId))
    problems.push(`${where}: storage ${call.method} on ${call.key}`);
  return problems;
}
