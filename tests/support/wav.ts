// In-memory 16 kHz mono 16-bit PCM WAVs for tests that need bytes rather than files.

const RATE = 16_000;

function wavOf(data: Buffer): Buffer {
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(36 + data.length, 4);
  header.write("WAVEfmt ", 8, "ascii");
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(RATE, 24);
  header.writeUInt32LE(RATE * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write("data", 36, "ascii");
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

/** Deterministic noise (a linear congruential generator), `seconds` long. */
export function noiseWav(seconds: number): Buffer {
  const data = Buffer.alloc(seconds * RATE * 2);
  let x = 12_345;
  for (let i = 0; i < data.length; i += 2) {
    x = (x * 1_103_515_245 + 12_345) & 0x7fffffff;
    data.writeInt16LE((x >> 16) - 16_384, i);
  }
  return wavOf(data);
}

/** A 440 Hz tone, `seconds` long. */
export function toneWav(seconds: number): Buffer {
  const data = Buffer.alloc(RATE * seconds * 2);
  for (let i = 0; i < RATE * seconds; i++)
    data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / RATE)), i * 2);
  return wavOf(data);
}
