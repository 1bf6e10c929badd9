// The last step: nothing lost, nothing twice — each recording has exactly one transcript and one letter in the
// database, and each engine job ran once.
import fs from "node:fs";
import { children } from "./processes.mjs";
import { check, endStep, note, step } from "./report.mjs";

/** What the database and the engines hold after the workflow. */
export async function nothingLost({ db, batch, realtime, model }) {
  step("nothing lost, nothing twice: the database and the engines");
  const rows = (
    await db.query(
      `select r.storage_key, r.transcription_status,
         (select count(*) from transcripts t where t.recording_id = r.id)::int as transcripts,
         (select count(*) from transcription_jobs j where j.recording_id = r.id)::int as transcription_jobs,
         (select count(*) from letters l where l.recording_id = r.id)::int as letters,
         (select count(*) from letter_jobs j where j.recording_id = r.id)::int as letter_jobs,
         (select string_agg(j.status || '/' || j.attempts, ',') from letter_jobs j where j.recording_id = r.id) as letter_job,
         (select max(l.current_version) from letters l where l.recording_id = r.id)::int as version
       from recordings r order by r.created_at`,
    )
  ).rows;
  for (const row of rows)
    note(
      `${row.storage_key}: transcription ${row.transcription_status}, transcripts ${row.transcripts}, ` +
        `transcription jobs ${row.transcription_jobs}, letters ${row.letters}, letter jobs ${row.letter_jobs} ` +
        `(${row.letter_job}), letter version ${row.version}`,
    );
  check(rows.length === 2, `expected 2 recordings, found ${rows.length}`);
  for (const row of rows) {
    check(row.transcripts === 1 && row.letters === 1, `${row.storage_key}: not exactly one transcript and one letter`);
    check(
      row.letter_jobs === 1 && row.letter_job === "completed/1",
      `${row.storage_key}: letter job ${row.letter_job}`,
    );
  }
  check(rows[0].transcription_jobs === 1 && rows[0].version === 2, "the upload: one transcription job, letter v2");
  note(
    `engines: Speechmatics batch jobs ${batch.jobs.length}, realtime connections ${realtime.sessions.length}, ` +
      `letters written by the model ${model.letters}, refinements ${model.refinements}`,
  );
  check(batch.jobs.length === 1, `the batch engine ran ${batch.jobs.length} jobs for one upload`);
  check(model.letters === 2, `the model wrote ${model.letters} letters for two recordings`);
  endStep();
}

/** Open for writing, in a file's fdinfo flags (octal): O_WRONLY or O_RDWR. */
const WRITE_MODES = 0o3;

/** The regular files a process holds open for writing, besides its standard output and error. */
function writableFiles(pid) {
  const files = [];
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    if (fd === "1" || fd === "2") continue;
    let target;
    let flags;
    try {
      target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      flags = parseInt(/^flags:\s*([0-7]+)/m.exec(fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8"))?.[1] ?? "0", 8);
    } catch {
      continue; // closed meanwhile
    }
    if (target.startsWith("/") && !target.startsWith("/dev/") && flags & WRITE_MODES) files.push(target);
  }
  return files;
}

/**
 * ASVS 16.2.3, logs only where docs/data-protection.md §3 says: the instances and the worker, after the whole
 * workflow, hold no file open for writing — their log lines went to stdout and stderr (here the harness's files).
 */
export function logsOnlyToStreams() {
  step("logs only to stdout and stderr: no app process holds a file open for writing");
  for (const [name, entry] of children) {
    if (name === "nginx") continue;
    const files = writableFiles(entry.pid);
    note(`${name} (pid ${entry.pid}): ${files.length === 0 ? "stdout and stderr only" : files.join(", ")}`);
    check(files.length === 0, `${name} writes to ${files.join(", ")}`);
  }
  endStep();
}
