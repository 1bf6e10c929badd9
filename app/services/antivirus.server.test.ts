import { describe, expect, it } from "vitest";
import { judgeClamdVersion, MAX_SIGNATURE_AGE_HOURS } from "./antivirus.server";

// The health tile of the virus scanner says when its signatures have stopped being updated (ADR 0024).

const now = new Date("2026-11-27T08:00:00Z");

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

  it("says so when clamd has only local signatures (no official database, no date)", () => {
    expect(judgeClamdVersion("ClamAV 1.4.6", now)).toEqual({
      status: "healthy",
      detail: "ClamAV 1.4.6 (no official signature database)",
    });
  });
});
