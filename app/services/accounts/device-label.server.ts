// Settings › "Aktive Sitzungen" names each session by a coarse device label, derived once at sign-in: which of a
// few well-known browsers and systems the User-Agent names, nothing else. The User-Agent itself (versions, build,
// device model, language) is close to identifying a person's machine and is never stored; what is kept is one of
// the fixed names below, so nothing the browser sent reaches the page.

// Order matters: most browsers also say "Chrome" or "Safari", so the ones that name themselves come first. Chrome,
// Brave and Vivaldi send the same token and show as Chrome; a Chromium build that says so shows as Chromium.
const BROWSERS: Array<[RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\//, "Edge"],
  [/\b(?:OPR|Opera)\//, "Opera"],
  [/\bSamsungBrowser\//, "Samsung Internet"],
  [/\b(?:Firefox|FxiOS)\//, "Firefox"],
  [/\bChromium\//, "Chromium"],
  [/\b(?:Chrome|CriOS|HeadlessChrome)\//, "Chrome"],
  [/\bVersion\/[\d.]+ (?:Mobile\/\w+ )?Safari\//, "Safari"],
];

// iPhones and Android phones also say "like Mac OS X" and "Linux": they come before macOS and Linux. An iPad
// since iPadOS 13 asks for desktop pages and says "Macintosh": it shows as macOS.
const SYSTEMS: Array<[RegExp, string]> = [
  [/\bWindows\b/, "Windows"],
  [/\b(?:iPhone|iPod)\b/, "iOS"],
  [/\biPad\b/, "iPadOS"],
  [/\bAndroid\b/, "Android"],
  [/\bCrOS\b/, "ChromeOS"],
  [/\bMacintosh\b|\bMac OS X\b/, "macOS"],
  [/\bLinux\b|\bX11\b/, "Linux"],
];

// Real User-Agents are a few hundred characters; the names are near the start.
const READ_AT_MOST = 512;

/** "Firefox · Windows", "Safari" or "Linux" alone when only one is known, null when neither is. */
export function deviceLabel(userAgent: string | null | undefined): string | null {
  const text = (userAgent ?? "").slice(0, READ_AT_MOST);
  const browser = BROWSERS.find(([pattern]) => pattern.test(text))?.[1];
  const system = SYSTEMS.find(([pattern]) => pattern.test(text))?.[1];
  return [browser, system].filter(Boolean).join(" · ") || null;
}
