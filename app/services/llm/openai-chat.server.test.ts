import { describe, expect, it } from "vitest";

import { reply, startFakeOpenAiChatServer } from "../../../tests/support/fake-openai-chat";
import { schemaInstruction } from "./openai-chat.server";
import {
  SCHEMA,
  VALID,
  rejection,
  request,
  fakeOpenAiChatForEachTest,
} from "../../../tests/support/openai-chat-helpers";
import { estimateMessagesTokens } from "./tokens";

// The OpenAI-compatible chat engine over HTTP against the fake server (PROTOCOLS.md §3.2–3.4): what it sends in
// each structured-output mode, how it validates answers, plain chat and the health check. Which failures it
// retries and how often: openai-chat-failures.server.test.ts.

describe("OpenAI-compatible chat engine", () => {
  const world = fakeOpenAiChatForEachTest();
  const { model } = world;

  describe("structured answers", () => {
    it("sends a strict json_schema request and returns the validated value with the server's usage", async () => {
      world.server.replies.push(reply.json(VALID, { prompt_tokens: 321, completion_tokens: 45 }));
      const result = await model().generateStructured(request());
      expect(result).toEqual({
        value: VALID,
        usage: { promptTokens: 321, completionTokens: 45 },
        model: "gpt-4o-mini",
      });

      const [sent] = world.server.chatRequests();
      expect(sent!.headers["content-type"]).toBe("application/json");
      expect(sent!.bearer).toBe(true);
      expect(sent!.body).toEqual({
        model: "gpt-4o-mini",
        messages: request().messages,
        max_tokens: 500,
        temperature: 0,
        response_format: { type: "json_schema", json_schema: { name: "arztbrief", schema: SCHEMA, strict: true } },
      });
    });

    it("estimates usage when the server reports none", async () => {
      world.server.replies.push(reply.json(VALID, null));
      const result = await model().generateStructured(request());
      expect(result.usage.promptTokens).toBe(estimateMessagesTokens(request().messages));
      expect(result.usage.completionTokens).toBeGreaterThan(0);
    });

    it("makes the schema name acceptable to OpenAI", async () => {
      await model().generateStructured(request({ schemaName: "Arztbrief (Entlassung) für Herrn X" }));
      expect(world.server.chatRequests()[0]!.body.response_format.json_schema.name).toBe(
        "Arztbrief__Entlassung__f_r_Herrn_X",
      );
    });

    it("reads an answer wrapped in a ```json fence", async () => {
      world.server.replies.push(reply.text("```json\n" + JSON.stringify(VALID) + "\n```"));
      expect((await model().generateStructured(request())).value).toEqual(VALID);
      expect(world.server.chatRequests()).toHaveLength(1);
    });

    it("asks again after invalid JSON, with a raised temperature, and sums the usage", async () => {
      world.server.replies.push(
        { kind: "text", content: "Gerne! Hier ist der Brief: {", usage: { prompt_tokens: 100, completion_tokens: 7 } },
        reply.json(VALID, { prompt_tokens: 100, completion_tokens: 20 }),
      );
      const result = await model().generateStructured(request());
      expect(result.value).toEqual(VALID);
      expect(result.usage).toEqual({ promptTokens: 200, completionTokens: 27 });
      const temperatures = world.server.chatRequests().map((r) => r.body.temperature);
      expect(temperatures).toEqual([0, 0.4]);
    });

    it.each([
      ["invalid JSON", () => reply.text('{"document_type": "other", "sections": '), "not valid JSON"],
      [
        "a schema mismatch (a server that ignores the schema)",
        () => reply.json({ ...VALID, document_type: "letter" }),
        "$.document_type: not one of the 3 allowed values",
      ],
      // The cut-off and the withheld answers are complete JSON: only finish_reason tells them apart.
      ["a truncated answer (finish_reason length)", () => reply.text(JSON.stringify(VALID), "length"), "cut off"],
      ["a truncated answer with cut JSON", () => reply.truncated(VALID), "cut off"],
      ["a refusal", () => reply.refusal(), "refused"],
      ["a content filter", () => reply.text(JSON.stringify(VALID), "content_filter"), "content filter"],
    ])("fails with invalid_output after exactly 3 requests on %s", async (_label, make, problem) => {
      world.server.responder = () => make();
      const error = await rejection(model().generateStructured(request()));
      expect(error.kind).toBe("invalid_output");
      expect(error.options.userMessageKey).toBe("letters:errors.structuredOutputFailed");
      expect(error.message).toContain(problem);
      expect(world.server.chatRequests()).toHaveLength(3);
    });

    it("names the place of a schema mismatch, but not the answer's text", async () => {
      world.server.responder = () => reply.json({ document_type: "other", sections: { s1: "Geheimer Befund" } });
      const error = await rejection(model().generateStructured(request()));
      expect(error.message).toContain("$.sections.s2: required property missing");
      expect(error.message).not.toContain("Geheimer Befund");
    });

    it("takes the number of attempts from the configuration", async () => {
      world.server.responder = () => reply.text("nope");
      await rejection(model({ structuredAttempts: 1 }).generateStructured(request()));
      expect(world.server.chatRequests()).toHaveLength(1);
    });

    it.each(["json_object", "none"] as const)(
      "in %s mode puts the schema into a system message after the caller's system message",
      async (mode) => {
        world.server.replies.push(reply.json(VALID));
        expect((await model({ structuredOutput: mode }).generateStructured(request())).value).toEqual(VALID);
        const [sent] = world.server.chatRequests();
        expect(sent!.body.messages).toEqual([
          request().messages[0],
          { role: "system", content: schemaInstruction(SCHEMA) },
          request().messages[1],
        ]);
        expect(sent!.body.messages[1].content).toContain('"additionalProperties":false');
        if (mode === "json_object") expect(sent!.body.response_format).toEqual({ type: "json_object" });
        else expect(sent!.body.response_format).toBeUndefined();
      },
    );

    it("refuses a request that cannot fit the context window before sending anything", async () => {
      const error = await rejection(
        model({ contextTokens: 1024 }).generateStructured(
          request({ messages: [{ role: "user", content: "Kopfschmerzen. ".repeat(300) }], maxTokens: 200 }),
        ),
      );
      expect(error.kind).toBe("permanent");
      expect(error.message).toMatch(/does not fit the context window/);
      expect(world.server.requests).toHaveLength(0);
    });

    it("counts the instruction message in json_object mode against the context window", async () => {
      const messages = [{ role: "user" as const, content: "x" }];
      const bare = estimateMessagesTokens(messages);
      // Fits without the schema instruction, not with it.
      const contextTokens = bare + 100;
      await model({ contextTokens }).generateStructured(request({ messages, maxTokens: 100 }));
      const error = await rejection(
        model({ contextTokens, structuredOutput: "json_object" }).generateStructured(
          request({ messages, maxTokens: 100 }),
        ),
      );
      expect(error.kind).toBe("permanent");
      expect(world.server.chatRequests()).toHaveLength(1);
    });
  });

  describe("chat", () => {
    it("returns the plain text content and sends no response_format", async () => {
      world.server.replies.push(reply.text("Guten Tag.", "stop"));
      const result = await model().chat({ messages: [{ role: "user", content: "Hallo" }], maxTokens: 50 });
      expect(result.content).toBe("Guten Tag.");
      expect(result.model).toBe("gpt-4o-mini");
      expect(result.usage.completionTokens).toBeGreaterThan(0);
      expect(world.server.chatRequests()[0]!.body).toEqual({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "Hallo" }],
        max_tokens: 50,
      });
    });
  });

  describe("check", () => {
    it("is healthy when the server lists models", async () => {
      expect(await model().check()).toEqual({ status: "healthy" });
      expect(world.server.requests[0]).toMatchObject({ method: "GET", path: "/v1/models", bearer: true });
    });

    it("says so when the configured model is not listed", async () => {
      expect(await model({ model: "qwen2.5:3b" }).check()).toEqual({
        status: "healthy",
        detail: "model qwen2.5:3b is not among the 1 listed",
      });
    });

    it("is healthy without a /models endpoint", async () => {
      world.server.modelsEndpoint = false;
      expect(await model().check()).toEqual({ status: "healthy", detail: "no /models endpoint" });
    });

    it("reports a refused key and an unreachable server as errors", async () => {
      expect(await model({ apiKey: "sk-nope-nope" }).check()).toEqual({
        status: "error",
        detail: `${new URL(world.server.url).host} refused the API key (401)`,
      });
      const url = world.server.url;
      await world.server.close();
      const health = await model({ baseUrl: url }).check(1_000);
      expect(health.status).toBe("error");
      expect(health.detail).toMatch(/Cannot reach/);
      world.server = await startFakeOpenAiChatServer();
    });
  });
});
