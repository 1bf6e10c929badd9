import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { action as uploadUrlAction } from "~/routes/api.get-upload-url";
import { CLIENT_ADDRESS_HEADER } from "~/services/audit/audit.server";
import { getDb } from "~/models/db.server";
import { UPLOADS_PER_HOUR } from "~/services/recordings/recordings.server";
import { APP_URL, callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// Per-user limits on costly calls (issue 9 "Fault suite"): thirty clinicians behind one hospital NAT share an
// address, so the limits count per user. One user who exhausts theirs is refused with a translated 429; a
// colleague calling from the very same address is not.
setupTestApp();

const NAT = "192.0.2.17";

// The limits count per clock hour: a test must not straddle one. Within a minute of the next hour the clock jumps
// to it (a minute ahead at most, which no session notices).
const HOUR = 3_600_000;
beforeEach(() => {
  const left = HOUR - (Date.now() % HOUR);
  if (left < 60_000) vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + left + 1_000, shouldAdvanceTime: true });
});
afterEach(() => vi.useRealTimers());

function slot(cookie: string) {
  return callRoute(
    uploadUrlAction,
    request("/api/get-upload-url", {
      method: "POST",
      cookie,
      headers: {
        "Content-Type": "application/json",
        Origin: APP_URL,
        "Sec-Fetch-Site": "same-origin",
        // As server/index.mjs hands it over: both users' requests come from the hospital's one address.
        [CLIENT_ADDRESS_HEADER]: NAT,
      },
      body: JSON.stringify({ file_name: "visite.wav", file_type: "audio/wav", language_code: "de" }),
    }),
  );
}

describe("per-user limits behind one address", () => {
  it("refuses the user over the upload limit and not a colleague at the same address", async () => {
    const busy = await signedInUser({ email: "viel@klinikum.example" });
    const colleague = await signedInUser({ email: "kollegin@klinikum.example" });
    for (let i = 0; i < UPLOADS_PER_HOUR; i++) expect((await slot(busy.cookie)).status).toBe(200);
    const refused = await slot(busy.cookie);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ detail: "Too many requests. Please wait a moment and try again." });
    expect((await slot(colleague.cookie)).status).toBe(200);
  }, 60_000);

  it("audits the first refusal of the hour, and only the first, so a flood cannot fill the trail", async () => {
    const busy = await signedInUser({ email: "skript@klinikum.example" });
    for (let i = 0; i < UPLOADS_PER_HOUR; i++) expect((await slot(busy.cookie)).status).toBe(200);
    const refusals = () =>
      getDb()
        .selectFrom("audit_events")
        .where("user_id", "=", busy.user.id)
        .where("action", "like", "rate-limit.%")
        .select(["action", "outcome"])
        .execute();
    expect(await refusals()).toEqual([]);
    for (let i = 0; i < 5; i++) expect((await slot(busy.cookie)).status).toBe(429);
    expect(await refusals()).toEqual([{ action: "rate-limit.upload", outcome: "denied" }]);
  }, 60_000);
});
