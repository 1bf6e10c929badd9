import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listChatMessages } from "~/models/chat.server";
import { answerQuestion, prepareQuestion } from "~/services/chat/chat.server";
import { getDb } from "~/models/db.server";
import { setLanguageModel } from "~/services/llm/engine.server";
import { unloadLocalLanguageModel } from "~/services/llm/local-llm-runtime.server";
import { createLocalLanguageModel } from "~/services/llm/local-llm.server";
import { setupTestApp, signedInUser } from "../setup/app";

// The chat on the embedded engine (issue 8): node-llama-cpp with ../shared/models/stories260K.gguf, a
// 260K-parameter model of children's stories, on one thread. What it writes is nonsense; what is asserted is the
// path: the question and its pending answer stored, the answer streamed through llama.cpp's text-chunk callback
// piece by piece, the same text stored as the answer, and the tokens recorded at no cost (local).
setupTestApp();

const STORIES = path.resolve(process.cwd(), "../shared/models/stories260K.gguf");

beforeAll(() => {
  // The model is trained on 512 tokens; extendContext lets a whole chat request (system message, answer room) fit.
  setLanguageModel(createLocalLanguageModel({ model: STORIES, threads: 1, contextTokens: 2048, extendContext: true }));
});
afterAll(async () => {
  setLanguageModel(undefined);
  await unloadLocalLanguageModel();
});

describe("chat on the local engine (stories260K)", () => {
  it("streams the answer piece by piece and stores the same text", async () => {
    const { user } = await signedInUser({ email: "lokal@praxis.example" });
    const prepared = await prepareQuestion({
      userId: user.id,
      language: "de-DE",
      question: "Once upon a time there was a little cat. What did the cat do?",
    });
    const pieces: string[] = [];
    const outcome = await answerQuestion(prepared, (text) => pieces.push(text));
    expect(outcome.status).toBe("done");
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join("").trim()).toBe(outcome.status === "done" ? outcome.content : "");

    const messages = await listChatMessages({ ownerId: user.id });
    expect(messages.map((m) => [m.role, m.status])).toEqual([
      ["user", "done"],
      ["assistant", "done"],
    ]);
    expect(messages[1]!.content).toBe(pieces.join("").trim());

    const usage = await getDb()
      .selectFrom("usage_events")
      .where("user_id", "=", user.id)
      .where("endpoint", "=", "chat-request")
      .where("unit", "in", ["input_token", "output_token"])
      .select(["unit", "units", "cost_usd"])
      .execute();
    expect(usage.map((u) => u.unit).sort()).toEqual(["input_token", "output_token"]);
    expect(usage.every((u) => Number(u.units) > 0 && Number(u.cost_usd) === 0)).toBe(true);
  }, 120_000);
});
