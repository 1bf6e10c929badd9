// How a download reads in the terminal (issue 21: "a progress line per file with size, speed and time left"), the
// same for the background download at start-up and `npm run models`.

const MIB = 1024 * 1024;

export function formatBytes(bytes: number) {
  if (bytes >= 1024 * MIB) return `${(bytes / 1024 / MIB).toFixed(2)} GiB`;
  // A slow rural link's speed reads in KiB, not as "0.0 MiB/s".
  if (bytes > 0 && bytes < 0.1 * MIB) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / MIB).toFixed(1)} MiB`;
}

export function formatSeconds(seconds: number) {
  if (!Number.isFinite(seconds) || seconds < 0) return "?";
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** "ggml-small.bin  43.2 %  200.1 MiB of 465.0 MiB  12.3 MiB/s  21 s left" */
export function progressLine(args: { name: string; done: number; total?: number; bytesPerSecond: number }) {
  const { name, done, total, bytesPerSecond } = args;
  const percent = total ? `${((done / total) * 100).toFixed(1)} %` : "? %";
  const amount = total ? `${formatBytes(done)} of ${formatBytes(total)}` : formatBytes(done);
  const speed = `${formatBytes(bytesPerSecond)}/s`;
  const left =
    total && bytesPerSecond > 0 ? `${formatSeconds((total - done) / bytesPerSecond)} left` : "time left unknown";
  return `${name}  ${percent}  ${amount}  ${speed}  ${left}`;
}

/** Bytes per second over the last few seconds, so a stall shows at once rather than averaged away. */
export function rateMeter(windowMs = 5000, startBytes = 0) {
  // Seeded with the start, so the first chunks (often a burst) do not read as a huge speed.
  const samples: Array<{ at: number; bytes: number }> = [{ at: Date.now(), bytes: startBytes }];
  return (bytes: number, at = Date.now()) => {
    samples.push({ at, bytes });
    while (samples.length > 2 && at - samples[0].at > windowMs) samples.shift();
    const first = samples[0];
    const seconds = (at - first.at) / 1000;
    return seconds > 0 ? Math.max(0, (bytes - first.bytes) / seconds) : 0;
  };
}
