// A process that logs as `node server/index.mjs` and the worker do (the structured console, then LOG_SYSLOG_URL read by
// server/log-ship.mjs), without the app around it: each line on stdin is a command, as JSON —
//   {"level":"info","msg":"…","request_id":"…"}  console[level](msg), within that request's context if given
//   {"exit":0}                                     what the server does on SIGTERM: ship what is queued (at most
//                                                  2 s), then exit with that code
//   {"state":true}                                 the shipper's counts (state()), sent back over the IPC channel
// LOG_SHIP_TEST_OPTIONS (JSON) overrides the shipper's limits (queue size, backoff, progress timeout) so a test need
// not wait 30 s.
import { createInterface } from "node:readline";
import { installStructuredConsole, withLogContext } from "../../server/log.mjs";
import { LogShipSettingsError, startLogShipping } from "../../server/log-ship.mjs";

installStructuredConsole();
let shipping;
try {
  shipping = startLogShipping(process.env, JSON.parse(process.env.LOG_SHIP_TEST_OPTIONS ?? "{}"));
} catch (error) {
  console.error(error instanceof LogShipSettingsError ? error.message : error);
  process.exit(1);
}

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line);
  if ("exit" in command) {
    await shipping?.close(2000);
    process.exit(command.exit);
  }
  if ("state" in command) {
    process.send?.({ state: shipping?.state() });
    continue;
  }
  const log = () => console[command.level](command.msg);
  if (command.request_id) withLogContext({ request_id: command.request_id }, log);
  else log();
}
