import fs from "node:fs";
import path from "node:path";
import { formatWithOptions } from "node:util";
import { expect, vi } from "vitest";

// Log hygiene (issue 9): what the app logs during the suite is kept for scripts/log-hygiene.mjs. When
// scripts/test.mjs sets SKRIBENT_LOG_CAPTURE_DIR, every console call of this worker is also appended to a file of
// its own there, as "<source>\t<text>" lines, the text formatted as the console formats it. Test titles, reporter
// lines and assertion diffs never pass through the worker's console, so none of the runner's noise is kept.
// A plain `npx vitest run` captures nothing.

const METHODS = ["log", "info", "warn", "error", "debug"] as const;
type Method = (typeof METHODS)[number];

const dir = process.env.SKRIBENT_LOG_CAPTURE_DIR;
const label = process.env.SKRIBENT_LOG_CAPTURE_LABEL ?? "vitest";
const file = dir ? path.join(dir, `vitest-${label}-${process.pid}.log`) : undefined;
/** Marks what this file wrapped: a worker that runs several test files may evaluate it for each. */
const CAPTURING = Symbol.for("skribent.logCapture");
let broken = false;

function keep(method: Method, args: unknown[]) {
  if (!file || broken) return;
  const testPath = expect.getState().testPath;
  const source = `vitest ${label} ${testPath ? path.relative(process.cwd(), testPath) : "-"} console.${method}`;
  const text = formatWithOptions({ colors: false }, ...args);
  try {
    fs.appendFileSync(
      file,
      text
        .split("\n")
        .map((line) => `${source}\t${line}\n`)
        .join(""),
    );
  } catch (error) {
    // Never let capturing change what the app does: a console call that throws would.
    broken = true;
    process.stderr.write(`log capture stopped: ${(error as Error).message}\n`);
  }
}

if (file) {
  for (const method of METHODS) {
    const original = console[method] as ((...args: unknown[]) => void) & { [CAPTURING]?: true };
    if (original[CAPTURING]) continue;
    const capturing = function (this: Console, ...args: unknown[]) {
      keep(method, args);
      return original.apply(this, args);
    };
    console[method] = Object.assign(capturing, { [CAPTURING]: true as const });
  }
}

// A spy with an implementation of its own (vi.spyOn(console, "warn").mockImplementation(…), expectConsoleError)
// answers the call before it reaches the wrapper, and is often restored within the test, its calls gone: so the
// implementation such a spy is given keeps the call first. A spy without one calls the wrapper itself.
type Implementation = (...args: unknown[]) => unknown;
const spyOn = vi.spyOn as typeof vi.spyOn & { [CAPTURING]?: true };
const watched = new WeakSet<object>();
const keepingSpyOn = function (this: unknown, ...args: Parameters<typeof spyOn>) {
  const spy = Reflect.apply(spyOn, this, args) as unknown as {
    mockImplementation(fn: Implementation): unknown;
    mockImplementationOnce(fn: Implementation): unknown;
  };
  const [object, key] = args as unknown[];
  const method = METHODS.find((name) => name === key);
  if (object === console && method && !watched.has(spy)) {
    watched.add(spy);
    const keeping = (fn: Implementation): Implementation =>
      function (this: unknown, ...callArgs: unknown[]) {
        keep(method, callArgs);
        return Reflect.apply(fn, this, callArgs);
      };
    const { mockImplementation, mockImplementationOnce } = spy;
    spy.mockImplementation = (fn) => Reflect.apply(mockImplementation, spy, [keeping(fn)]);
    spy.mockImplementationOnce = (fn) => Reflect.apply(mockImplementationOnce, spy, [keeping(fn)]);
  }
  return spy;
} as typeof spyOn;
if (file && !spyOn[CAPTURING]) vi.spyOn = Object.assign(keepingSpyOn, { [CAPTURING]: true as const });
