import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HttpError, saveTimeoutMs, withRetries } from "./api";

describe("withRetries (SPEC §7 upload retries)", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("tries four times, waiting 1 s, 2 s and 4 s, on network errors, 5xx and 429", async () => {
    const errors = [new HttpError(0, ""), new HttpError(503, ""), new HttpError(429, "")];
    const attempt = vi.fn(async () => {
      const error = errors.shift();
      if (error) throw error;
      return "ok";
    });
    const result = withRetries(attempt);
    expect(attempt).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(999);
    expect(attempt).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempt).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(2000);
    expect(attempt).toHaveBeenCalledTimes(3);
    await vi.advanceTimersByTimeAsync(4000);
    await expect(result).resolves.toBe("ok");
    expect(attempt).toHaveBeenCalledTimes(4);
  });

  it("gives up after the fourth attempt, and at once on a lasting error", async () => {
    const always = vi.fn(async () => {
      throw new HttpError(500, "");
    });
    const result = withRetries(always);
    const settled = expect(result).rejects.toMatchObject({ status: 500 });
    await vi.advanceTimersByTimeAsync(7000);
    await settled;
    expect(always).toHaveBeenCalledTimes(4);

    const refused = vi.fn(async () => {
      throw new HttpError(403, "Forbidden");
    });
    await expect(withRetries(refused)).rejects.toMatchObject({ status: 403 });
    expect(refused).toHaveBeenCalledTimes(1);
  });
});

describe("saveTimeoutMs", () => {
  it("waits longer for a longer recording: a 4-hour session is not cut off at 2 minutes", () => {
    expect(saveTimeoutMs(0)).toBe(120_000);
    // 45 minutes took 67 s to save in bench/live-relay.mjs: well inside its wait.
    expect(saveTimeoutMs(45 * 60)).toBe(255_000);
    expect(saveTimeoutMs(4 * 3600)).toBe(840_000);
  });
});
