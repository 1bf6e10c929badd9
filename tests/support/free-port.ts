import net from "node:net";

/** A loopback port nothing listens on (yet): for servers that must be told their port before they start. */
export function freePort() {
  return new Promise<number>((resolve, reject) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.once("error", reject);
  });
}
