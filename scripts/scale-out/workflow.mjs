// The workflow's steps through nginx, one user's, up to the saved refinement (the live recording is in live.mjs):
// each step is one function, run in order by scripts/scale-out.mjs, with the stops of instances inside it.
import fs from "node:fs";
import path from "node:path";
import { writeSilentWav } from "../../bench/support.mjs";
import { call, say, setCookie, signIn } from "./client.mjs";
import { PORTS, WAV_BYTES, sleep } from "./config.mjs";
import { callerOf, startInstance } from "./instances.mjs";
import { stopProcess, tmp, waitFor } from "./processes.mjs";
import { ProofError, check, endStep, note, step } from "./report.mjs";

/** Round-robin: six requests in a row are answered by A and B in turn. */
export async function alternation() {
  step("alternation: consecutive requests through nginx go to A and B in turn");
  const order = [];
  for (let i = 0; i < 6; i++) order.push((await call("GET", "/resources/healthz")).instance);
  note(`GET /resources/healthz ×6 answered by ${order.join(" ")}`);
  check(order.includes("A") && order.includes("B"), `only ${[...new Set(order)].join()} answered`);
  check(
    order.every((who, i) => i === 0 || who !== order[i - 1]),
    `requests did not alternate: ${order.join(" ")}`,
  );
  endStep();
}

/** Sign-in through nginx, then the session on both instances; the client keeps its cookie. */
export async function signInThroughNginx() {
  step("sign-in through nginx (the OAuth state cookie made on one instance is checked on the other)");
  setCookie(await signIn("anna-berger"));
  const seen = [];
  for (let i = 0; i < 4; i++) {
    const r = await call("GET", "/api/files");
    seen.push(r.instance);
  }
  note(`the session works on both: GET /api/files ×4 answered by ${seen.join(" ")}`);
  check(seen.includes("A") && seen.includes("B"), "the session was not accepted by both instances");
  endStep();
}

/** A multi-part upload straight to S3, with A stopped after the first part; returns the recording's key. */
export async function uploadInParts() {
  step(`upload in parts (${(WAV_BYTES / 1e6).toFixed(0)} MB WAV); SIGTERM to A after the first part`);
  const wav = path.join(tmp, "consultation.wav");
  writeSilentWav(wav, WAV_BYTES);
  const start = await call("POST", "/api/upload-parts/start", {
    json: { file_name: "konsultation.wav", file_type: "audio/wav", file_size: WAV_BYTES, language_code: "de" },
  });
  say("POST", "/api/upload-parts/start", start);
  const { key, part_count: partCount, part_size: partSize } = start.data;
  check(partCount >= 2, `expected several parts, got ${partCount}`);
  const putPart = async (n) => {
    const urls = await call("POST", "/api/upload-parts/urls", { json: { key, part_numbers: [n] } });
    say("POST", `/api/upload-parts/urls [${n}]`, urls);
    const from = (n - 1) * partSize;
    const to = Math.min(from + partSize, WAV_BYTES) - 1;
    const t0 = Date.now();
    const put = await fetch(urls.data.parts[0].url, {
      method: "PUT",
      body: fs.createReadStream(wav, { start: from, end: to }),
      headers: { "content-length": String(to - from + 1) },
      duplex: "half",
    });
    check(put.ok, `part ${n}: PUT to S3 answered ${put.status}`);
    note(`[S3] PUT part ${n} (${to - from + 1} bytes) → ${put.status} (${Date.now() - t0} ms)`);
  };
  await putPart(1);
  const stopA1 = await stopProcess("A", "SIGTERM", undefined, "mid-upload");
  note(`A stopped by SIGTERM: exit ${stopA1.code ?? stopA1.signal} after ${stopA1.ms} ms`);
  const status = await call("POST", "/api/upload-parts/status", { json: { key } });
  say("POST", "/api/upload-parts/status", status);
  check(
    status.data.parts.length === 1 && status.data.parts[0].part_number === 1,
    `after the stop the store should hold part 1: ${JSON.stringify(status.data.parts)}`,
  );
  for (let n = 2; n <= partCount; n++) await putPart(n);
  const complete = await call("POST", "/api/upload-parts/complete", { json: { key } });
  say("POST", "/api/upload-parts/complete", complete);
  const metadata = await call("POST", "/api/update-file-metadata", {
    json: { s3_key: key, metadata: { template_id: "entlassbrief", display_name: "Scale-out Konsultation" } },
  });
  say("POST", "/api/update-file-metadata", metadata);
  check(complete.data.success && metadata.data.success, "the upload did not complete");
  await startInstance("A");
  endStep();
  return key;
}

/** The transcript of the upload, made by the worker. */
export async function transcription(key) {
  step("transcription: started by the upload, run by the worker, polled through both instances");
  const transcribe = await call("POST", "/api/transcribe_v2", { json: { s3_key: key } });
  say("POST", "/api/transcribe_v2", transcribe);
  const job = transcribe.data.job_name;
  const polls = { A: 0, B: 0 };
  const done = await waitFor(
    "transcript completed",
    async () => {
      const r = await call("GET", `/api/transcribe_v2/${job}/status`);
      polls[r.instance] += 1;
      if (r.data.status === "failed") throw new ProofError(`transcription failed: ${r.data.error}`);
      return r.data.status === "completed" && r.data;
    },
    { everyMs: 150 },
  );
  note(`completed; status polled by A ×${polls.A}, B ×${polls.B}; transcript ${done.transcript_key}`);
  const transcript = await call("GET", `/api/transcript_v2/${done.transcript_key}`);
  say("GET", "/api/transcript_v2/…", transcript);
  check(transcript.data.raw_transcript?.length > 0, "the transcript is empty");
  endStep();
}

/** The letter, written by the worker while A is killed; returns it. */
export async function writeLetter(key, model) {
  step("letter: written by the worker (model takes 4 s); SIGKILL to A meanwhile");
  const findLetter = async () => {
    const r = await call("GET", "/api/arztbriefe");
    return { r, letter: r.data.arztbriefe.find((l) => l.metadata?.source_key === key) };
  };
  // transcript_and_letter is the default mode: the letter job was queued when the transcript completed.
  const letterJob = await call("POST", "/api/medical-letter-v2", {
    json: { source_key: key, original_filename: "konsultation.wav", metadata: { template_id: "entlassbrief" } },
    expect: [200, 202],
  });
  say("POST", "/api/medical-letter-v2", letterJob);
  check(letterJob.data.status === "processing", `the letter should be in the works: ${JSON.stringify(letterJob.data)}`);
  await waitFor("the model is writing", async () => model.letters >= 1);
  const killA = await stopProcess("A", "SIGKILL", undefined, "mid-letter");
  note(`A killed (SIGKILL) while the model writes: gone after ${killA.ms} ms`);
  const again = await call("POST", "/api/medical-letter-v2", {
    json: { source_key: key, original_filename: "konsultation.wav", metadata: { template_id: "entlassbrief" } },
    expect: [200, 202],
  });
  say("POST", "/api/medical-letter-v2 (asked again)", again);
  check(again.data.job_name === letterJob.data.job_name, "asking again started another letter job");
  const letter = await waitFor(
    "letter completed",
    async () => {
      const { letter: found } = await findLetter();
      if (found?.status === "failed") throw new ProofError("the letter failed");
      return found?.status === "completed" && found;
    },
    { everyMs: 200 },
  );
  note(`letter ${letter.key} completed, version ${letter.version}`);
  await startInstance("A");
  endStep();
  return letter;
}

/** A refinement of the letter, the instance answering it stopped mid-request; saved as the next version. */
export async function refineLetter(letter, model) {
  step("refinement: SIGTERM to the instance answering it, mid-request; the refined letter is saved");
  const opened = await call("GET", `/api/arztbrief/${letter.key}`);
  say("GET", "/api/arztbrief/…", opened);
  await sleep(2_500); // nginx tries A again once fail_timeout is over
  const refineBody = {
    arztbrief_content: opened.data.content,
    query: "Bitte etwas förmlicher formulieren.",
    language_code: "de-DE",
    transcript_data: null,
  };
  // Which instance will answer is nginx's turn: ask, and stop whichever it is while the model works.
  const turn = (await call("GET", "/resources/healthz")).instance;
  const before = model.refinements;
  const refining = call("POST", "/api/refine-arztbrief-bulk", { json: refineBody, expect: [200, 500, 502, 504] });
  await waitFor("the model is refining", async () => model.refinements > before);
  const inFlight = (await callerOf(PORTS.llm)) ?? (turn === "A" ? "B" : "A");
  const stopped = await stopProcess(inFlight, "SIGTERM", undefined, "mid-request");
  note(
    `${inFlight} stopped by SIGTERM while it waited for the model: exit ${stopped?.code ?? stopped?.signal} after ${stopped?.ms} ms`,
  );
  const refined = await refining;
  say("POST", "/api/refine-arztbrief-bulk", refined);
  check(
    refined.status === 200,
    `the refinement in flight on the stopped instance was lost (${refined.status}): a stopping instance must finish the requests it has`,
  );
  const saved = await call("PUT", `/api/arztbrief/${letter.key}`, {
    json: { content: refined.data.refined_content, base_version: opened.data.version },
  });
  say("PUT", "/api/arztbrief/… (refined)", saved);
  check(saved.data.changed && saved.data.version === opened.data.version + 1, "the refined letter was not saved");
  await startInstance(inFlight);
  endStep();
}
