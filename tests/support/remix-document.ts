import path from "node:path";
import { flatRoutes } from "@remix-run/dev/dist/config/flat-routes.js";
import { createRequestHandler, type ServerBuild } from "@remix-run/node";
import remixConfig from "../../remix.config.js";

// The whole app as the browser meets it: Remix's own request handler over every route module of app/routes (found
// with the flat-routes convention the compiler uses) and the real app/entry.server.tsx, so a page comes back as
// the complete HTML document with its headers — the shell, the inline scripts Remix writes (loader data on pages
// with an island) and the CSP of the response. No build is needed: the modules are the source files.

const APP_DIR = path.resolve(__dirname, "../../app");

type Manifest = Record<string, { id: string; parentId?: string; path?: string; index?: boolean; file: string }>;

type Entry = typeof import("~/entry.server");
type SourceBuild = ServerBuild & { entry: { module: Entry } };
let build: Promise<SourceBuild> | undefined;
let handler: Promise<{ entry: Entry; remix: (request: Request) => Promise<Response> }> | undefined;

/** The server build made from the source files, once per test file: what server/app.mjs serves in the tests. */
export function sourceBuild(): Promise<SourceBuild> {
  build ??= buildFromSource();
  return build;
}

async function buildFromSource(): Promise<SourceBuild> {
  // entry.server boots the app when imported; the tests have booted their own (database, storage, config).
  process.env.SKRIBENT_SKIP_BOOT = "1";
  const entry = await import("~/entry.server");
  const manifest: Manifest = {
    root: { id: "root", path: "", file: "root.tsx" },
    ...(flatRoutes(APP_DIR, remixConfig.ignoredRouteFiles) as Manifest),
  };
  const routes: ServerBuild["routes"] = {};
  const assetRoutes: ServerBuild["assets"]["routes"] = {};
  for (const route of Object.values(manifest)) {
    const module = await import(/* @vite-ignore */ path.join(APP_DIR, route.file));
    const shape = {
      id: route.id,
      parentId: route.id === "root" ? undefined : (route.parentId ?? "root"),
      path: route.path,
      index: route.index,
      caseSensitive: undefined,
    };
    routes[route.id] = { ...shape, module };
    assetRoutes[route.id] = {
      ...shape,
      module: `/build/${route.id}.js`,
      hasAction: typeof module.action === "function",
      hasLoader: typeof module.loader === "function",
      hasClientAction: false,
      hasClientLoader: false,
      hasErrorBoundary: typeof module.ErrorBoundary === "function",
    };
  }
  return {
    mode: "production",
    entry: { module: entry },
    routes,
    assets: {
      entry: { module: "/build/entry.client.js", imports: [] },
      routes: assetRoutes,
      url: "/build/manifest.js",
      version: "test",
    },
    publicPath: "/build/",
    assetsBuildDirectory: "public/build",
    future: remixConfig.future,
    isSpaMode: false,
  } as unknown as SourceBuild;
}

/**
 * The app's answer to a request, as `node server/index.mjs` gives it (less compression, static files and logging):
 * first the checks server/index.mjs runs before Remix (entry.server's refuseBeforeRouting), then Remix's handler.
 */
export async function serve(request: Request): Promise<Response> {
  handler ??= sourceBuild().then((build) => ({
    entry: build.entry.module,
    remix: createRequestHandler(build, "production"),
  }));
  // An HTTP server always has the Host header (Remix compares it with Origin before an action runs).
  if (!request.headers.has("Host")) request.headers.set("Host", new URL(request.url).host);
  const { entry, remix } = await handler;
  const refusal = await entry.refuseBeforeRouting(request);
  if (refusal) return refusal;
  return remix(request);
}

/**
 * A URL for each route module of app/routes (keyed by its name, as tests/support/access-matrix.ts names them):
 * its full path with every parameter filled in by `fill`, and `?index` for an index route (Remix sends a post
 * to "/" to the layout otherwise).
 */
export function routeUrls(fill: (param: string) => string): Record<string, string> {
  const manifest = flatRoutes(APP_DIR, remixConfig.ignoredRouteFiles) as Manifest;
  const fullPath = (id: string | undefined): string[] =>
    !id || !manifest[id] ? [] : [...fullPath(manifest[id].parentId), manifest[id].path ?? ""];
  const urls: Record<string, string> = {};
  for (const route of Object.values(manifest)) {
    const segments = fullPath(route.id)
      .join("/")
      .split("/")
      .filter(Boolean)
      .map((segment) => (segment === "*" ? fill("*") : segment.startsWith(":") ? fill(segment.slice(1)) : segment));
    urls[route.id.replace(/^routes\//, "")] = `/${segments.join("/")}${route.index ? "?index" : ""}`;
  }
  return urls;
}
