import type { Period } from "~/models/admin.server";

// Periods are whole days in Europe/Berlin (SPEC §9 timestamps): today, the last 7 or 30 days (today included),
// or a custom from/to (both included). Days are "YYYY-MM-DD".

export const periodKinds = ["today", "7d", "30d", "custom"] as const;
export type PeriodKind = (typeof periodKinds)[number];
export type PeriodChoice = { kind: PeriodKind; from: string; to: string; range: Period; invalid: boolean };

const ZONE = "Europe/Berlin";
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The calendar day of an instant in Berlin. */
export function berlinDay(instant: Date) {
  return new Intl.DateTimeFormat("en-CA", { timeZone: ZONE, year: "numeric", month: "2-digit", day: "2-digit" })
    .format(instant)
    .slice(0, 10);
}

function addDays(day: string, days: number) {
  const [y, m, d] = day.split("-").map(Number);
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

/** Midnight at the start of a Berlin day, as an instant (summer and winter time alike). */
export function startOfBerlinDay(day: string) {
  const [y, m, d] = day.split("-").map(Number);
  const utcMidnight = Date.UTC(y, m - 1, d);
  // Berlin is ahead of UTC by one or two hours; the day starts that much earlier than UTC midnight.
  let start = utcMidnight;
  for (const offsetHours of [1, 2]) {
    const candidate = utcMidnight - offsetHours * 3_600_000;
    if (berlinDay(new Date(candidate)) === day && berlinDay(new Date(candidate - 1)) !== day) start = candidate;
  }
  return new Date(start);
}

function isDay(value: string | null): value is string {
  return value !== null && DAY.test(value) && addDays(value, 0) === value;
}

/** The period a GET form or call asks for; anything invalid gives the default (and says so). */
export function periodFrom(params: URLSearchParams, fallback: "7d" | "30d", now = new Date()): PeriodChoice {
  const today = berlinDay(now);
  const asked = params.get("period");
  const kind = (periodKinds as readonly string[]).includes(asked ?? "") ? (asked as PeriodKind) : null;
  const choose = (k: PeriodKind, from: string, to: string, invalid = false): PeriodChoice => ({
    kind: k,
    from,
    to,
    range: { from: startOfBerlinDay(from), to: startOfBerlinDay(addDays(to, 1)) },
    invalid,
  });
  const last = (k: "today" | "7d" | "30d", invalid = false) =>
    choose(k, addDays(today, k === "today" ? 0 : k === "7d" ? -6 : -29), today, invalid);
  if (kind === "custom") {
    const from = params.get("from");
    const to = params.get("to") || today;
    if (isDay(from) && isDay(to) && from <= to) return choose("custom", from, to);
    return last(fallback, true);
  }
  return last(kind ?? fallback, asked !== null && asked !== "" && kind === null);
}

/** The query string of a period choice, for links that keep it (CSV download, pagination). */
export function periodQuery(choice: PeriodChoice) {
  const query = new URLSearchParams({ period: choice.kind });
  if (choice.kind === "custom") {
    query.set("from", choice.from);
    query.set("to", choice.to);
  }
  return query;
}
