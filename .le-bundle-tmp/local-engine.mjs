// app/services/speech/local-engine.server.ts
import { constants } from "node:fs";
import { access, open as open2, stat as stat2 } from "node:fs/promises";

// app/services/speech/local-native.server.ts
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";

// app/services/speech/types.ts
var SpeechEngineError = class extends Error {
  constructor(kind, message, options = {}) {
    super(message);
    this.kind = kind;
    this.options = options;
    this.name = "SpeechEngineError";
  }
};

// app/services/speech/local-native.server.ts
var require2 = createRequire(import.meta.url);
var SMART_WHISPER_ADVICE = 'smart-whisper compiles whisper.cpp during `npm install`; it needs g++, make and python3, and npm runs its install script only because package.json lists it under "allowScripts". Run `npm rebuild smart-whisper` (with CFLAGS="-mavx2 -mfma -mf16c" CXXFLAGS="-mavx2 -mfma -mf16c" for speed), or choose another SPEECH_ENGINE.';
function nativeError(message, cause) {
  return new SpeechEngineError("not_configured", message, {
    userMessageKey: "transcriptions:errors.engineNotConfigured",
    cause
  });
}
function smartWhisperAddonPath() {
  try {
    return path.join(path.dirname(require2.resolve("smart-whisper/package.json")), "build/Release/smart-whisper.node");
  } catch {
    return void 0;
  }
}
function sherpaPackageDir() {
  try {
    return path.dirname(require2.resolve("sherpa-onnx-node/package.json"));
  } catch {
    return void 0;
  }
}
function nativeModuleProblems() {
  const problems = [];
  const addon = smartWhisperAddonPath();
  if (!addon) problems.push("the npm package smart-whisper is not installed (run `npm install`)");
  else if (!existsSync(addon)) problems.push(`smart-whisper is installed but not compiled (${addon} is missing)`);
  if (!sherpaPackageDir()) problems.push("the npm package sherpa-onnx-node is not installed (run `npm install`)");
  return problems;
}
var whisperAddon;
function loadSmartWhisper() {
  if (whisperAddon) return whisperAddon;
  const file = smartWhisperAddonPath();
  if (!file) throw nativeError(`The npm package smart-whisper is not installed. Run \`npm install\`.`);
  if (!existsSync(file))
    throw nativeError(
      `smart-whisper is installed but whisper.cpp was not compiled (${file} is missing). ${SMART_WHISPER_ADVICE}`
    );
  try {
    whisperAddon = require2(file);
  } catch (error) {
    throw nativeError(
      `smart-whisper's native addon could not be loaded: ${error.message}. ${SMART_WHISPER_ADVICE}`,
      error
    );
  }
  return whisperAddon;
}
var sherpa;
function loadSherpaOnnx() {
  if (sherpa) return sherpa;
  try {
    const module = require2("sherpa-onnx-node");
    const addon = require2("sherpa-onnx-node/addon.js");
    sherpa = { module, addon };
    return sherpa;
  } catch (error) {
    throw nativeError(
      `sherpa-onnx-node could not be loaded: ${error.message.split("\n")[0]}. Run \`npm install\` (it brings a prebuilt library for linux-x64, linux-arm64, macOS and Windows), or choose another SPEECH_ENGINE.`,
      error
    );
  }
}
var PROBE_SOURCE = `
const [kind, mod, ...files] = process.argv.slice(1);
(async () => {
  const m = require(mod);
  if (kind === "whisper") {
    const model = await m.WhisperModel.load(files[0], false);
    await model.free();
  } else if (kind === "vad") {
    new m.Vad({ sileroVad: { model: files[0], threshold: 0.5, minSilenceDuration: 0.5, minSpeechDuration: 0.25,
      windowSize: 512, maxSpeechDuration: 20 }, sampleRate: 16000, numThreads: 1, debug: 0 }, 1);
  } else {
    new m.OfflineSpeakerDiarization({ segmentation: { pyannote: { model: files[0] }, numThreads: 1 },
      embedding: { model: files[1], numThreads: 1 }, clustering: { numClusters: -1, threshold: 0.5 } });
  }
  process.exit(0);
})().catch((error) => {
  process.stderr.write(String((error && error.message) || error));
  process.exit(3);
});
`;
var PROBE_TIMEOUT_MS = 12e4;
var probes = /* @__PURE__ */ new Map();
function lastLines(text) {
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => /error|fail|invalid|what\(\)|terminate|wrong|unknown|not /i.test(l));
  const picked = (lines.length ? lines : text.split("\n").filter(Boolean)).slice(-3).join(" | ");
  return picked.length > 400 ? `${picked.slice(0, 400)}\u2026` : picked;
}
function runProbe(kind, modulePath, files) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["-e", PROBE_SOURCE, "--", kind, modulePath, ...files], {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, NODE_OPTIONS: "" }
    });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      stderr = (stderr + chunk).slice(-2e4);
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), PROBE_TIMEOUT_MS);
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve(`could not start a check process: ${error.message}`);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve(void 0);
      const why = signal ? `the loader crashed (${signal})` : `the loader failed (exit ${code})`;
      const said = lastLines(stderr);
      resolve(said ? `${why}: ${said}` : why);
    });
  });
}
async function probeModels(kind, files) {
  const __t = performance.now(); try { return await probeModels0(kind, files); } finally { console.log("probe", kind, (performance.now()-__t).toFixed(0)); }
}
async function probeModels0(kind, files) {
  const stats = await Promise.all(files.map((f) => stat(f)));
  const key = [kind, ...files.map((f, i) => `${f}:${stats[i].size}:${stats[i].mtimeMs}`)].join("|");
  let probe = probes.get(key);
  if (!probe) {
    const modulePath = kind === "whisper" ? smartWhisperAddonPath() : require2.resolve("sherpa-onnx-node");
    if (!modulePath) return "smart-whisper is not installed";
    probe = runProbe(kind, modulePath, files);
    probes.set(key, probe);
  }
  return probe;
}

// app/services/speech/local-wav.server.ts
import { open } from "node:fs/promises";
import { endianness } from "node:os";
var SAMPLE_RATE = 16e3;
function badAudio(message, cause) {
  return new SpeechEngineError("permanent", `The normalised audio is not usable: ${message}`, { cause });
}
async function readAt(handle, position, length) {
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return buffer.subarray(0, done);
}
var WAVE_FORMAT_PCM = 1;
var WAVE_FORMAT_EXTENSIBLE = 65534;
async function readWavInfo(file) {
  let handle;
  try {
    handle = await open(file, "r");
  } catch (error) {
    throw badAudio(`cannot open ${file}`, error);
  }
  try {
    const { size } = await handle.stat();
    const head = await readAt(handle, 0, 12);
    if (head.length < 12 || head.toString("latin1", 0, 4) !== "RIFF" || head.toString("latin1", 8, 12) !== "WAVE")
      throw badAudio("not a RIFF/WAVE file");
    let position = 12;
    let format;
    while (position + 8 <= size) {
      const chunk = await readAt(handle, position, 8);
      const id = chunk.toString("latin1", 0, 4);
      const length = chunk.readUInt32LE(4);
      const body = position + 8;
      if (id === "fmt ") {
        const fmt = await readAt(handle, body, Math.min(length, 40));
        if (fmt.length < 16) throw badAudio("truncated fmt chunk");
        let tag = fmt.readUInt16LE(0);
        if (tag === WAVE_FORMAT_EXTENSIBLE && fmt.length >= 26) tag = fmt.readUInt16LE(24);
        format = { tag, channels: fmt.readUInt16LE(2), rate: fmt.readUInt32LE(4), bits: fmt.readUInt16LE(14) };
      } else if (id === "data") {
        if (!format) throw badAudio("data chunk before fmt chunk");
        if (format.tag !== WAVE_FORMAT_PCM || format.channels !== 1 || format.rate !== SAMPLE_RATE || format.bits !== 16)
          throw badAudio(
            `expected 16 kHz mono 16-bit PCM, got format ${format.tag}, ${format.channels} channel(s), ${format.rate} Hz, ${format.bits} bits`
          );
        const available = size - body;
        const bytes = length === 0 || length === 4294967295 || length > available ? available : length;
        const samples = Math.floor(bytes / 2);
        return { dataOffset: body, samples, seconds: samples / SAMPLE_RATE };
      }
      position = body + length + length % 2;
    }
    throw badAudio("no data chunk");
  } finally {
    await handle.close();
  }
}
var LITTLE_ENDIAN = endianness() === "LE";
function toFloat(bytes, into, at = 0) {
  const count = Math.floor(bytes.length / 2);
  if (LITTLE_ENDIAN && bytes.byteOffset % 2 === 0) {
    const pcm = new Int16Array(bytes.buffer, bytes.byteOffset, count);
    for (let i = 0; i < count; i++) into[at + i] = pcm[i] / 32768;
  } else {
    for (let i = 0; i < count; i++) into[at + i] = bytes.readInt16LE(i * 2) / 32768;
  }
  return count;
}
async function* readSampleChunks(file, info, chunkSamples) {
  const handle = await open(file, "r");
  try {
    for (let start = 0; start < info.samples; start += chunkSamples) {
      const count = Math.min(chunkSamples, info.samples - start);
      const bytes = await readAt(handle, info.dataOffset + start * 2, count * 2);
      const samples = new Float32Array(Math.floor(bytes.length / 2));
      toFloat(bytes, samples);
      yield { start, samples };
      if (bytes.length < count * 2) return;
    }
  } finally {
    await handle.close();
  }
}
async function readSampleRanges(file, info, ranges, gapSamples = 0) {
  const total = ranges.reduce((sum, r) => sum + (r.end - r.start), 0) + gapSamples * Math.max(0, ranges.length - 1);
  const out = new Float32Array(total);
  const handle = await open(file, "r");
  try {
    let at = 0;
    for (const [index, range] of ranges.entries()) {
      if (index > 0) at += gapSamples;
      const bytes = await readAt(handle, info.dataOffset + range.start * 2, (range.end - range.start) * 2);
      toFloat(bytes, out, at);
      at += range.end - range.start;
    }
  } finally {
    await handle.close();
  }
  return out;
}
async function readAllSamples(file, info) {
  return readSampleRanges(file, info, [{ start: 0, end: info.samples }]);
}

// app/services/speech/local-words.server.ts
var DEFAULT_SPEAKER = "S1";
var UNKNOWN_CONFIDENCE = 0.5;
var SPECIAL_TOKEN = /^(\[_[^\]]*\]|<\|[^|]*\|>)$/u;
var PUNCTUATION_RUN = /[.,?!;:…]+$/u;
var PUNCTUATION_ONLY = /^[\p{P}\p{S}]+$/u;
var SENTENCE_END = /[.?!]/u;
var ABBREVIATIONS = /* @__PURE__ */ new Set([
  "dr",
  "prof",
  "bzw",
  "ca",
  "evtl",
  "ggf",
  "usw",
  "vgl",
  "nr",
  "inkl",
  "sog",
  "str",
  "mrs",
  "mr",
  "etc",
  "vs"
]);
var LETTER_CHAIN = new RegExp("^(\\p{L}\\.)+\\p{L}?\\.?$", "u");
function windowToFileTime(pieces, seconds) {
  if (pieces.length === 0) return seconds;
  let piece = pieces[0];
  for (const candidate of pieces) {
    if (candidate.windowStart <= seconds) piece = candidate;
    else break;
  }
  const within = Math.min(Math.max(seconds - piece.windowStart, 0), piece.duration);
  return piece.fileStart + within;
}
function isAbbreviation(text) {
  if (!text.endsWith(".")) return false;
  const bare = text.slice(0, -1).toLocaleLowerCase("de");
  return ABBREVIATIONS.has(bare) || LETTER_CHAIN.test(text) && text.length <= 6;
}
function groupTokens(tokens) {
  const groups = [];
  for (const token of tokens) {
    const last = groups[groups.length - 1];
    if (!last || /^\s/u.test(token.text)) groups.push({ tokens: [token], text: token.text });
    else {
      last.tokens.push(token);
      last.text += token.text;
    }
  }
  return groups.filter((g) => g.text.trim() !== "");
}
function repairSpelling(groups, segmentText) {
  const repaired = groups.map(() => false);
  if (!groups.some((g) => g.text.includes("\uFFFD")) || segmentText.includes("\uFFFD")) return repaired;
  const chunks = segmentText.match(/\s*\S+/gu) ?? [];
  if (chunks.length !== groups.length) return repaired;
  groups.forEach((group, i) => {
    if (group.text.includes("\uFFFD")) {
      group.text = chunks[i];
      repaired[i] = true;
    }
  });
  return repaired;
}
function clamp01(value) {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : UNKNOWN_CONFIDENCE;
}
function minProbability(tokens) {
  return tokens.length ? clamp01(Math.min(...tokens.map((t) => t.p))) : UNKNOWN_CONFIDENCE;
}
function hasTimes(token) {
  return typeof token.from === "number" && typeof token.to === "number" && Number.isFinite(token.from) && Number.isFinite(token.to) && token.from >= 0 && token.to >= token.from;
}
function splitTokens(group, trimmedLead, cut, exact) {
  if (!exact) {
    let split = group.tokens.length;
    while (split > 1 && PUNCTUATION_ONLY.test(group.tokens[split - 1].text.trim())) split--;
    return { word: group.tokens.slice(0, split), rest: group.tokens.slice(split) };
  }
  const word = [];
  const rest = [];
  let at = -trimmedLead;
  for (const token of group.tokens) {
    const start = at;
    const end = at + token.text.length;
    at = end;
    if (end <= 0) continue;
    if (start < cut) word.push(token);
    if (end > cut) rest.push(token);
  }
  return { word, rest };
}
function wordsFromWhisper(segments, options = {}) {
  const speaker = options.speaker === void 0 ? DEFAULT_SPEAKER : options.speaker;
  const offset = options.offset ?? 0;
  const toFile = (ms) => options.pieces?.length ? windowToFileTime(options.pieces, ms / 1e3) : ms / 1e3 + offset;
  const out = [];
  let lastEnd = 0;
  for (const segment of segments) {
    const segFrom = Math.max(0, segment.from);
    const segTo = Math.max(segFrom, segment.to);
    const tokens = (segment.tokens ?? []).filter((t) => !SPECIAL_TOKEN.test(t.text.trim()) && t.text !== "");
    const groups = tokens.length ? groupTokens(tokens) : (segment.text.match(/\s*\S+/gu) ?? []).map((text) => ({ tokens: [], text }));
    if (groups.length === 0) continue;
    const repaired = repairSpelling(groups, segment.text);
    const timed = tokens.length > 0 && tokens.every(hasTimes);
    const totalChars = groups.reduce((sum, g) => sum + g.text.trim().length, 0) || 1;
    let cursor = segFrom;
    const spans = groups.map((group) => {
      if (timed && group.tokens.length) {
        const start = Math.min(Math.max(group.tokens[0].from, segFrom), segTo);
        const end = Math.min(Math.max(group.tokens[group.tokens.length - 1].to, start), segTo);
        return { start, end };
      }
      const share = (segTo - segFrom) * group.text.trim().length / totalChars;
      const span = { start: cursor, end: cursor + share };
      cursor += share;
      return span;
    });
    groups.forEach((group, index) => {
      const trimmed2 = group.text.trim();
      const lead = group.text.length - group.text.trimStart().length;
      const rawEnd = toFile(spans[index].end);
      const startSec = Math.max(toFile(spans[index].start), Math.min(lastEnd, rawEnd));
      const endSec = Math.max(startSec, rawEnd);
      if (PUNCTUATION_ONLY.test(trimmed2)) {
        const previous = out[out.length - 1];
        if (!previous || !PUNCTUATION_RUN.test(trimmed2)) return;
        const at = previous.end;
        out.push({
          text: trimmed2,
          start: at,
          end: at,
          confidence: minProbability(group.tokens),
          speaker,
          punctuation: true,
          ...SENTENCE_END.test(trimmed2) ? { endOfSentence: true } : {}
        });
        return;
      }
      const run = isAbbreviation(trimmed2) ? "" : PUNCTUATION_RUN.exec(trimmed2)?.[0] ?? "";
      const wordText = trimmed2.slice(0, trimmed2.length - run.length);
      const exact = !repaired[index] && group.tokens.map((t) => t.text).join("") === group.text;
      const { word, rest } = run ? splitTokens(group, lead, wordText.length, exact) : { word: group.tokens, rest: [] };
      let wordEnd = endSec;
      if (timed && run && word.length && rest.length && hasTimes(word[word.length - 1])) {
        const letterEnd = Math.min(Math.max(word[word.length - 1].to, spans[index].start), spans[index].end);
        wordEnd = Math.max(startSec, toFile(letterEnd));
      }
      out.push({ text: wordText, start: startSec, end: wordEnd, confidence: minProbability(word), speaker });
      lastEnd = wordEnd;
      if (run) {
        out.push({
          text: run,
          start: wordEnd,
          end: wordEnd,
          confidence: minProbability(rest.length ? rest : word),
          speaker,
          punctuation: true,
          ...SENTENCE_END.test(run) ? { endOfSentence: true } : {}
        });
      }
    });
  }
  return out;
}
function assignSpeakers(words, turns) {
  if (turns.length === 0) return words;
  const sorted = [...turns].sort((a, b) => a.start - b.start);
  const labels = /* @__PURE__ */ new Map();
  for (const turn of sorted) if (!labels.has(turn.speaker)) labels.set(turn.speaker, `S${labels.size + 1}`);
  let previous = DEFAULT_SPEAKER;
  return words.map((word) => {
    if (word.punctuation) return { ...word, speaker: previous };
    let best;
    let bestScore = -Infinity;
    const middle = (word.start + word.end) / 2;
    for (const turn of sorted) {
      const overlap = Math.min(word.end, turn.end) - Math.max(word.start, turn.start);
      const distance = middle < turn.start ? turn.start - middle : middle > turn.end ? middle - turn.end : 0;
      const score = overlap > 0 ? overlap : -distance - 1e-9;
      if (score > bestScore) {
        bestScore = score;
        best = turn;
      }
    }
    previous = best ? labels.get(best.speaker) : DEFAULT_SPEAKER;
    return { ...word, speaker: previous };
  });
}

// app/services/speech/vocabulary.server.ts
import path2 from "node:path";
import { z } from "zod";
var VOCABULARY_FILE = path2.resolve(process.cwd(), "app/data/vocabulary/de-medical.json");
var VOCABULARY_LIMITS = { contentMax: 60, soundsLikeMax: 60, soundsLikePerEntry: 3 };
var vocabularyDomains = ["cardiology", "urology"];
var trimmed = (max) => z.string().min(1).max(max).refine((value) => value === value.trim(), "must not start or end with white space");
var entrySchema = z.object({
  content: trimmed(VOCABULARY_LIMITS.contentMax),
  sounds_like: z.array(trimmed(VOCABULARY_LIMITS.soundsLikeMax)).min(1).max(VOCABULARY_LIMITS.soundsLikePerEntry),
  domain: z.enum(vocabularyDomains)
}).strict();
var fileSchema = z.object({
  version: z.literal(1),
  language: z.literal("de"),
  entries: z.array(entrySchema).min(1)
}).strict().superRefine((file, ctx) => {
  const seen = /* @__PURE__ */ new Map();
  file.entries.forEach((entry, index) => {
    const key = entry.content.toLocaleLowerCase("de");
    const first = seen.get(key);
    if (first === void 0) seen.set(key, index);
    else {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ["entries", index, "content"],
        message: `duplicate of entries[${first}] ("${entry.content}")`
      });
    }
  });
});
var WHISPER_PROMPT_MAX_CHARS = 500;
function whisperPrompt(entries, maxWords = 180, maxChars = WHISPER_PROMPT_MAX_CHARS) {
  const terms = [];
  let words = 0;
  let chars = 0;
  for (const { content } of entries) {
    const term = content.trim();
    if (!term) continue;
    const termWords = term.split(/\s+/).length;
    const termChars = term.length + (terms.length > 0 ? 2 : 0);
    if (words + termWords > maxWords || chars + termChars > maxChars) break;
    terms.push(term);
    words += termWords;
    chars += termChars;
  }
  return terms.join(", ");
}

// app/services/speech/local-engine.server.ts
var VAD_CONFIG = {
  threshold: 0.5,
  minSilenceDuration: 0.5,
  minSpeechDuration: 0.25,
  windowSize: 512,
  // Longer speech is cut (sherpa-onnx raises the threshold until it finds a pause), so a stretch fits a window.
  maxSpeechDuration: 20
};
var VAD_BUFFER_SECONDS = 60;
var VAD_SLICE_SAMPLES = 4 * SAMPLE_RATE;
var READ_CHUNK_SAMPLES = 32 * SAMPLE_RATE;
var PAD_SAMPLES = Math.round(0.2 * SAMPLE_RATE);
var GAP_SAMPLES = Math.round(0.1 * SAMPLE_RATE);
var WINDOW_MAX_SAMPLES = 28 * SAMPLE_RATE;
var DIARIZATION_THRESHOLD = 0.5;
var DEFAULT_IDLE_UNLOAD_MS = 10 * 6e4;
var GGML_MAGIC = 1734831468;
var ONNX_FIRST_BYTE = 8;
function modelFiles(config) {
  const files = [
    { role: "whisper model", variable: "LOCAL_WHISPER_MODEL", file: config.whisperModel, kind: "ggml" },
    { role: "VAD model", variable: "LOCAL_VAD_MODEL", file: config.vadModel, kind: "onnx" }
  ];
  if (config.segmentationModel)
    files.push({
      role: "speaker segmentation model",
      variable: "LOCAL_SEGMENTATION_MODEL",
      file: config.segmentationModel,
      kind: "onnx"
    });
  if (config.embeddingModel)
    files.push({
      role: "speaker embedding model",
      variable: "LOCAL_SPEAKER_EMBEDDING_MODEL",
      file: config.embeddingModel,
      kind: "onnx"
    });
  return files;
}
async function fileProblem(model) {
  const where = `${model.role} ${model.file} (${model.variable})`;
  try {
    const info = await stat2(model.file);
    if (!info.isFile()) return `${where} is not a file`;
    if (info.size < 4) return `${where} is empty`;
    await access(model.file, constants.R_OK);
  } catch (error) {
    return error.code === "ENOENT" ? `${where} is missing` : `${where} is not readable`;
  }
  const handle = await open2(model.file, "r");
  try {
    const head = Buffer.alloc(4);
    await handle.read(head, 0, 4, 0);
    if (model.kind === "ggml" && head.readUInt32LE(0) !== GGML_MAGIC)
      return `${where} is not a whisper.cpp (ggml) model`;
    if (model.kind === "onnx" && head[0] !== ONNX_FIRST_BYTE) return `${where} is not an ONNX model`;
  } finally {
    await handle.close();
  }
  return void 0;
}
async function modelProblems(config) {
  const problems = await Promise.all(modelFiles(config).map(fileProblem));
  return problems.filter((p) => p !== void 0);
}
var MODELS_ADVICE = "Run `npm run models` (it downloads ggml-small.bin and silero_vad.onnx into MODELS_DIR) or set LOCAL_WHISPER_MODEL and LOCAL_VAD_MODEL to existing model files (LOCAL_SEGMENTATION_MODEL and LOCAL_SPEAKER_EMBEDDING_MODEL add speaker separation).";
function modelsError(problems) {
  return new SpeechEngineError(
    "not_configured",
    `The local speech engine cannot use its models: ${problems.join("; ")}. ${MODELS_ADVICE}`,
    { userMessageKey: "transcriptions:errors.modelsMissing" }
  );
}
function diarizationEnabled(config) {
  return Boolean(config.segmentationModel && config.embeddingModel);
}
var yieldToEventLoop = () => new Promise((resolve) => setImmediate(resolve));
async function detectSpeech(sherpa2, vadModel, file, info, signal) {
  const vad = new sherpa2.Vad(
    { sileroVad: { model: vadModel, ...VAD_CONFIG }, sampleRate: SAMPLE_RATE, numThreads: 1, debug: 0 },
    VAD_BUFFER_SECONDS
  );
  const speech = [];
  const drain = () => {
    while (!vad.isEmpty()) {
      const segment = vad.front(false);
      speech.push({ start: segment.start, end: segment.start + segment.samples.length });
      vad.pop();
    }
  };
  const step = VAD_CONFIG.windowSize;
  for await (const chunk of readSampleChunks(file, info, READ_CHUNK_SAMPLES)) {
    for (let slice = 0; slice < chunk.samples.length; slice += VAD_SLICE_SAMPLES) {
      signal?.throwIfAborted();
      const end = Math.min(slice + VAD_SLICE_SAMPLES, chunk.samples.length);
      for (let at = slice; at < end; at += step)
        vad.acceptWaveform(chunk.samples.subarray(at, Math.min(at + step, end)));
      drain();
      await yieldToEventLoop();
    }
  }
  vad.flush();
  drain();
  return speech;
}
async function findSpeech(vadModel, file, signal) {
  const problem = await fileProblem({ role: "VAD model", variable: "LOCAL_VAD_MODEL", file: vadModel, kind: "onnx" });
  if (problem) throw modelsError([problem]);
  const { module } = loadSherpaOnnx();
  const failed = await probeModels("vad", [vadModel]);
  if (failed) throw modelsError([`VAD model ${vadModel} cannot be loaded: ${failed}`]);
  const info = await readWavInfo(file);
  const speech = await detectSpeech(module, vadModel, file, info, signal);
  return speech.map((r) => ({ start: r.start / SAMPLE_RATE, end: r.end / SAMPLE_RATE }));
}
function planWindows(speech, totalSamples) {
  const padded = [];
  for (const range of [...speech].sort((a, b) => a.start - b.start)) {
    const start = Math.max(0, range.start - PAD_SAMPLES);
    const end = Math.min(totalSamples, range.end + PAD_SAMPLES);
    if (end <= start) continue;
    const last = padded[padded.length - 1];
    if (last && start <= last.end) {
      if (end <= last.end) continue;
      if (end - last.start <= WINDOW_MAX_SAMPLES) last.end = end;
      else padded.push({ start: last.end, end });
    } else padded.push({ start, end });
  }
  const windows = [];
  let current;
  let used = 0;
  for (const range of padded) {
    const length = range.end - range.start;
    if (!current || used + GAP_SAMPLES + length > WINDOW_MAX_SAMPLES) {
      current = { ranges: [], pieces: [] };
      windows.push(current);
      used = 0;
    }
    const windowStart = current.ranges.length ? used + GAP_SAMPLES : 0;
    current.ranges.push(range);
    current.pieces.push({
      windowStart: windowStart / SAMPLE_RATE,
      fileStart: range.start / SAMPLE_RATE,
      duration: length / SAMPLE_RATE
    });
    used = windowStart + length;
  }
  return windows;
}
function runWhisper(addon, model, pcm, params) {
  const __t = performance.now(); console.log("window", (pcm.length/16000).toFixed(2));
  return runWhisper0(addon, model, pcm, params).finally(() => console.log("whisper ms", (performance.now()-__t).toFixed(0)));
}
function runWhisper0(addon, model, pcm, params) {
  return new Promise((resolve, reject) => {
    const fail = (detail, cause) => reject(new SpeechEngineError("permanent", `whisper.cpp failed: ${detail}`, { cause }));
    try {
      addon.transcribe(
        model.handle,
        pcm,
        params,
        (result) => {
          if (Array.isArray(result)) resolve(result);
          else fail(result instanceof Error ? result.message : String(result), result);
        },
        () => {
        }
      );
    } catch (error) {
      fail(error.message, error);
    }
  });
}
function createLocalSpeechEngine(config, options = {}) {
  const idleUnloadMs = options.idleUnloadMs ?? DEFAULT_IDLE_UNLOAD_MS;
  const threads = Math.max(1, Math.floor(config.threads));
  let model;
  let idleTimer;
  let diarizer;
  let lane = Promise.resolve();
  function exclusive(task) {
    const run = lane.then(task, task);
    lane = run.catch(() => void 0);
    return run;
  }
  async function freeModel() {
    const current = model;
    model = void 0;
    if (current && !current.freed) await current.free();
  }
  function scheduleUnload() {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => void exclusive(freeModel).catch(() => void 0), idleUnloadMs);
    idleTimer.unref();
  }
  async function whisperModel(addon) {
    if (model && !model.freed) return model;
    const failed = await probeModels("whisper", [config.whisperModel]);
    if (failed) throw modelsError([`whisper model ${config.whisperModel} cannot be loaded: ${failed}`]);
    try {
      model = await addon.WhisperModel.load(config.whisperModel, false);
    } catch (error) {
      throw modelsError([`whisper model ${config.whisperModel} cannot be loaded: ${error.message}`]);
    }
    return model;
  }
  async function diarize(sherpa2, file, info) {
    const files = [config.segmentationModel, config.embeddingModel];
    const failed = await probeModels("diarization", files);
    if (failed) throw modelsError([`speaker models ${files.join(", ")} cannot be loaded: ${failed}`]);
    diarizer ??= new sherpa2.module.OfflineSpeakerDiarization({
      segmentation: { pyannote: { model: files[0] }, numThreads: threads },
      embedding: { model: files[1], numThreads: threads },
      clustering: { numClusters: -1, threshold: DIARIZATION_THRESHOLD },
      minDurationOn: 0.3,
      minDurationOff: 0.5
    });
    const samples = await readAllSamples(file, info);
    const run = sherpa2.addon.offlineSpeakerDiarizationProcessAsync;
    const segments = run ? await run(diarizer.handle, samples, () => 0) : diarizer.process(samples);
    return segments.map((s) => ({ start: s.start, end: s.end, speaker: s.speaker }));
  }
  return {
    name: "local",
    async transcribe(request) {
      const { signal } = request;
      signal?.throwIfAborted();
      const problems = await modelProblems(config);
      if (problems.length) throw modelsError(problems);
      const info = await readWavInfo(request.file);
      const sherpa2 = loadSherpaOnnx();
      const addon = loadSmartWhisper();
      const vadFailed = await probeModels("vad", [config.vadModel]);
      if (vadFailed) throw modelsError([`VAD model ${config.vadModel} cannot be loaded: ${vadFailed}`]);
      const speech = await detectSpeech(sherpa2.module, config.vadModel, request.file, info, signal);
      const result = { engine: "local", language: request.language, audioSeconds: info.seconds };
      if (speech.length === 0) return { ...result, words: [] };
      const prompt = whisperPrompt(request.vocabulary);
      const params = {
        language: request.language,
        n_threads: threads,
        format: "detail",
        token_timestamps: true,
        strategy: 1,
        beam_size: 5,
        temperature: 0,
        no_context: true,
        suppress_non_speech_tokens: true,
        print_progress: false,
        print_realtime: false,
        print_timestamps: false,
        print_special: false,
        ...prompt ? { initial_prompt: prompt } : {}
      };
      let words = [];
      for (const window of planWindows(speech, info.samples)) {
        signal?.throwIfAborted();
        const pcm = await readSampleRanges(request.file, info, window.ranges, GAP_SAMPLES);
        const segments = await exclusive(async () => {
          clearTimeout(idleTimer);
          try {
            return await runWhisper(addon, await whisperModel(addon), pcm, params);
          } finally {
            scheduleUnload();
          }
        });
        words.push(...wordsFromWhisper(segments, { pieces: window.pieces }));
      }
      if (words.length > 0 && diarizationEnabled(config)) {
        signal?.throwIfAborted();
        words = assignSpeakers(words, await diarize(sherpa2, request.file, info));
      }
      signal?.throwIfAborted();
      return { ...result, words };
    },
    async check() {
      const problems = [...await modelProblems(config), ...nativeModuleProblems()];
      if (problems.length) {
        return { status: "not_configured", detail: `${problems.join("; ")}. ${MODELS_ADVICE}` };
      }
      if (!diarizationEnabled(config) && (config.segmentationModel || config.embeddingModel))
        return {
          status: "healthy",
          detail: "speaker separation is off: it needs both LOCAL_SEGMENTATION_MODEL and LOCAL_SPEAKER_EMBEDDING_MODEL"
        };
      return { status: "healthy" };
    },
    unload() {
      clearTimeout(idleTimer);
      return exclusive(freeModel);
    }
  };
}
export {
  MODELS_ADVICE,
  SAMPLE_RATE,
  assignSpeakers,
  createLocalSpeechEngine,
  findSpeech,
  planWindows,
  wordsFromWhisper
};
