import net, { type AddressInfo, type Socket } from "node:net";

// A TCP proxy the fault tests put between the app and a server it depends on (the database, object storage), to
// take that server away and give it back without touching it: `cut()` is a crash or a pulled cable as the app
// sees it — every open connection is torn down and new ones are refused (the port stops listening); `restore()`
// listens again on the same port. `cutOnData(text)` cuts at the moment the app sends bytes containing `text`
// (a statement of a transaction, say), before they reach the server.

export type TcpProxy = {
  host: string;
  port: number;
  /** Connections the proxy has accepted so far. */
  readonly accepted: number;
  cut(): Promise<void>;
  /** Listens again (nothing happens when it is not cut). */
  restore(): Promise<void>;
  /** Cuts when the app next sends bytes containing `text`; those bytes never reach the server. */
  cutOnData(text: string): Promise<void>;
  close(): Promise<void>;
};

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let accepted = 0;
  let trigger: { text: string; fired: () => void } | null = null;
  let server = net.createServer();
  let port = 0;

  const track = (socket: Socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    // A torn-down peer is this proxy's business, not an error of the test.
    socket.on("error", () => socket.destroy());
  };
  const destroyAll = () => {
    for (const socket of open) socket.destroy();
    open.clear();
  };

  function onConnection(client: Socket) {
    accepted += 1;
    track(client);
    const upstream = net.connect(target);
    track(upstream);
    client.on("data", (chunk: Buffer) => {
      if (trigger && chunk.includes(trigger.text)) {
        const fired = trigger.fired;
        trigger = null;
        void cut().then(fired);
        return;
      }
      if (!upstream.write(chunk)) client.pause();
    });
    upstream.on("drain", () => client.resume());
    upstream.pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  }

  async function listen() {
    if (server.listening) return;
    server = net.createServer(onConnection);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
    port = (server.address() as AddressInfo).port;
  }

  async function cut() {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    destroyAll();
    await closed;
  }

  await listen();
  return {
    host: "127.0.0.1",
    get port() {
      return port;
    },
    get accepted() {
      return accepted;
    },
    cut,
    restore: listen,
    cutOnData(text) {
      return new Promise<void>((resolve) => {
        trigger = { text, fired: resolve };
      });
    },
    async close() {
      if (server.listening) await cut();
      destroyAll();
    },
  };
}
