import { createServer, type AddressInfo, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { createFrameQueue } from "../../server/log-ship-queue.mjs";
import type { SyslogCollector } from "../support/syslog-collector";
import { received, setUpLogShipping } from "../support/log-shipping";

// ADR 0023: the shipper never waits for the collector, and a collector that stops reading or a peer that went half
// dead must not hold the shipping up for good either. A connection that makes no progress for the progress timeout
// (30 s; shorter here through LOG_SHIP_TEST_OPTIONS) is destroyed and opened again with the usual backoff, and the
// entries whose writes had not completed when a connection broke are sent again over the next one. Real TLS on
// loopback, as in log-shipping.test.ts; a collector stops reading with `stopReading()`, after which the shipper's
// writes stall once the kernel's socket buffers are full.

const shipping = setUpLogShipping();
const { collector, start } = shipping;
type App = ReturnType<typeof start>;

const FLOOD = "[jobs] flood";
const PAD = "x".repeat(1000);

/**
 * Logs numbered entries of about 1 KB (`[jobs] flood N …`), a batch at a time, until the shipper is stuck: entries
 * wait in its queue, and its counts stay the same over three asks in a row (a queue that is not empty only for a
 * moment, while the kernel is still taking data, would change). How much that takes depends on the kernel's buffer
 * sizes (a few MB here), hence batches rather than a fixed number.
 */
async function floodUntilBlocked(app: App) {
  let logged = 0;
  let same = 0;
  let previous = "";
  for (let asks = 0; asks < 2000; asks++) {
    const state = await app.state();
    same = JSON.stringify(state) === previous ? same + 1 : 0;
    if (state.queued > 0 && same === 2) return { logged, state };
    previous = JSON.stringify(state);
    if (state.queued === 0)
      for (let n = 0; n < 100; n++) app.log({ level: "info", msg: `${FLOOD} ${++logged} ${PAD}` });
  }
  throw new Error(`the shipper never got stuck (${logged} entries): did the collector go on reading?`);
}

/** The numbers of the flood entries among the collector's messages from the `from`th on, in the order received. */
function floodNumbers(logs: SyslogCollector, from = 0) {
  return logs.messages
    .slice(from)
    .map((message) => /\[jobs\] flood (\d+) /.exec(message.msg)?.[1])
    .filter((number) => number !== undefined)
    .map(Number);
}

describe("log shipping when the collector stalls", () => {
  it("gives up a connection whose writes make no progress for the timeout, reconnects and sends on", async () => {
    const logs = await collector(shipping.ca);
    const app = start(
      { LOG_SYSLOG_URL: `tls://127.0.0.1:${logs.port}`, LOG_SYSLOG_CA_FILE: shipping.ca.caFile },
      { minBackoffMs: 20, maxBackoffMs: 50, progressTimeoutMs: 500, maxEntries: 1e6, maxBytes: 1024 ** 3 },
    );
    app.log({ level: "info", msg: "[boot] ready" });
    await received(logs, "[log-ship] sending log entries to");
    logs.stopReading();
    const { logged } = await floodUntilBlocked(app);

    // The stalled connection stays open on the collector's side: only the shipper's timeout ends it.
    await logs.waitFor(() => logs.connections >= 2, "a second connection");
    const stalled = await app.written("[log-ship] cannot send");
    expect(stalled).toMatchObject({ level: "warn" });
    expect(stalled.msg).toMatch(/^\[log-ship\] cannot send log entries to tls:\/\/127\.0\.0\.1:\d+ \(ETIMEDOUT\)/);
    app.log({ level: "info", msg: "[api] after the stall" });
    await received(logs, "[api] after the stall");
    // What was still queued when the connection stalled went over the new one.
    expect(floodNumbers(logs)).toContain(logged);
    expect(logs.framingErrors).toEqual([]);
    expect(await app.exit(0)).toBe(0);
  });

  it("gives up a handshake the collector never answers after the same timeout, and tries again", async () => {
    // A peer that accepts the TCP connection and then says nothing, as a half-dead collector or a stuck relay does.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      let accepted = 0;
      const second = new Promise<void>((resolve) => silent.on("connection", () => ++accepted === 2 && resolve()));
      const app = start(
        { LOG_SYSLOG_URL: `tls://127.0.0.1:${port}`, LOG_SYSLOG_CA_FILE: shipping.ca.caFile },
        { minBackoffMs: 20, maxBackoffMs: 50, progressTimeoutMs: 200 },
      );
      app.log({ level: "info", msg: "[boot] ready" });
      const refused = await app.written("[log-ship] cannot send");
      expect(refused.msg).toMatch(/^\[log-ship\] cannot send log entries to tls:\/\/127\.0\.0\.1:\d+ \(ETIMEDOUT\)/);
      await second;
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it("sends again, after reconnecting, the entries whose writes had not completed when the connection broke", async () => {
    const logs = await collector(shipping.ca);
    const app = start(
      { LOG_SYSLOG_URL: `tls://127.0.0.1:${logs.port}`, LOG_SYSLOG_CA_FILE: shipping.ca.caFile },
      { minBackoffMs: 20, maxBackoffMs: 50, maxEntries: 1e6, maxBytes: 1024 ** 3 },
    );
    app.log({ level: "info", msg: "[boot] ready" });
    await received(logs, "[log-ship] sending log entries to");
    logs.stopReading();
    const { logged, state } = await floodUntilBlocked(app);
    // Entries 1…logged: the last `queued` wait in the queue, the `unacknowledged` before them were written to the
    // socket but not taken by the kernel, and those before were taken by the kernel (lost with the connection: syslog
    // has no acknowledgements).
    expect(state.unacknowledged).toBeGreaterThan(0);
    const lastUnacknowledged = logged - state.queued;

    // The collector hangs up without reading what is left, as a collector that restarts does.
    const before = logs.messages.length;
    logs.dropConnections();
    await received(logs, "[log-ship] sending log entries to", before);
    await received(logs, `${FLOOD} ${logged} `, before);

    // After the reconnection: the entries whose writes were still waiting, then the queue, each once and in order.
    const resent = floodNumbers(logs, before);
    expect(resent[0]).toBeLessThanOrEqual(lastUnacknowledged);
    expect(resent).toEqual(Array.from({ length: logged - resent[0] + 1 }, (_, index) => resent[0] + index));
    expect((await app.state()).resent).toBeGreaterThanOrEqual(logged - state.queued - resent[0] + 1);
    expect(logs.framingErrors).toEqual([]);
    expect(await app.exit(0)).toBe(0);
  });
});

describe("the shipper's queue, when entries are put back", () => {
  const frame = (text: string) => Buffer.from(text);
  const texts = (queue: ReturnType<typeof createFrameQueue>) =>
    Array.from({ length: queue.length }, () => queue.shift()!.toString());

  it("puts them in front of the others, in their order", () => {
    const queue = createFrameQueue({ maxEntries: 10, maxBytes: 1000 });
    for (const text of ["c", "d"]) queue.push(frame(text));
    queue.putBack([frame("a"), frame("b")]);
    expect([queue.resent, queue.dropped]).toEqual([2, 0]);
    expect(texts(queue)).toEqual(["a", "b", "c", "d"]);
  });

  it("keeps to its bounds, dropping the oldest (those put back first) and counting them", () => {
    const byCount = createFrameQueue({ maxEntries: 3, maxBytes: 1000 });
    for (const text of ["c", "d"]) byCount.push(frame(text));
    byCount.putBack([frame("a"), frame("b")]);
    expect([byCount.dropped, texts(byCount)]).toEqual([1, ["b", "c", "d"]]);

    const byBytes = createFrameQueue({ maxEntries: 10, maxBytes: 11 });
    byBytes.push(frame("newest"));
    byBytes.putBack([frame("old"), frame("older")]);
    expect([byBytes.dropped, texts(byBytes)]).toEqual([1, ["older", "newest"]]);
  });
});
