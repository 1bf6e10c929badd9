import {
  countOwned,
  deleteAccountPurge,
  deleteUserRow,
  listAccountPurges,
  listWorkOf,
  markPurgeChecked,
  markPurgeFailed,
} from "~/models/account.server";
import { auditAccount } from "../audit/events.server";
import { getDb } from "../../models/db.server";
import { stopLetterJob } from "../letters/job.server";
import { wake } from "../live/bus.server";
import { closeRun } from "../live/runner.server";
import { STORAGE_AREAS, getStorage, ownerPrefix } from "../storage/storage.server";
import { stopTranscription } from "../transcription/job.server";

// Deleting an account (issue 9 "Data lifecycle"; ADR 0016): by the user from Settings or by an admin from the
// dashboard. Work in flight is stopped, then the users row goes in one statement and every owned row with it
// (all owned tables cascade), then every object under the owner's storage prefixes. Objects written afterwards
// by work that was already running elsewhere are caught by the minute sweep, which keeps listing the prefixes
// for PURGE_WATCH_MS. Only content-free audit rows remain. Signing in again makes a fresh, empty account (a new
// users row, so new prefixes).

/** How long the sweep keeps checking a deleted account's storage prefixes for late writes. */
export const PURGE_WATCH_MS = 60 * 60_000;

export { countOwned };

/** Deletes every object under the owner's prefixes; returns how many there were. */
export async function purgeOwnerStorage(ownerId: string): Promise<number> {
  const storage = getStorage();
  let deleted = 0;
  for (const area of STORAGE_AREAS) {
    for (const key of await storage.list(ownerPrefix(area, ownerId))) {
      await storage.delete(key);
      deleted++;
    }
  }
  return deleted;
}

/** Stops what runs for the user: transcriptions, letters, live runs and unfinished multipart uploads. */
async function stopWork(userId: string) {
  const work = await listWorkOf(userId);
  const storage = getStorage();
  for (const recording of work.recordings) {
    await stopTranscription({ userId, recordingId: recording.id });
    await stopLetterJob({ userId, recordingId: recording.id });
    if (recording.multipart_upload_id) {
      await storage
        .abortMultipartUpload({ key: recording.storage_key, uploadId: recording.multipart_upload_id })
        .catch((error: unknown) => console.warn("[account] abort upload:", (error as Error).message));
    }
  }
  for (const id of work.liveSessions) await closeRun(id);
  return work.liveSessions;
}

/**
 * Deletes the account `userId` and all its data. `adminId` names the admin who did it (audited under the
 * admin); without it the user deleted their own account. Returns false when there was no such account.
 */
export async function deleteAccount(args: { userId: string; adminId?: string; request?: Request }) {
  const { userId } = args;
  const liveSessions = await stopWork(userId);
  const existed = await getDb()
    .transaction()
    .execute((trx) => deleteUserRow(trx, userId));
  // Runs of its live sessions on other instances learn the session is gone and close.
  for (const id of liveSessions) await wake("control", id).catch(() => undefined);
  await purgeOwnerStorage(userId).catch((error: unknown) =>
    console.warn("[account] storage purge failed, the sweep retries:", (error as Error).message),
  );
  await auditAccount(
    args.request,
    args.adminId ?? userId,
    args.adminId ? "admin.account-delete" : "account.delete",
    userId,
    existed ? "success" : "failure",
  );
  return existed;
}

/** The minute sweep: deleted accounts' prefixes emptied again until they stayed empty for PURGE_WATCH_MS. */
export async function sweepAccountPurges(now = new Date()) {
  let objects = 0;
  let finished = 0;
  for (const purge of await listAccountPurges()) {
    try {
      objects += await purgeOwnerStorage(purge.owner_id);
      if (now.getTime() - purge.requested_at.getTime() >= PURGE_WATCH_MS) {
        await deleteAccountPurge(purge.owner_id);
        finished++;
      } else {
        await markPurgeChecked(purge.owner_id, now);
      }
    } catch (error) {
      console.warn("[account] storage purge failed, retried next minute:", (error as Error).message);
      await markPurgeFailed(purge.owner_id);
    }
  }
  return { objects, finished };
}
