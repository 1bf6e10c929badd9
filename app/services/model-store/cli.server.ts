import { mkdir } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { modelsConfig, type NeededModel } from "../config/engines.server";
import { ConfigError, parseEnv } from "../config/config.server";
import { PINNED_FILES, pinnedFile, type ModelRole } from "./catalogue";
import { copyVerified, downloadVerified, fileSize, ModelFetchError, type Pin } from "./fetch-file.server";
import { hubPin, hubUrl, knownPin, pinFirstSeen } from "./hub-pin.server";
import { formatBytes, progressLine, rateMeter } from "./progress-line";
import { verificationProblem } from "./verify.server";

// `npm run models` (scripts/models.mjs builds and runs this): fetches, ahead of time, the model files the configured
// engines need — the same files, pins and checks as the background download at start-up (downloads.server.ts).
// Exit code 0 when every requested file is in place and verified, 1 when one is not, 2 for a usage error.

const USAGE = `Usage: npm run models -- [--only speech|vad|speakers|letter] [--dir DIR] [--from DIR] [--list]

  --only ROLE   only these files: speech (recognition), vad, speakers (segmentation + embedding), letter
  --dir DIR     the models directory (default: $MODELS_DIR, else $DATA_DIR/models, else ./data/models)
  --from DIR    copy the files from DIR (same names, e.g. a share or a USB stick) instead of downloading;
                every copy is verified against its pin like a download
  --list        the catalogue: every known file with size, licence and SHA-256
  --help        this text

Which files: those of the configured engines (LOCAL_WHISPER_MODEL, LOCAL_VAD_MODEL, LOCAL_SEGMENTATION_MODEL,
LOCAL_SPEAKER_EMBEDDING_MODEL, LOCAL_LLM_MODEL). Downloads come from MODELS_URL (a clinic's mirror with the same
file names) when set, else from their public addresses. A model named as hf:owner/repo/file is pinned to the hub's
published SHA-256 on first fetch and recorded in models.lock.json beside the models.`;

const ROLES: Record<string, ModelRole[]> = {
  speech: ["speech"],
  whisper: ["speech"],
  vad: ["vad"],
  speakers: ["segmentation", "embedding"],
  letter: ["letter"],
  llm: ["letter"],
};

class UsageError extends Error {}

function options(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      only: { type: "string" },
      dir: { type: "string" },
      from: { type: "string" },
      list: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.only && !ROLES[values.only])
    throw new UsageError(`--only takes speech, vad, speakers or letter, not "${values.only}"`);
  return values;
}

function listCatalogue(write: (line: string) => void) {
  for (const file of PINNED_FILES)
    write(
      `${file.name}\n  ${file.label}; ${file.role}; ${formatBytes(file.size)}; ${file.licence}\n  sha256 ${file.sha256}`,
    );
}

/** A progress bar redrawn in place on a terminal, a line every 10 % in a log. */
function progressPrinter(name: string) {
  const tty = process.stderr.isTTY;
  const rate = rateMeter();
  let lastDecile = -1;
  let lastDraw = 0;
  return {
    update(done: number, total: number | undefined) {
      const line = progressLine({ name, done, total, bytesPerSecond: rate(done) });
      const now = Date.now();
      if (tty && now - lastDraw > 200) {
        lastDraw = now;
        process.stderr.write(`\r${line}\x1b[K`);
      } else if (!tty && total) {
        const decile = Math.floor((done / total) * 10);
        if (decile !== lastDecile) {
          lastDecile = decile;
          process.stderr.write(`${line}\n`);
        }
      }
    },
    end() {
      if (tty) process.stderr.write("\n");
    },
  };
}

const ATTEMPTS = 5;

async function fetchOne(
  model: NeededModel,
  settings: ReturnType<typeof modelsConfig>,
  from: string | undefined,
): Promise<string> {
  const { setting } = model;
  const target = setting.file;
  if ((await fileSize(target)) !== undefined) {
    const problem = await verificationProblem(target, settings.dir);
    if (!problem) return `${setting.name}: present, verified`;
    throw new Error(`${problem} — delete it and run this again`);
  }
  if (from) {
    const source = path.resolve(from, setting.name);
    const pin = await knownPin(settings.dir, target);
    if (pin) {
      await copyVerified({ source, target, pin });
      return `${setting.name}: copied from ${from}, verified`;
    }
    // Neither the catalogue nor the lock knows it: pinned now, so it must not change from here on.
    const { bytes, sha256 } = await copyVerified({ source, target });
    await pinFirstSeen(settings.dir, target, { sha256, size: bytes });
    return `${setting.name}: copied (${bytes} bytes; no published pin, its SHA-256 is now in the lock file)`;
  }
  const pin: Pin | undefined =
    (await knownPin(settings.dir, target)) ??
    (await hubPin({ modelsDir: settings.dir, setting, hubBase: settings.hubUrl }));
  if (!pin)
    throw new Error(
      `no pinned checksum is known for ${setting.name}: name a catalogue model (npm run models -- --list), a hub ` +
        "model as hf:owner/repo/file, or copy it with --from DIR",
    );
  const url = settings.mirrorUrl
    ? `${settings.mirrorUrl}/${encodeURIComponent(setting.name)}`
    : setting.hub
      ? hubUrl(setting.hub, settings.hubUrl)
      : pinnedFile(setting.name)?.url;
  if (!url) throw new Error(`there is no download address for ${setting.name}: set MODELS_URL or use --from DIR`);
  for (let attempt = 1; ; attempt++) {
    const bar = progressPrinter(setting.name);
    try {
      await downloadVerified({ url, target, pin, onProgress: bar.update });
      bar.end();
      return `${setting.name}: downloaded, verified (${formatBytes(pin.size ?? 0)})`;
    } catch (error) {
      bar.end();
      const retry = error instanceof ModelFetchError && error.kind !== "no_source" && attempt < ATTEMPTS;
      if (!retry) throw error;
      const wait = 2 ** attempt * 1000;
      process.stderr.write(
        `${setting.name}: ${(error as Error).message}; attempt ${attempt + 1} in ${wait / 1000} s\n`,
      );
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

export async function main(argv = process.argv.slice(2)): Promise<number> {
  let values: ReturnType<typeof options>;
  try {
    values = options(argv);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (values.list) {
    listCatalogue((line) => process.stdout.write(`${line}\n`));
    return 0;
  }
  let settings: ReturnType<typeof modelsConfig>;
  try {
    const env = parseEnv({ ...process.env, ...(values.dir ? { MODELS_DIR: values.dir } : {}) });
    // Ahead of time, everything the local engines could need, whichever engine is configured now.
    settings = modelsConfig({ ...env, SPEECH_ENGINE: "local", LLM_ENGINE: "local" });
  } catch (error) {
    process.stderr.write(`${error instanceof ConfigError ? error.message : String(error)}\n`);
    return 2;
  }
  const roles = values.only ? ROLES[values.only] : undefined;
  const wanted = settings.needed.filter((m) => !roles || roles.includes(m.role));
  process.stderr.write(`Models directory: ${settings.dir}\n`);
  await mkdir(settings.dir, { recursive: true });
  let failed = 0;
  for (const model of wanted) {
    try {
      process.stdout.write(`${await fetchOne(model, settings, values.from)}\n`);
    } catch (error) {
      failed += 1;
      process.stderr.write(`✗ ${model.setting.name}: ${(error as Error).message}\n`);
    }
  }
  if (failed) {
    process.stderr.write(
      `\n${failed} of ${wanted.length} model file(s) are not in place. Where this machine cannot reach the ` +
        "addresses: set MODELS_URL to your own mirror (same file names), or copy the files from a share with " +
        "`npm run models -- --from DIR` (docs/models.md).\n",
    );
    return 1;
  }
  return 0;
}
