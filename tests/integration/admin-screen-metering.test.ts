import { describe, expect, it } from "vitest";
import { action as audioAction } from "~/routes/_app._index/route";
import { action as viewerAction } from "~/routes/_app.transcriptions.$";
import { getDb } from "~/models/db.server";
import { settleMetering } from "~/services/admin/usage.server";
import { seedTranscribedRecording } from "../support/letter-fixtures";
import { APP_URL, callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// Screen actions that do what a SPEC §7 call does count as that call, once per form post — the same name the JSON
// door records — so the dashboard counts a rename as "rename-file" whichever door it came through.
setupTestApp();

function formPost(path: string, cookie: string, fields: Record<string, string>) {
  return request(path, {
    method: "POST",
    cookie,
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: APP_URL, "Sec-Fetch-Site": "same-origin" },
    body: new URLSearchParams(fields).toString(),
  });
}

async function callsOf(userId: string) {
  await settleMetering();
  const rows = await getDb()
    .selectFrom("usage_events")
    .where("user_id", "=", userId)
    .where("unit", "=", "call")
    .select("endpoint")
    .orderBy("id")
    .execute();
  return rows.map((r) => r.endpoint);
}

describe("screen actions", () => {
  it("record one call each under the SPEC §7 name, and nothing for an unknown intent", async () => {
    const { user, cookie } = await signedInUser({ email: "screen@praxis-screen.example" });
    const lines = [{ speaker: "S1" as const, text: "Guten Tag." }];
    const first = await seedTranscribedRecording({ ownerId: user.id, lines });
    const second = await seedTranscribedRecording({ ownerId: user.id, lines });
    const audio = (fields: Record<string, string>) => callRoute(audioAction, formPost("/?index", cookie, fields));

    expect((await audio({ intent: "rename", key: first.sourceKey, displayName: "Kontrolle" })).status).toBe(302);
    expect((await audio({ intent: "add-tag", key: first.sourceKey, tag: "Kardio" })).status).toBe(302);
    expect((await audio({ intent: "remove-tag", key: first.sourceKey, tag: "Kardio" })).status).toBe(302);
    const path = first.transcriptKey.replace(/^transcripts\//, "");
    const viewer = await callRoute(viewerAction, formPost(`/transcriptions/${path}`, cookie, { intent: "delete" }), {
      "*": path,
    });
    expect(viewer.status).toBe(302);
    expect((await audio({ intent: "reset", key: second.sourceKey })).status).toBe(302);
    expect((await audio({ intent: "delete", key: second.sourceKey })).status).toBe(302);
    expect((await audio({ intent: "constructor", key: second.sourceKey })).status).toBe(400);

    expect(await callsOf(user.id)).toEqual([
      "rename-file",
      "update-file-tags",
      "update-file-tags",
      "delete-transcript",
      "force-cleanup",
      "delete-all",
    ]);
  });
});
