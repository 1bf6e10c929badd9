import { describe, expect, it } from "vitest";
import { berlinDay, periodFrom, periodQuery, startOfBerlinDay } from "./period.server";

const at = (iso: string) => new Date(iso);
const ask = (query: string, now: string, fallback: "7d" | "30d" = "30d") =>
  periodFrom(new URLSearchParams(query), fallback, at(now));

describe("dashboard periods (whole days in Europe/Berlin)", () => {
  it("start at Berlin midnight in winter, in summer and on both change-over days", () => {
    expect(startOfBerlinDay("2026-01-15").toISOString()).toBe("2026-01-14T23:00:00.000Z");
    expect(startOfBerlinDay("2026-07-01").toISOString()).toBe("2026-06-30T22:00:00.000Z");
    expect(startOfBerlinDay("2026-03-29").toISOString()).toBe("2026-03-28T23:00:00.000Z");
    expect(startOfBerlinDay("2026-10-25").toISOString()).toBe("2026-10-24T22:00:00.000Z");
    // 00:30 in Berlin is still the previous day in UTC.
    expect(berlinDay(at("2026-01-15T23:30:00Z"))).toBe("2026-01-16");
  });

  it("today, the last 7 and 30 days include today up to its end", () => {
    const now = "2026-03-10T12:00:00Z";
    expect(ask("period=today", now)).toMatchObject({ kind: "today", from: "2026-03-10", to: "2026-03-10" });
    const week = ask("period=7d", now);
    expect(week).toMatchObject({ kind: "7d", from: "2026-03-04", to: "2026-03-10", invalid: false });
    expect(week.range.from.toISOString()).toBe("2026-03-03T23:00:00.000Z");
    expect(week.range.to.toISOString()).toBe("2026-03-10T23:00:00.000Z");
    expect(ask("period=30d", now)).toMatchObject({ from: "2026-02-09", to: "2026-03-10" });
    expect(ask("", now, "7d")).toMatchObject({ kind: "7d", invalid: false });
  });

  it("a custom period includes both days; a bad one falls back and says so", () => {
    const custom = ask("period=custom&from=2026-02-01&to=2026-02-28", "2026-03-10T12:00:00Z");
    expect(custom).toMatchObject({ kind: "custom", from: "2026-02-01", to: "2026-02-28", invalid: false });
    expect(custom.range.to.toISOString()).toBe("2026-02-28T23:00:00.000Z");
    expect(periodQuery(custom).toString()).toBe("period=custom&from=2026-02-01&to=2026-02-28");
    // Without "to", up to today.
    expect(ask("period=custom&from=2026-03-01", "2026-03-10T12:00:00Z")).toMatchObject({ to: "2026-03-10" });
    for (const query of [
      "period=custom&from=2026-03-05&to=2026-03-01",
      "period=custom&from=2026-02-30&to=2026-03-01",
      "period=custom&from=yesterday",
      "period=custom",
      "period=year",
    ])
      expect(ask(query, "2026-03-10T12:00:00Z"), query).toMatchObject({ kind: "30d", invalid: true });
  });
});
