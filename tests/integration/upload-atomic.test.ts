import fs from "node:fs";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { action as audioAction } from "~/routes/_app._index/route";
import { getDb } from "~/models/db.server";
import { makeTempDir, makeTone, removeTempDir } from "../support/audio-fixtures";
import { formRequest, storedState } from "../support/bad-file-doors";
import { callRoute, setupTestApp, signedInUser } from "../setup/app";

// The upload form stores the audio, then the recording's row and the context the clinician typed. A failure
// between those writes (the database gone, a context refused) left a ready recording without its context: its
// letter would have been written without what the doctor added. They are one transaction now, and the audio of a
// recording that was not recorded goes too — nothing half-stored.
setupTestApp();

const REFUSED = "Kontext-der-nicht-gespeichert-wird";
let dir: string;
let wav: Buffer;

beforeAll(async () => {
  dir = await makeTempDir("skribent-upload-atomic-");
  wav = fs.readFileSync(await makeTone(dir, 2, "wav"));
  // A real failure inside the database, after the recording's row was written: the context's insert is refused.
  await sql
    .raw(
      `create function refuse_marked_context() returns trigger language plpgsql as $$
       begin
         if new.text like '%${REFUSED}%' then raise exception 'context refused'; end if;
         return new;
       end $$;
       create trigger refuse_marked_context before insert on recording_context
         for each row execute function refuse_marked_context();`,
    )
    .execute(getDb());
});

afterAll(async () => {
  await removeTempDir(dir);
});

function upload(cookie: string, additionalContext: string) {
  const file = { label: "a short tone", name: "Sprechstunde.wav", type: "audio/wav", bytes: wav };
  const fields = { language: "de-DE", mode: "transcript_and_letter", additionalContext };
  return callRoute(audioAction, formRequest(cookie, file, fields));
}

describe("upload form: the recording and its context are stored together or not at all", () => {
  it("leaves no recording and no audio when its context cannot be stored, and keeps the context when it can", async () => {
    const { cookie, user } = await signedInUser({ email: "atomar@praxis.example" });
    const before = await storedState(user.id);

    await expect(upload(cookie, `Allergie: Penicillin. ${REFUSED}`)).rejects.toThrow(/context refused/);
    expect(await storedState(user.id)).toEqual(before);

    const stored = await upload(cookie, "Allergie: Penicillin.");
    expect(stored.status).toBe(302);
    const rows = await getDb()
      .selectFrom("recordings")
      .innerJoin("recording_context", "recording_context.recording_id", "recordings.id")
      .where("recordings.owner_id", "=", user.id)
      .select(["recordings.upload_status", "recording_context.text"])
      .execute();
    expect(rows).toEqual([{ upload_status: "ready", text: "Allergie: Penicillin." }]);
  });
});
