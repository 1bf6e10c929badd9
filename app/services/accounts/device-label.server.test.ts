import { describe, expect, it } from "vitest";
import { deviceLabel } from "./device-label.server";

// Real User-Agent strings of the browsers clinics use, and the label each gets.
const AGENTS: Array<[string | null, string | null]> = [
  ["Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0", "Firefox · Windows"],
  [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
    "Chrome · Windows",
  ],
  [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.2592.68",
    "Edge · Windows",
  ],
  [
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Ubuntu Chromium/83.0.4103.61 Chrome/83.0.4103.61 Safari/537.36",
    "Chromium · Linux",
  ],
  ["Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0", "Firefox · Linux"],
  [
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36",
    "Chrome · Linux",
  ],
  [
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
    "Safari · macOS",
  ],
  [
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
    "Safari · iOS",
  ],
  [
    "Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0.6478.54 Mobile/15E148 Safari/604.1",
    "Chrome · iPadOS",
  ],
  [
    "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36",
    "Samsung Internet · Android",
  ],
  [
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36 OPR/82.0.0.0",
    "Opera · Android",
  ],
  [
    "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
    "Chrome · ChromeOS",
  ],
  // Only what is known; nothing for a client that names neither.
  ["Mozilla/5.0 (Windows NT 10.0; Win64; x64) SomeKioskShell/2.1", "Windows"],
  ["curl/8.5.0", null],
  ["", null],
  [null, null],
];

describe("the device label of a session", () => {
  it.each(AGENTS)("%s → %s", (agent, label) => {
    expect(deviceLabel(agent)).toBe(label);
  });

  it("is one of a few fixed names: nothing the browser sent (versions, model, language) is kept", () => {
    const agent =
      "Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; de-de) AppleWebKit/537.36 " +
      "(KHTML, like Gecko) Version/4.0 Chrome/121.0.6167.178 Mobile Safari/537.36 <script>alert(1)</script>";
    expect(deviceLabel(agent)).toBe("Chrome · Android");
    expect(deviceLabel(`${"x".repeat(600)} Firefox/128.0 (Windows)`)).toBeNull();
  });
});
