// The last step: nothing lost, nothing twice — each recording has exactly one transcript and one letter in the
// database, and each engine job ran once.
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
