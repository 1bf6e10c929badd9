// The wording of the audio checks' messages (exact SPEC §5 text) and the size and duration
// formatting they use. Shared by the server's checks (media/probe.server.ts) and re-exported there.

/** SPEC §9: 70 MB. */
export const MAX_AUDIO_BYTES = 73_400_320;
const BYTES_PER_MB = 1024 * 1024;

export const EMPTY_FILE_MESSAGE = "Invalid audio data: Empty file" as const;

export function tooLargeMessage(size: number) {
  return `File is too large (${formatFileSize(size)}). Maximum size is ${formatFileSize(MAX_AUDIO_BYTES)}.`;
}

export function unsupportedTypeMessage(type: string) {
  return `File type "${type || "unknown"}" is not supported. Please upload only MP3, or WAV files.`;
}

export function notAudioTypeMessage(type: string) {
  return `Unsupported file type: ${type || "unknown"}. Please upload MP3 or WAV files.`;
}

/**
 * Durations in messages: H:MM:SS, the recording rounded to the nearest second
 * but always shown at least one second above the (whole-second) maximum, so
 * 3.03 s over a 2 s cap reads "0:00:03" and 4:00:00.4 over 4 h reads "4:00:01".
 */
export function tooLongMessage(durationSeconds: number, maxSeconds: number) {
  const max = Math.floor(maxSeconds);
  const shown = Math.max(Math.round(durationSeconds), max + 1);
  return `Recording is too long (${formatDuration(shown)}). Maximum length is ${formatDuration(max)}.`;
}

/**
 * Sizes in messages: binary megabytes (1 MB = 1,048,576 bytes) with one decimal,
 * rounded UP, and a trailing ".0" dropped — 73,400,320 → "70 MB", 73,400,321 →
 * "70.1 MB", 75,000,000 → "71.6 MB". Rounding up means a file over the limit can
 * never be shown as the limit itself.
 */
export function formatFileSize(bytes: number) {
  // bytes * 10 / 2^20 is exact in floating point, so the ceiling is too.
  const tenths = Math.ceil((Math.max(0, bytes) * 10) / BYTES_PER_MB);
  const whole = Math.floor(tenths / 10);
  const decimal = tenths % 10;
  return decimal === 0 ? `${whole} MB` : `${whole}.${decimal} MB`;
}

/** Whole seconds as H:MM:SS ("4:00:00", "0:00:03"). */
export function formatDuration(totalSeconds: number) {
  const s = Math.max(0, Math.floor(totalSeconds));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const seconds = s % 60;
  return `${hours}:${String(minutes).padStart(2, "0")}:${String(seconds).padStart(2, "0")}`;
}

// The messages above are the SPEC's English text (the JSON API answers them as
// they are); the screens translate them. Each one maps back to an i18n key in
// "recordings" and its values, so both languages say exactly the same thing.
const localisable: Array<[RegExp, string, string[]]> = [
  [/^Invalid audio data: Empty file$/, "recordings:errors.audioEmpty", []],
  [/^File is too large \((.+)\)\. Maximum size is (.+)\.$/, "recordings:errors.audioTooLarge", ["size", "maxFileSize"]],
  [
    /^File type "(.+)" is not supported\. Please upload only MP3, or WAV files\.$/,
    "recordings:errors.audioTypeNotSupported",
    ["type"],
  ],
  [/^Unsupported file type: (.+)\. Please upload MP3 or WAV files\.$/, "recordings:errors.unsupportedType", ["type"]],
  [
    /^Recording is too long \((.+)\)\. Maximum length is (.+)\.$/,
    "recordings:errors.audioTooLong",
    ["duration", "max"],
  ],
];

/** The i18n key and values of one of the messages above (a fallback key that passes the text through otherwise). */
export function localiseAudioMessage(message: string): { key: string; values: Record<string, string> } {
  for (const [pattern, key, names] of localisable) {
    const match = pattern.exec(message);
    if (match) return { key, values: Object.fromEntries(names.map((name, i) => [name, match[i + 1]])) };
  }
  return { key: "recordings:errors.audioRejected", values: { message } };
}
