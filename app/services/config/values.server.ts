import { z } from "zod";

// The kinds of value settings share: a 0/1 flag, a true/false switch, an optional URL.

export const flag = z.enum(["0", "1"], { message: "must be 0 or 1" }).transform((v) => v === "1");
export const bool = z
  .enum(["true", "false", "1", "0"], { message: "must be true or false" })
  .transform((v) => v === "true" || v === "1");
export const optionalUrl = z.string().url().optional();
