import http from "node:http";
import type { AddressInfo } from "node:net";
import { createServerApp } from "../../server-app.mjs";
import { sourceBuild } from "./remix-document";

// The Express layer of `node server.mjs` (server-app.mjs) on a port of its own, over the app built from the source
// files: what an operator's proxy or a browser meets first — static files, the client address, the checks before
// Remix, the live door's upgrade. It reads the configuration the test installed when it starts.

export async function startServerApp(options: { publicDir?: string; assetsBuildDirectory?: string } = {}) {
  const { assetsBuildDirectory, publicDir } = options;
  const source = await sourceBuild();
  const build = assetsBuildDirectory ? { ...source, assetsBuildDirectory } : source;
  const { app, upgrade } = createServerApp({ build, mode: "production", publicDir });
  const server = http.createServer(app);
  server.on("upgrade", (req, socket, head) => void upgrade(req, socket, head));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
