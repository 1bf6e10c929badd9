import { EventEmitter } from "node:events";
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from "node:net";
import { createServer as createTlsServer } from "node:tls";

// A log collector as rsyslog's imtcp/gtls or syslog-ng's network() source meets Skribent's LOG_SYSLOG_URL: syslog
// over TLS (RFC 5425), or plain TCP for a relay on loopback, each frame octet-counted (`MSGLEN SP SYSLOG-MSG`) and
// each message parsed as RFC 5424 demands — strictly: anything that does not parse is kept in `framingErrors` and
// the connection is dropped, as a real collector would. `refusedHandshakes` counts clients that broke off the TLS
// handshake, which shows a client got as far as TLS; `bytesAfterHandshake` what reached the collector at all.
// `connections` counts the connections it accepted (after the handshake); `stopReading` makes it stop reading the
// open ones, as a stuck collector or a full network path does (the client's writes then stall once the kernel's
// buffers are full), and `dropConnections` hangs up on them without reading what is left, as a collector that
// restarts does. Connections opened later are read as usual. `waitFor` resolves when the messages so far satisfy a
// condition (no polling: it checks on every message, every connection and every refused handshake).

export type SyslogMessage = {
  facility: number;
  severity: number;
  version: number;
  timestamp: string;
  hostname: string;
  appName: string;
  procId: string;
  msgId: string;
  structuredData: string;
  /** The MSG part, decoded as UTF-8 (a BOM would be kept, so a test sees it). */
  msg: string;
};

export type SyslogCollector = {
  port: number;
  messages: SyslogMessage[];
  framingErrors: string[];
  readonly refusedHandshakes: number;
  readonly bytesAfterHandshake: number;
  readonly connections: number;
  stopReading(): void;
  dropConnections(): void;
  waitFor(condition: (messages: SyslogMessage[]) => boolean, what: string): Promise<void>;
  close(): Promise<void>;
};

// HEADER (PRI VERSION SP TIMESTAMP SP HOSTNAME SP APP-NAME SP PROCID SP MSGID) SP STRUCTURED-DATA [SP MSG]
const SYSLOG_MSG =
  /^<(\d{1,3})>([1-9]\d{0,2}) (-|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|[+-]\d\d:\d\d)) ([\x21-\x7e]{1,255}) ([\x21-\x7e]{1,48}) ([\x21-\x7e]{1,128}) ([\x21-\x7e]{1,32}) (-|(?:\[[^\]]*\])+)(?: ([\s\S]*))?$/;
const decoder = new TextDecoder("utf-8", { fatal: true });

export function parseSyslogMessage(bytes: Buffer): SyslogMessage {
  const text = decoder.decode(bytes);
  const match = SYSLOG_MSG.exec(text);
  if (!match) throw new Error(`not an RFC 5424 message: ${JSON.stringify(text.slice(0, 120))}`);
  const [, pri, version, timestamp, hostname, appName, procId, msgId, structuredData, msg = ""] = match;
  if (Number(pri) > 191) throw new Error(`PRI out of range: ${pri}`);
  return {
    facility: Math.floor(Number(pri) / 8),
    severity: Number(pri) % 8,
    version: Number(version),
    timestamp,
    hostname,
    appName,
    procId,
    msgId,
    structuredData,
    msg,
  };
}

/** `tls`: the collector's certificate and key (omit for plain TCP). `port`: a fixed port (0: any free one). */
export async function startSyslogCollector({
  tls,
  port = 0,
}: { tls?: { cert: string; key: string }; port?: number } = {}): Promise<SyslogCollector> {
  const messages: SyslogMessage[] = [];
  const framingErrors: string[] = [];
  const events = new EventEmitter();
  const sockets = new Set<Socket>();
  let refusedHandshakes = 0;
  let bytesAfterHandshake = 0;
  let connections = 0;

  function receive(socket: Socket) {
    sockets.add(socket);
    connections++;
    events.emit("message");
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    let buffer = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      bytesAfterHandshake += chunk.length;
      buffer = Buffer.concat([buffer, chunk]);
      try {
        for (;;) {
          const space = buffer.indexOf(0x20);
          if (space === -1) {
            if (buffer.length > 10 || !/^\d*$/.test(buffer.toString("latin1"))) throw new Error("no MSGLEN");
            return;
          }
          const length = buffer.subarray(0, space).toString("latin1");
          if (!/^[1-9]\d{0,9}$/.test(length)) throw new Error(`bad MSGLEN ${JSON.stringify(length)}`);
          const end = space + 1 + Number(length);
          if (buffer.length < end) return;
          messages.push(parseSyslogMessage(buffer.subarray(space + 1, end)));
          buffer = buffer.subarray(end);
          events.emit("message");
        }
      } catch (error) {
        framingErrors.push((error as Error).message);
        events.emit("message");
        socket.destroy();
      }
    });
  }

  let server: Server;
  if (tls) {
    const secure = createTlsServer({ ...tls, minVersion: "TLSv1.2" }, receive);
    secure.on("tlsClientError", () => {
      refusedHandshakes++;
      events.emit("message");
    });
    server = secure;
  } else server = createTcpServer(receive);
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", resolve));

  return {
    port: (server.address() as AddressInfo).port,
    messages,
    framingErrors,
    get refusedHandshakes() {
      return refusedHandshakes;
    },
    get bytesAfterHandshake() {
      return bytesAfterHandshake;
    },
    get connections() {
      return connections;
    },
    stopReading() {
      for (const socket of sockets) socket.pause();
    },
    dropConnections() {
      for (const socket of sockets) socket.destroy();
    },
    waitFor(condition, what) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (framingErrors.length > 0) reject(new Error(`framing: ${framingErrors.join("; ")}`));
          else if (condition(messages)) resolve();
          else return;
          events.off("message", check);
          clearTimeout(timer);
        };
        // A bound, not a wait: it only turns a hang into a failure that says what never came.
        const timer = setTimeout(() => {
          events.off("message", check);
          reject(new Error(`the collector never received ${what}`));
        }, 15_000);
        events.on("message", check);
        check();
      });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
