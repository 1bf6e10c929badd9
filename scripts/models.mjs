#!/usr/bin/env node
// `npm run models`: puts the local engines' model files (ADR 0011; the letter model) into MODELS_DIR.
//
//   npm run models                                  # ggml-small.bin + silero_vad.onnx + the letter model into $MODELS_DIR or ./models
//   npm run models -- --only vad                    # one of them: whisper | vad | llm
//   npm run models -- --only llm --sha256 HEX       # the letter model needs its checksum given (see LLM_MODELS)
//   npm run models -- --dir /srv/skribent/models    # somewhere else
//   npm run models -- --whisper ggml-medium.bin     # another whisper.cpp model (default $LOCAL_WHISPER_MODEL)
//   npm run models -- --from /mnt/usb/models        # copy from a local directory instead of downloading
//
// Every file is written to "<name>.part", checked against its published SHA-256 and size, and only then
// renamed into place, so a broken download never looks like a model. A file already present with the right
// checksum is left alone. Exit code 0 when every requested model is in place, 1 when one is not, 2 for a
// usage error. Downloads go straight to the hosts (Node's fetch ignores HTTPS_PROXY): where they cannot be
// reached, fetch the files on another machine and use --from.
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { chmod, copyFile, mkdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";

const WHISPER_BASE = "https://huggingface.co/ggerganov/whisper.cpp/resolve/main";
const QWEN_BASE = "https://huggingface.co/Qwen/Qwen2.5-3B-Instruct-GGUF/resolve/main";
const DEFAULT_LLM = "qwen2.5-3b-instruct-q4_k_m.gguf";

// Published SHA-256 checksums and sizes. The whisper.cpp ones are the Git LFS object ids of
// huggingface.co/ggerganov/whisper.cpp (shown on each file's page there). Silero VAD: the file of
// snakers4/silero-vad at tag v6.2.1 (unchanged through v6.2.3); the same bytes as ../shared/models/silero_vad.onnx,
// on which the engine's tests run. Both verified against several independent projects that pin them.
const WHISPER_MODELS = {
  "ggml-base.bin": {
    url: `${WHISPER_BASE}/ggml-base.bin`,
    sha256: "60ed5bc3dd14eea856493d334349b405782ddcaf0028d4b5df4088345fba2efe",
    size: 147_951_465,
  },
  "ggml-small.bin": {
    url: `${WHISPER_BASE}/ggml-small.bin`,
    sha256: "1be3a9b2063867b937e64e2ec7483364a79917e157fa98c5d94b5c1fffea987b",
    size: 487_601_967,
  },
  "ggml-medium.bin": {
    url: `${WHISPER_BASE}/ggml-medium.bin`,
    sha256: "6c14d5adee5f86394037b4e4e8b59f1673b6cee10e3cf0b11bbdbee79c156208",
    size: 1_533_763_059,
  },
  // The test model of ../shared/models (vocabulary, no weights): for `--from` only, never downloaded.
  "for-tests-ggml-tiny.bin": {
    url: undefined,
    sha256: "c486fb9f14a28b1c1dc252741a431646cc573450c900b9d9c406e10294aa01e6",
    size: 575_451,
  },
};

// The letter model (LOCAL_LLM_MODEL). No SHA-256 of Qwen's file could be verified from a source at hand, and
// none is made up here: a download needs `--sha256` with the value shown on the file's page at
// huggingface.co/Qwen/Qwen2.5-3B-Instruct-GGUF (Git LFS "SHA256"). `--from` copies it unverified.
const LLM_MODELS = {
  [DEFAULT_LLM]: { url: `${QWEN_BASE}/${DEFAULT_LLM}`, sha256: undefined, size: undefined },
  // The test model of ../shared/models (karpathy's stories260K as GGUF): for `--from` only, never downloaded.
  "stories260K.gguf": {
    url: undefined,
    sha256: "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d",
    size: 1_185_376,
  },
};

const VAD_MODEL = {
  url: "https://github.com/snakers4/silero-vad/raw/v6.2.1/src/silero_vad/data/silero_vad.onnx",
  sha256: "1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3",
  size: 2_327_524,
};

const USAGE = `Usage: npm run models -- [--only whisper|vad|llm] [--dir DIR] [--whisper FILE] [--llm FILE] [--sha256 HEX] [--from DIR]

  --only whisper|vad|llm  fetch only this model (default: all three)
  --dir DIR           target directory (default: $MODELS_DIR, else ./models)
  --whisper FILE      whisper.cpp model file name (default: $LOCAL_WHISPER_MODEL, else ggml-small.bin);
                      known: ${Object.keys(WHISPER_MODELS).join(", ")}
  --vad FILE          file name for the Silero VAD model (default: $LOCAL_VAD_MODEL, else silero_vad.onnx)
  --llm FILE          GGUF file name of the letter model (default: $LOCAL_LLM_MODEL, else ${DEFAULT_LLM});
                      downloadable: qwen2.5-3b-instruct-*.gguf from ${QWEN_BASE}/FILE
  --sha256 HEX        expected SHA-256 of the model being fetched that has no published checksum here: a whisper
                      model not listed above, or the letter model (REQUIRED to download ${DEFAULT_LLM};
                      take it from the file's page on huggingface.co). With --only, it is that model's checksum.
  --from DIR          copy the files from DIR (same names) instead of downloading them (also stories260K.gguf)
  --help              this text`;

class UsageError extends Error {}

function options() {
  const { values } = parseArgs({
    options: {
      only: { type: "string" },
      dir: { type: "string" },
      whisper: { type: "string" },
      vad: { type: "string" },
      llm: { type: "string" },
      sha256: { type: "string" },
      from: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.only && !["whisper", "vad", "llm"].includes(values.only))
    throw new UsageError(`--only takes "whisper", "vad" or "llm", not "${values.only}"`);
  if (values.sha256 && !/^[0-9a-f]{64}$/i.test(values.sha256))
    throw new UsageError("--sha256 takes 64 hexadecimal digits");
  return values;
}

/** What to fetch, where to, and what it must hash to. */
function plan(values) {
  const dir = path.resolve(values.dir ?? process.env.MODELS_DIR ?? "./models");
  const wants = (kind) => !values.only || values.only === kind;
  const jobs = [];
  if (wants("whisper")) {
    const name = values.whisper ?? process.env.LOCAL_WHISPER_MODEL ?? "ggml-small.bin";
    const known = WHISPER_MODELS[path.basename(name)];
    const url = known
      ? known.url
      : /^ggml-[\w.-]+\.bin$/.test(path.basename(name))
        ? `${WHISPER_BASE}/${path.basename(name)}`
        : undefined;
    jobs.push({
      kind: "whisper",
      label: "whisper.cpp model",
      target: path.resolve(dir, name),
      url,
      sha256: known?.sha256,
      size: known?.size,
    });
  }
  if (wants("vad")) {
    const name = values.vad ?? process.env.LOCAL_VAD_MODEL ?? "silero_vad.onnx";
    jobs.push({ kind: "vad", label: "Silero VAD model", target: path.resolve(dir, name), ...VAD_MODEL });
  }
  if (wants("llm")) {
    const name = values.llm ?? process.env.LOCAL_LLM_MODEL ?? DEFAULT_LLM;
    const known = LLM_MODELS[path.basename(name)];
    const url = known
      ? known.url
      : /^qwen2\.5-3b-instruct-[\w-]+\.gguf$/.test(path.basename(name))
        ? `${QWEN_BASE}/${path.basename(name)}`
        : undefined;
    jobs.push({
      kind: "llm",
      label: "language model",
      target: path.resolve(dir, name),
      url,
      sha256: known?.sha256,
      size: known?.size,
    });
  }
  if (values.sha256) {
    // --sha256 names the checksum of the one model it can mean: the only one asked for, or else the only one
    // without a published checksum.
    const unknown = jobs.filter((job) => !job.sha256);
    const job = jobs.length === 1 ? jobs[0] : unknown.length === 1 ? unknown[0] : undefined;
    if (!job)
      throw new UsageError(
        unknown.length === 0
          ? "--sha256: every model here has a published checksum; use --only to override one"
          : "--sha256 could mean more than one model: pick one with --only",
      );
    job.sha256 = values.sha256.toLowerCase();
  }
  return { dir, jobs };
}

async function sha256Of(file) {
  const hash = createHash("sha256");
  await pipeline(createReadStream(file), hash);
  return hash.digest("hex");
}

async function exists(file) {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

const MB = 1024 * 1024;

/** A progress bar on stderr: redrawn in place on a terminal, a line per 10 % in a log. */
function progress(label, total) {
  const started = Date.now();
  const tty = process.stderr.isTTY;
  let done = 0;
  let lastDraw = 0;
  let lastDecile = -1;
  function line() {
    const seconds = Math.max((Date.now() - started) / 1000, 0.001);
    const rate = done / seconds;
    const fraction = total ? Math.min(done / total, 1) : 0;
    const width = 30;
    const bar = total ? "#".repeat(Math.round(fraction * width)).padEnd(width, ".") : "?".repeat(width);
    const percent = total ? `${(fraction * 100).toFixed(1).padStart(5)}%` : "    ?%";
    const amount = `${(done / MB).toFixed(1)}${total ? `/${(total / MB).toFixed(1)}` : ""} MiB`;
    const eta = total && rate > 0 ? ` ETA ${Math.ceil((total - done) / rate)} s` : "";
    return `${label} [${bar}] ${percent} ${amount} ${(rate / MB).toFixed(1)} MiB/s${eta}`;
  }
  return {
    add(bytes) {
      done += bytes;
      const now = Date.now();
      if (tty && now - lastDraw > 100) {
        lastDraw = now;
        process.stderr.write(`\r${line()}\x1b[K`);
      } else if (!tty && total) {
        const decile = Math.floor((done / total) * 10);
        if (decile !== lastDecile) {
          lastDecile = decile;
          process.stderr.write(`${line()}\n`);
        }
      }
    },
    end() {
      if (tty) process.stderr.write(`\r${line()}\x1b[K\n`);
    },
  };
}

function describe(error) {
  const cause = error?.cause;
  const code = cause?.code ?? error?.code;
  const detail = cause?.message ?? error?.message ?? String(error);
  return code && !detail.includes(code) ? `${code}: ${detail}` : detail;
}

const IDLE_TIMEOUT_MS = 60_000;

async function download(job, part) {
  const controller = new AbortController();
  let idle = setTimeout(() => controller.abort(new Error(`no data for ${IDLE_TIMEOUT_MS / 1000} s`)), IDLE_TIMEOUT_MS);
  const host = new URL(job.url).host;
  let response;
  try {
    response = await fetch(job.url, {
      redirect: "follow",
      signal: controller.signal,
    });
  } catch (error) {
    clearTimeout(idle);
    throw new Error(
      `cannot reach ${host} (${describe(error)}). Check the network, or fetch ` +
        `${job.url} on another machine and run: npm run models -- --from <that directory>`,
    );
  }
  if (!response.ok || !response.body) {
    clearTimeout(idle);
    throw new Error(`${host} answered ${response.status} ${response.statusText} for ${job.url}`);
  }
  const length = Number(response.headers.get("content-length")) || job.size;
  const bar = progress(path.basename(job.target), length);
  const hash = createHash("sha256");
  let bytes = 0;
  const meter = new Transform({
    transform(chunk, _encoding, callback) {
      clearTimeout(idle);
      idle = setTimeout(() => controller.abort(new Error(`no data for ${IDLE_TIMEOUT_MS / 1000} s`)), IDLE_TIMEOUT_MS);
      hash.update(chunk);
      bytes += chunk.length;
      bar.add(chunk.length);
      callback(null, chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(response.body), meter, createWriteStream(part));
  } catch (error) {
    throw new Error(`the download from ${host} broke off after ${(bytes / MB).toFixed(1)} MiB (${describe(error)})`);
  } finally {
    clearTimeout(idle);
    bar.end();
  }
  return { sha256: hash.digest("hex"), bytes };
}

async function fetchModel(job, from) {
  const name = path.basename(job.target);
  if (await exists(job.target)) {
    if (!job.sha256) return `${name}: present (no published checksum to compare with)`;
    if ((await sha256Of(job.target)) === job.sha256) return `${name}: present, checksum OK`;
    process.stderr.write(`${name}: present but its checksum is wrong; fetching it again\n`);
  }
  const part = `${job.target}.part`;
  await rm(part, { force: true });
  let got;
  try {
    if (from) {
      const source = path.resolve(from, name);
      if (!(await exists(source))) throw new Error(`${source} does not exist`);
      await copyFile(source, part);
      await chmod(part, 0o644);
      got = { sha256: await sha256Of(part), bytes: (await stat(part)).size };
    } else {
      if (!job.url)
        throw new Error(`there is no download address for ${name}; copy it with --from <directory that holds it>`);
      if (!job.sha256)
        throw new Error(
          `no published checksum is known for ${name}: pass the SHA-256 from its page on huggingface.co ` +
            `(npm run models -- --only ${job.kind} --sha256 HEX), or copy it with --from`,
        );
      got = await download(job, part);
    }
    if (job.size && got.bytes !== job.size)
      throw new Error(`got ${got.bytes} bytes, expected ${job.size}: the file is incomplete or a different one`);
    if (job.sha256 && got.sha256 !== job.sha256)
      throw new Error(`checksum mismatch: got ${got.sha256}, expected ${job.sha256}`);
    await rename(part, job.target);
  } catch (error) {
    await rm(part, { force: true });
    throw error;
  }
  return job.sha256
    ? `${name}: ${from ? "copied" : "downloaded"}, checksum OK`
    : `${name}: copied, not verified (no published checksum; sha256 ${got.sha256})`;
}

async function main() {
  let values;
  try {
    values = options();
  } catch (error) {
    process.stderr.write(`${error.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let dir, jobs;
  try {
    ({ dir, jobs } = plan(values));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n\n${USAGE}\n`);
    return 2;
  }
  await mkdir(dir, { recursive: true });
  process.stderr.write(`Models directory: ${dir}\n`);
  let failed = 0;
  for (const job of jobs) {
    await mkdir(path.dirname(job.target), { recursive: true });
    try {
      process.stdout.write(`${await fetchModel(job, values.from)}\n`);
    } catch (error) {
      failed += 1;
      process.stderr.write(`✗ ${job.label} ${path.basename(job.target)}: ${error.message}\n`);
    }
  }
  if (failed) {
    process.stderr.write(
      `\n${failed} of ${jobs.length} model(s) are missing. The local engines report "not configured" until ` +
        "they are in place (or LOCAL_WHISPER_MODEL / LOCAL_VAD_MODEL / LOCAL_LLM_MODEL name other files).\n",
    );
    return 1;
  }
  return 0;
}

process.exitCode = await main();
