import type { AddressInfo } from "node:net";
import { createServerApp } from "../../server/app.mjs";
import { listen } from "../../server/listen.mjs";
import { sourceBuild } from "./remix-document";

// The Express layer of `node server/index.mjs` (server/app.mjs) on a port of its own, over the app built from the source
// files: what an operator's proxy or a browser meets first — static files, the client address, the checks before
// Remix, the live door's upgrade. It reads the configuration the test installed when it starts. It listens as
// server/index.mjs does (server/listen.mjs): over HTTPS when `tls` holds what server/tls.mjs read from TLS_CERT_FILE and
// TLS_KEY_FILE.

export async function startServerApp(
  options: { publicDir?: string; assetsBuildDirectory?: string; tls?: { cert: Buffer; key: Buffer } } = {},
) {
  const { assetsBuildDirectory, publicDir, tls } = options;
  const source = await sourceBuild();
  const build = assetsBuildDirectory ? { ...source, assetsBuildDirectory } : source;
  const { app, upgrade } = createServerApp({ build, mode: "production", publicDir });
  const { server } = await listen({ app, upgrade, port: 0, host: "127.0.0.1", tls });
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? "https" : "http"}://127.0.0.1:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
