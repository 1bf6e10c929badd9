import fs from "node:fs";
import path from "node:path";
import { stripVTControlCharacters } from "node:util";
import type { Reporter, TestCase } from "@playwright/test/reporter";

// Log hygiene (issue 9): what Playwright's web servers (the app and the fakes) print during the end-to-end
// tests, kept for scripts/log-hygiene.mjs. Playwright hands a web server's output to every reporter, with no
// test attached and each line of a chunk prefixed "[<name>] "; output of the specs themselves comes with its
// test, or without a server's prefix, and is left out. playwright.config.ts adds this reporter, with the
// servers' names and the directory, when scripts/test.mjs sets SKRIBENT_LOG_CAPTURE_DIR; lines go to e2e.log
// there as "e2e <name> <stream>\t<text>".

export type LogCaptureOptions = { dir: string; servers: string[] };

/** The prefix of each line (dimmed when colours are on: the colours are taken out first). */
const PREFIX = /^\[([\w.-]+)\] /;

export default class LogCaptureReporter implements Reporter {
  private readonly file: string;
  private readonly servers: Set<string>;
  /** A line a chunk ended in the middle of, per server and stream. */
  private readonly partial = new Map<string, string>();

  constructor(options: LogCaptureOptions) {
    this.file = path.join(options.dir, "e2e.log");
    this.servers = new Set(options.servers);
  }

  printsToStdio() {
    return false;
  }

  onStdOut(chunk: string | Buffer, test?: TestCase) {
    if (!test) this.take(stripVTControlCharacters(String(chunk)), "stdout");
  }

  onStdErr(chunk: string | Buffer, test?: TestCase) {
    if (!test) this.take(stripVTControlCharacters(String(chunk)), "stderr");
  }

  onEnd() {
    for (const [source, rest] of this.partial) if (rest !== "") this.write(source, [rest]);
    this.partial.clear();
  }

  private take(chunk: string, stream: string) {
    const name = PREFIX.exec(chunk)?.[1];
    if (!name || !this.servers.has(name)) return;
    // Undo the prefixing (Playwright prefixes each "\n"-separated piece, also one that continues a line).
    const text = chunk
      .split("\n")
      .map((piece) => piece.replace(PREFIX, ""))
      .join("\n");
    const source = `e2e ${name} ${stream}`;
    const lines = `${this.partial.get(source) ?? ""}${text}`.split("\n");
    this.partial.set(source, lines.pop() ?? "");
    this.write(source, lines);
  }

  private write(source: string, lines: string[]) {
    if (lines.length === 0) return;
    fs.appendFileSync(this.file, lines.map((line) => `${source}\t${line.replace(/\r$/, "")}\n`).join(""));
  }
}
