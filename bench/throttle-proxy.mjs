// A TCP proxy that behaves like one slow, flaky access link, for the throttled-upload bench
// (bench/upload-throttled.mjs). Everything sent through it — across all connections — shares one
// token bucket per direction (upstream and downstream each get `bitsPerSecond`), handed out in small
// slices (a tick every 20 ms, ≤ 16 KiB a write). A source socket is paused while its bytes wait for the bucket, so the
// proxy never holds more than one read (≤ 64 KiB) per connection and TCP backpressure reaches the
// sender, as on a real link. `drop(ms)` stops all bytes in both directions for that long, on existing
// and new connections alike (they are accepted but stall), then everything flows again.
//
// Usage:
//   const proxy = await startThrottleProxy({ listenPort: 3411, targetPort: 3410, bitsPerSecond: 1e6 });
//   await proxy.drop(30_000); // resolves when the link is back
//   proxy.bytesUp, proxy.bytesDown; await proxy.close();
import net from "node:net";

const TICK_MS = 20;
const SLICE = 16 * 1024;

/** One direction of the link: a token bucket and the connections waiting for it, served in turn. */
function createLane(bytesPerSecond) {
  const burst = Math.max(SLICE, Math.ceil((bytesPerSecond * TICK_MS * 2) / 1000));
  const lane = { tokens: 0, queue: [], bytes: 0, last: performance.now() };

  lane.refill = (now, dropped) => {
    const elapsed = now - lane.last;
    lane.last = now;
    // Nothing moves during a drop, and a link does not save up bandwidth while it is down.
    lane.tokens = dropped ? 0 : Math.min(burst, lane.tokens + (bytesPerSecond * elapsed) / 1000);
  };

  lane.pump = () => {
    while (lane.queue.length && lane.tokens >= 1) {
      const entry = lane.queue.shift();
      if (entry.dest.destroyed) {
        entry.release(false);
        continue;
      }
      const n = Math.min(Math.floor(lane.tokens), SLICE, entry.chunk.length - entry.offset);
      entry.dest.write(entry.chunk.subarray(entry.offset, entry.offset + n));
      entry.offset += n;
      lane.tokens -= n;
      lane.bytes += n;
      if (entry.offset < entry.chunk.length) lane.queue.push(entry);
      else entry.release(true);
    }
  };

  /** Queues one read from `source` for `dest`; `source` stays paused until it has gone out. */
  lane.enqueue = (source, dest, chunk) => {
    source.pause();
    lane.queue.push({
      dest,
      chunk,
      offset: 0,
      release(delivered) {
        if (!delivered || source.destroyed) return;
        if (dest.writableNeedDrain) dest.once("drain", () => source.resume());
        else source.resume();
      },
    });
  };

  lane.forget = (socket) => {
    lane.queue = lane.queue.filter((entry) => entry.dest !== socket);
  };

  return lane;
}

export async function startThrottleProxy({ listenPort, targetPort, bitsPerSecond, host = "127.0.0.1" }) {
  const up = createLane(bitsPerSecond / 8);
  const down = createLane(bitsPerSecond / 8);
  const sockets = new Set();
  let droppedUntil = 0;
  let opened = 0;
  const dropTimers = new Set();

  const tick = () => {
    const now = performance.now();
    const dropped = now < droppedUntil;
    up.refill(now, dropped);
    down.refill(now, dropped);
    if (dropped) return;
    up.pump();
    down.pump();
  };
  const timer = setInterval(tick, TICK_MS);

  /** Runs `then` once no bytes for `socket` wait in `lane` (and the link is up: a drop holds FINs too). */
  function whenFlushed(lane, socket, then) {
    const waiting = performance.now() < droppedUntil || lane.queue.some((entry) => entry.dest === socket);
    if (waiting) setTimeout(() => whenFlushed(lane, socket, then), TICK_MS);
    else then();
  }

  /** `from` → `to` through `lane`; an end (or a close) travels only after the bytes before it. */
  function pipe(from, to, lane) {
    from.on("data", (chunk) => lane.enqueue(from, to, chunk));
    from.on("end", () => whenFlushed(lane, to, () => to.end()));
    from.on("close", () => whenFlushed(lane, to, () => to.end()));
  }

  const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: true }, (client) => {
    const target = net.connect({ host, port: targetPort, allowHalfOpen: true });
    opened++;
    sockets.add(client);
    sockets.add(target);
    // A reset on either side resets the other: nothing queued can be delivered any more.
    const reset = () => {
      up.forget(target);
      down.forget(client);
      client.destroy();
      target.destroy();
    };
    client.on("error", reset);
    target.on("error", reset);
    client.setNoDelay(true);
    target.setNoDelay(true);
    // Bytes still queued for a socket that has closed are dropped with it.
    client.on("close", () => {
      sockets.delete(client);
      down.forget(client);
      if (target.connecting) target.destroy();
    });
    target.on("close", () => {
      sockets.delete(target);
      up.forget(target);
    });
    target.once("connect", () => {
      pipe(client, target, up);
      pipe(target, client, down);
      client.resume();
    });
  });

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(listenPort, host, resolve);
  });

  return {
    get bytesUp() {
      return up.bytes;
    },
    get bytesDown() {
      return down.bytes;
    },
    /** Connections accepted so far. */
    get connections() {
      return opened;
    },
    /** Holds every byte in both directions for `ms`; resolves when the link is back. */
    drop(ms) {
      droppedUntil = Math.max(droppedUntil, performance.now() + ms);
      return new Promise((resolve) => {
        const timeout = setTimeout(() => {
          dropTimers.delete(timeout);
          resolve();
        }, ms);
        dropTimers.add(timeout);
      });
    },
    close() {
      clearInterval(timer);
      for (const timeout of dropTimers) clearTimeout(timeout);
      droppedUntil = 0;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
