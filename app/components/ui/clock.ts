// A time in a recording as people read it: "0:07", "12:30", "1:02:03" (whole seconds, rounded down, so a link that
// says 0:12 starts at or before what was said then). Anything not a time reads "0:00".

export function clock(seconds: number) {
  if (!Number.isFinite(seconds) || seconds < 0) return "0:00";
  const s = Math.floor(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${rest}` : `${m}:${rest}`;
}
