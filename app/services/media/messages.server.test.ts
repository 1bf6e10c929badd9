import { describe, expect, test } from "vitest";

import { formatDuration, formatFileSize, tooLongMessage } from "./messages.server";

describe("formatFileSize and formatDuration", () => {
  test.each([
    [73_400_320, "70 MB"],
    [73_400_321, "70.1 MB"],
    [75_000_000, "71.6 MB"],
    [104_857_600, "100 MB"],
    [1_048_576 * 1.25, "1.3 MB"],
    [1, "0.1 MB"],
    [0, "0 MB"],
  ])("%d bytes → %s", (size, text) => {
    expect(formatFileSize(size)).toBe(text);
  });

  test.each([
    [0, "0:00:00"],
    [3, "0:00:03"],
    [61, "0:01:01"],
    [4 * 3600, "4:00:00"],
    [4 * 3600 + 1, "4:00:01"],
  ])("%d s → %s", (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
  });

  test.each([
    [3.03, 2, "Recording is too long (0:00:03). Maximum length is 0:00:02."],
    [2.2, 2, "Recording is too long (0:00:03). Maximum length is 0:00:02."],
    [4 * 3600 + 0.4, 4 * 3600, "Recording is too long (4:00:01). Maximum length is 4:00:00."],
    [5 * 3600 + 1799, 4 * 3600, "Recording is too long (5:29:59). Maximum length is 4:00:00."],
  ])("%d s over a %d s cap", (duration, max, message) => {
    expect(tooLongMessage(duration, max)).toBe(message);
  });
});
