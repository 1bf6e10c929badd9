import { describe, expect, it } from "vitest";
import { action as uploadUrlAction } from "~/routes/api.get-upload-url";
import { CLIENT_ADDRESS_HEADER } from "~/services/audit.server";
import { UPLOADS_PER_HOUR } from "~/services/recordings.server";
import { APP_URL, callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// Per-user limits on costly calls (issue 9 "Fault suite"): thirty clinicians behind one hospital NAT share an
// address, so the limits count per user. One user who exhausts theirs is refused with a translated 429; a
// colleague calling from the very same address is not.
setupTestApp();

const NAT = "192.0.2.17";

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
        // As server.mjs hands it over: both users' requests come from the hospital's one address.
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
});
