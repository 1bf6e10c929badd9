import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "~/models/db.server";
import type { JobsHandle } from "~/services/jobs/queue.server";
import { queues, startJobs } from "~/services/jobs/registry.server";
import { signedInUser, setupTestApp } from "../setup/app";

const app = setupTestApp();
let jobs: JobsHandle;

beforeAll(async () => {
  jobs = await startJobs({ pool: app.database.handle.pool, work: true, schedule: false });
});
afterAll(async () => {
  await jobs.stop();
});

async function waitForJob(id: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await jobs.boss.getJobById(queues.expireSessions, id);
    if (job && (job.state === "completed" || job.state === "failed")) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${job?.state}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("durable job queue", () => {
  it("runs the session-expiry job through the queue and removes only expired sessions", async () => {
    await signedInUser({ email: "fresh@praxis.example" });
    await signedInUser({ email: "stale@praxis.example" });
    await getDb()
      .updateTable("sessions")
      .set({ last_seen_at: new Date(Date.now() - 40 * 60_000) })
      .where("user_id", "in", getDb().selectFrom("users").where("email", "=", "stale@praxis.example").select("id"))
      .execute();

    const id = await jobs.boss.send(queues.expireSessions, {});
    expect(id).toBeTruthy();
    const job = await waitForJob(id!);
    expect(job.state).toBe("completed");

    const left = await getDb()
      .selectFrom("sessions")
      .innerJoin("users", "users.id", "sessions.user_id")
      .select("users.email")
      .execute();
    expect(left.map((r) => r.email)).toEqual(["fresh@praxis.example"]);
  });
});
