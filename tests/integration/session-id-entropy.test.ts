import { describe, expect, it } from "vitest";
import { findSession } from "~/models/session.server";
import { upsertUserByIdentity } from "~/models/user.server";
import { hashSessionId, startSession } from "~/services/web/session.server";
import { setupTestApp } from "../setup/app";

// ASVS 5.0 7.2.3: session ids are unique, at least 128 bits, and come from a CSPRNG. Read back from the cookies a
// sign-in sets (not from the code that makes them), 200 ids: each 256 bits, all different, and no bit position of
// them fixed — a UUID (version and variant bits), a timestamp or a counter in the id would leave some fixed.
setupTestApp();

const COUNT = 200;

/** The session id inside a signed Set-Cookie value: base64 of the JSON string, then the signature. */
function idOf(setCookie: string) {
  const value = decodeURIComponent(setCookie.split(";")[0].split("=").slice(1).join("="));
  return JSON.parse(Buffer.from(value.slice(0, value.lastIndexOf(".")), "base64").toString("utf8")) as string;
}

describe("session ids", () => {
  it(`are 256 random bits each: ${COUNT} sign-ins give ${COUNT} different ids with no bit position fixed`, async () => {
    const user = await upsertUserByIdentity({
      issuer: "https://idp.example",
      subject: "entropy",
      email: "entropy@praxis.example",
      emailVerified: true,
      name: null,
      locale: "de",
    });
    const ids: string[] = [];
    for (let i = 0; i < COUNT; i++) ids.push(idOf(await startSession({ userId: user.id, idToken: null })));
    // The ids are the sessions' own: the newest is stored (by its hash only).
    expect(await findSession({ idHash: hashSessionId(ids.at(-1)!) })).toMatchObject({ user_id: user.id });
    expect(new Set(ids).size).toBe(COUNT);

    const bytes = ids.map((id) => Buffer.from(id, "base64url"));
    for (const b of bytes) expect(b.length).toBe(32);
    const ones = new Array<number>(256).fill(0);
    for (const b of bytes) for (let bit = 0; bit < 256; bit++) ones[bit] += (b[bit >> 3] >> (7 - (bit & 7))) & 1;
    const fixed = ones.flatMap((n, bit) => (n === 0 || n === COUNT ? [bit] : []));
    expect(fixed).toEqual([]);
    // About half of all bits are set (51,200 bits: a standard deviation of 0.2 %; ±5 % holds for any CSPRNG).
    const share = ones.reduce((sum, n) => sum + n, 0) / (COUNT * 256);
    expect(share).toBeGreaterThan(0.45);
    expect(share).toBeLessThan(0.55);
  });
});
