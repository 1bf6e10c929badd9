// SPEC §3: recordings are numbered 'Recording #n' by the timestamp inside their
// storage key (8 digits, dash, 6 digits); the oldest is #1.
const stamp = /(\d{8}-\d{6})/;

export function recordingNumbers(keys: string[]): Map<string, number> {
  const dated = keys
    .map((key, index) => ({ key, index, at: stamp.exec(key)?.[1] ?? "99999999-999999" }))
    .sort((a, b) => (a.at === b.at ? a.index - b.index : a.at < b.at ? -1 : 1));
  return new Map(dated.map((entry, i) => [entry.key, i + 1]));
}
