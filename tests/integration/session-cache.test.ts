import { describe, expect, it } from "vitest";
import { loader as workspaceLoader } from "~/routes/_app";
import { callRoute, request, signedInUser, setupTestApp } from "../setup/app";
import { fromAnotherConnection } from "../support/another-connection";

// Each instance keeps the sessions it has checked (services/web/session-cache.server.ts, ADR 0038). Whatever changes a
// session row in the database — here another connection, as an operator's psql or a second instance would — is heard
// at once and the kept row is not used again: on PGlite in the very answer of that statement, on PostgreSQL as a
// notice to this process, awaited (tests/support/another-connection.ts). Two instances on one PostgreSQL
// are proven in the scale-out run (scripts/scale-out/sessions.mjs).

setupTestApp();

async function workspace(cookie: string) {
  return callRoute(workspaceLoader, request("/", { cookie }));
}

describe("sessions kept by an instance", () => {
  it("refuses a kept session at the next request once another connection deleted it", async () => {
    const { cookie, user } = await signedInUser({ email: "kept@praxis.example", name: "Dr. Kept" });
    expect((await workspace(cookie)).status).toBe(200);
    expect((await workspace(cookie)).status).toBe(200);

    const ms = await fromAnotherConnection("delete from sessions where user_id = $1", [user.id]);
    expect(ms).toBeLessThan(1_000);
    const response = await workspace(cookie);
    expect(response.status).toBe(302);
    expect(response.headers.get("Location")).toMatch(/^\/login\?redirectTo=%2F/);
  });

  it("ends a kept session that another connection made idle, and shows a changed name at once", async () => {
    const { cookie, user } = await signedInUser({ email: "idle@praxis.example", name: "Dr. Vorher" });
    expect(((await (await workspace(cookie)).json()) as { user: { name: string } }).user.name).toBe("Dr. Vorher");

    await fromAnotherConnection("update users set name = $2 where id = $1", [user.id, "Dr. Nachher"]);
    expect(((await (await workspace(cookie)).json()) as { user: { name: string } }).user.name).toBe("Dr. Nachher");

    await fromAnotherConnection("update sessions set last_seen_at = now() - interval '31 minutes' where user_id = $1", [
      user.id,
    ]);
    const response = await workspace(cookie);
    expect(response.headers.get("Location")).toMatch(/expired=1/);
  });

  it("keeps other users' sessions when one user's ends", async () => {
    const ending = await signedInUser({ email: "ending@praxis.example" });
    const staying = await signedInUser({ email: "staying@praxis.example" });
    for (const { cookie } of [ending, staying]) expect((await workspace(cookie)).status).toBe(200);

    await fromAnotherConnection("delete from sessions where user_id = $1", [ending.user.id]);
    expect((await workspace(ending.cookie)).status).toBe(302);
    expect((await workspace(staying.cookie)).status).toBe(200);
  });
});
