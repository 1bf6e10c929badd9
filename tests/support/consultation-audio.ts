import { execFile } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

// Two-voice test speech for speaker separation, made at test time with Debian's espeak-ng and sox (CI installs
// both; nothing binary is committed). The doctor speaks with espeak-ng's German male voice at a low pitch, the
// patient with its female voice at a high pitch, so a model that listens for pitch can tell them apart.
//
//   const consultation = await makeConsultationWav(dir); // 4 turns: doctor, patient, doctor, patient
//   const dictation = await makeDictationWav(dir);       // the doctor alone, several sentences
//   const silence = await makeSilenceWav(dir, 5);        // 5 s of digital silence (a path only)
//
// Each returns the WAV (16 kHz, mono, 16-bit PCM, what the normaliser hands the engines) and the script: who
// speaks when, in seconds, measured on the samples (espeak-ng's own leading and trailing silence cut off).

const run = promisify(execFile);
const RATE = 16_000;

export const VOICES = {
  doctor: ["-v", "de+m3", "-p", "20"],
  patient: ["-v", "de+f4", "-p", "80"],
} as const;

export type Role = keyof typeof VOICES;
export type ScriptTurn = { role: Role; text: string; start: number; end: number };
export type ScriptedWav = { file: string; seconds: number; turns: ScriptTurn[] };

export const CONSULTATION: Array<{ role: Role; text: string }> = [
  { role: "doctor", text: "Guten Tag, Frau Becker. Was führt Sie heute zu mir?" },
  { role: "patient", text: "Ich habe seit drei Tagen starke Kopfschmerzen und etwas Fieber." },
  { role: "doctor", text: "Haben Sie schon Medikamente genommen? Wie hoch war das Fieber?" },
  { role: "patient", text: "Ich habe zweimal Ibuprofen genommen. Gestern Abend waren es achtunddreißig Grad." },
];

export const DICTATION: Array<{ role: Role; text: string }> = [
  {
    role: "doctor",
    text:
      "Befund: Patientin mit Kopfschmerzen seit drei Tagen. Temperatur achtunddreißig Grad. Neurologisch " +
      "unauffällig. Empfehlung: Ibuprofen bei Bedarf, Wiedervorstellung in einer Woche.",
  },
];

/** Seconds of silence before the first turn, between turns, and after the last. */
export const LEAD_SECONDS = 0.5;
export const PAUSE_SECONDS = 1.5;

let counter = 0;

async function tool(program: string, args: string[]) {
  try {
    await run(program, args, { timeout: 60_000 });
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(`${program} failed (is it installed? CI installs sox and espeak-ng): ${stderr || message}`);
  }
}

/** One utterance as 16 kHz mono 16-bit samples, without espeak-ng's silence around it. */
async function speak(dir: string, role: Role, text: string): Promise<Int16Array> {
  counter += 1;
  const raw = path.join(dir, `turn-${process.pid}-${counter}.espeak.wav`);
  const converted = path.join(dir, `turn-${process.pid}-${counter}.wav`);
  await tool("espeak-ng", [...VOICES[role], "-w", raw, "--", text]);
  await tool("sox", [raw, "-r", String(RATE), "-c", "1", "-b", "16", "-e", "signed-integer", converted]);
  const bytes = await readFile(converted);
  await Promise.all([rm(raw, { force: true }), rm(converted, { force: true })]);
  const samples = pcmOf(bytes);
  // -50 dBFS: above sox's dither, below any speech.
  const loud = (v: number) => Math.abs(v) > 100;
  const first = samples.findIndex(loud);
  let last = samples.length - 1;
  while (last > first && !loud(samples[last])) last--;
  if (first < 0) throw new Error(`espeak-ng produced no sound for "${text}"`);
  return samples.slice(first, last + 1);
}

/** The samples of a 16-bit PCM WAV's data chunk. */
function pcmOf(wav: Buffer): Int16Array {
  let at = 12;
  while (at + 8 <= wav.length) {
    const size = wav.readUInt32LE(at + 4);
    if (wav.toString("latin1", at, at + 4) === "data") {
      const data = wav.subarray(at + 8, Math.min(wav.length, at + 8 + size));
      return new Int16Array(data.buffer.slice(data.byteOffset, data.byteOffset + (data.length & ~1)));
    }
    at += 8 + size + (size % 2);
  }
  throw new Error("sox wrote a WAV without a data chunk");
}

function wavHeader(dataBytes: number): Buffer {
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write("WAVEfmt ", 8, "ascii");
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(RATE, 24);
  header.writeUInt32LE(RATE * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write("data", 36, "ascii");
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/** The utterances one after another, LEAD_SECONDS of silence around them and PAUSE_SECONDS between. */
export async function makeScriptedWav(
  dir: string,
  script: Array<{ role: Role; text: string }>,
  name: string,
): Promise<ScriptedWav> {
  const spoken = await Promise.all(script.map((line) => speak(dir, line.role, line.text)));
  const lead = Math.round(LEAD_SECONDS * RATE);
  const pause = Math.round(PAUSE_SECONDS * RATE);
  const total = lead * 2 + spoken.reduce((n, s) => n + s.length, 0) + pause * (spoken.length - 1);
  const pcm = new Int16Array(total);
  const turns: ScriptTurn[] = [];
  let at = lead;
  spoken.forEach((samples, i) => {
    pcm.set(samples, at);
    turns.push({ ...script[i], start: at / RATE, end: (at + samples.length) / RATE });
    at += samples.length + pause;
  });
  const data = Buffer.from(pcm.buffer);
  const file = path.resolve(dir, name);
  await writeFile(file, Buffer.concat([wavHeader(data.length), data]));
  return { file, seconds: total / RATE, turns };
}

/** `seconds` of digital silence. */
export async function makeSilenceWav(dir: string, seconds: number, name = `silence-${process.pid}.wav`) {
  const file = path.resolve(dir, name);
  const bytes = Math.round(seconds * RATE) * 2;
  await writeFile(file, Buffer.concat([wavHeader(bytes), Buffer.alloc(bytes)]));
  return file;
}

export function makeConsultationWav(dir: string, name = `consultation-${process.pid}.wav`) {
  return makeScriptedWav(dir, CONSULTATION, name);
}

export function makeDictationWav(dir: string, name = `dictation-${process.pid}.wav`) {
  return makeScriptedWav(dir, DICTATION, name);
}
