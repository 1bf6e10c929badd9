import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { action as letterAction } from "~/routes/api.medical-letter-v2";
import { getFixedTFor } from "~/services/web/i18n.server";
import { runLetterJob } from "~/services/letters/job.server";
import { LETTER_MAX_ATTEMPTS } from "~/services/letters/job-outcome.server";
import { setLanguageModel } from "~/services/llm/engine.server";
import { createOpenAiChatModel } from "~/services/llm/openai-chat.server";
import { stateOf } from "../support/faults";
import { letterModel } from "../support/fake-llm-letters";
import { reply, startFakeOpenAiChatServer, type FakeChatReply, type FakeChatServer } from "../support/fake-openai-chat";
import { letterJobOf, seedTranscribedRecording } from "../support/letter-fixtures";
import { serve } from "../support/remix-document";
import { APP_URL, callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// The language model answering garbage to a letter job (the hardening issue's fault suite; the speech engines'
// garbage and time-outs are covered in transcription-job.test.ts and the adapters' tests, a half-written JSON
// letter in letters-api-failures.test.ts). Whatever comes back, the job ends — retried within its bound or at once —
// in a clear status with the translated reason on the Transcriptions screen, no letter row, nothing in "processing";
// and the next try with a sane model writes the letter.
setupTestApp();
let llm: FakeChatServer;

beforeAll(async () => {
  llm = await startFakeOpenAiChatServer({ responder: letterModel });
  setLanguageModel(
    createOpenAiChatModel({
      baseUrl: llm.url,
      model: "test-model",
      structuredOutput: "json_schema",
      contextTokens: 16_000,
      timeoutMs: 2_000,
      retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
    }),
  );
});
afterEach(() => {
  llm.responder = letterModel;
});
afterAll(async () => {
  setLanguageModel(undefined);
  await llm.close();
});

const garbage: Array<[string, FakeChatReply, { runs: number; status: string; reason: string }]> = [
  [
    "a 200 whose body is not JSON",
    reply.error(200, { body: '}{"choices": [', contentType: "application/json" }),
    { runs: LETTER_MAX_ATTEMPTS, status: "failed", reason: "letters:errors.creationFailed" },
  ],
  [
    "JSON that is no chat completion",
    reply.error(200, { body: JSON.stringify({ result: "Arztbrief" }) }),
    { runs: 1, status: "failed", reason: "letters:errors.creationFailed" },
  ],
  [
    "an empty answer",
    reply.text(""),
    { runs: 1, status: "structure_error", reason: "letters:errors.invalidStructure" },
  ],
  [
    "JSON of another shape",
    reply.json({ document_type: "patient_conversation", letter: "Sehr geehrte Kollegin" }),
    { runs: 1, status: "structure_error", reason: "letters:errors.invalidStructure" },
  ],
];

describe("the language model answers garbage to a letter job", () => {
  it.each(garbage)("%s: a clear failure with its reason, no letter; a new try writes it", async (_, answer, end) => {
    const t = await getFixedTFor("de", ["common", "letters"]);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { user, cookie } = await signedInUser({ email: `muell-${end.runs}-${end.status}@praxis.example` });
    const { sourceKey, recordingId } = await seedTranscribedRecording({
      ownerId: user.id,
      lines: [{ speaker: "S1", text: "Der Patient berichtet über Kopfschmerzen seit drei Tagen." }],
    });
    const create = () =>
      callRoute(
        letterAction,
        request("/api/medical-letter-v2", {
          cookie,
          method: "POST",
          headers: { "Content-Type": "application/json", Origin: APP_URL, "Sec-Fetch-Site": "same-origin" },
          body: JSON.stringify({ source_key: sourceKey }),
        }),
      );
    llm.responder = () => answer;
    expect((await create()).status).toBe(202);
    const job = (await letterJobOf(recordingId))!;
    const runs: string[] = [];
    for (let run = 0; run < LETTER_MAX_ATTEMPTS && runs.at(-1) !== "failed"; run++)
      runs.push(await runLetterJob(job.id));
    expect(runs).toEqual([...Array(end.runs - 1).fill("retry"), "failed"]);
    expect(await letterJobOf(recordingId)).toMatchObject({ status: "failed", error_key: end.reason });
    expect(await stateOf(recordingId)).toMatchObject({ recording: { medical_letter_status: end.status }, letters: 0 });
    const page = await (await serve(request("/transcriptions", { cookie }))).text();
    expect(page).toContain(t(end.reason));
    expect(page).toContain(t(`common:status.letter.${end.status}`));

    llm.responder = letterModel;
    expect((await create()).status).toBe(202);
    expect(await runLetterJob((await letterJobOf(recordingId))!.id)).toBe("completed");
    expect(await stateOf(recordingId)).toMatchObject({ recording: { medical_letter_status: "completed" }, letters: 1 });
    warn.mockRestore();
  });
});
