import express from "express";
import { z } from "zod";

// TRUST_PROXY (ASVS 4.1.3, 15.3.4): which hops in front of the app may name the client in X-Forwarded-For. The
// address is written to the audit trail and keys the sign-in start limit, so a header any client can send must not
// decide it. server/index.mjs hands the value to Express's own `trust proxy` and gives the app only what Express derives
// (server/app.mjs); this validates it the same way, so a value Express would refuse stops the boot instead.

/** false: the socket's address only. A number: that many proxies in front. A string: Express's address list. */
export type TrustProxy = false | number | string;

const EXPECTED =
  "expected false, a number of proxies (e.g. 1), or addresses and CIDR ranges separated by commas " +
  "(e.g. loopback or 10.0.0.0/8, 192.0.2.7)";

export const trustProxySetting = z
  .string()
  .optional()
  .transform((raw, ctx): TrustProxy => {
    const value = (raw ?? "false").trim();
    if (value === "false" || value === "0") return false;
    // Express reads a string "1" as the address 0.0.0.1, not as one hop: a count must reach it as a number.
    if (/^\d+$/.test(value)) return Number(value);
    if (value === "true") {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `true would let every client name its own address; ${EXPECTED}`,
      });
      return z.NEVER;
    }
    const list = value
      .split(",")
      .map((entry) => entry.trim())
      .filter(Boolean)
      .join(",");
    try {
      // Express compiles the setting when it is set: the same check the server meets at start.
      express().set("trust proxy", list);
    } catch (error) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `${error instanceof Error ? error.message : String(error)}; ${EXPECTED}`,
      });
      return z.NEVER;
    }
    return list;
  });
