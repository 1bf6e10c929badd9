import { describe, expect, it } from "vitest";
import { judgeClamdVersion, MAX_SIGNATURE_AGE_HOURS } from "./antivirus.server";

// The health tile of the virus scanner says when its signatures have stopped being updated (ADR 0024).

// clamd's dates are its host's local time (judgeClamdVersion): so is "now", and the tests hold in any time zone.
const now = new Date(2026, 10, 27, 8, 0, 0);

describe("the virus scanner's health", () => {
  it("is healthy with signatures from the last days, and names engine, database and date", () => {
    const line = "ClamAV 1.4.6/27468/Thu Nov 26 09:28:02 2026";
    expect(judgeClamdVersion(line, now)).toEqual({ status: "healthy", detail: line });
  });

  it(`is an error once the signatures are older than ${MAX_SIGNATURE_AGE_HOURS} hours`, () => {
    expect(judgeClamdVersion("ClamAV 1.4.6/27460/Sun Nov 22 07:10:00 2026", now)).toEqual({
      status: "error",
      detail: "ClamAV 1.4.6/27460/Sun Nov 22 07:10:00 2026: signatures 5 days old (is freshclam running?)",
    });
  });

  it("reads clamd's date in the local time of the host it shares with the app (ctime names no zone)", () => {
    const zone = process.env.TZ;
    // Far from UTC, so a date read as UTC would be 13 hours off: 70.5 hours old looked 57.5, 72.5 looked 59.5.
    process.env.TZ = "Pacific/Auckland";
    try {
      const aucklandNow = new Date(2026, 10, 27, 8, 0, 0);
      expect(judgeClamdVersion("ClamAV 1.4.6/27466/Tue Nov 24 09:30:00 2026", aucklandNow).status).toBe("healthy");
      expect(judgeClamdVersion("ClamAV 1.4.6/27465/Tue Nov 24 07:30:00 2026", aucklandNow).status).toBe("error");
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it("says so when clamd has only local signatures (no official database, no date)", () => {
    expect(judgeClamdVersion("ClamAV 1.4.6", now)).toEqual({
      status: "healthy",
      detail: "ClamAV 1.4.6 (no official signature database)",
    });
  });
});
