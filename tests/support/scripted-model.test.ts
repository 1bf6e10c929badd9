import { describe, expect, it } from "vitest";
import { ScriptedModel } from "./scripted-model";

// The safety net of the letter tests: a request that does not fit must fail loudly, and be recorded.
describe("ScriptedModel", () => {
  const schema = { type: "object" as const, properties: {}, required: [], additionalProperties: false };

  it("records requests and counts ⌈chars / 4⌉ per message plus framing and schema", async () => {
    const model = new ScriptedModel(() => ({ ok: true }), 1_000);
    const result = await model.generateStructured({
      messages: [{ role: "user", content: "x".repeat(40) }],
      schema,
      schemaName: "t",
      maxTokens: 10,
    });
    expect(result.value).toEqual({ ok: true });
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]!.promptTokens).toBe(10 + 4 + Math.ceil(JSON.stringify(schema).length / 4));
  });

  it("refuses a request whose prompt and answer budget exceed the window", async () => {
    const model = new ScriptedModel(() => ({}), 100);
    const request = { messages: [{ role: "user" as const, content: "x".repeat(300) }], schema, schemaName: "t" };
    await expect(model.generateStructured({ ...request, maxTokens: 50 })).rejects.toThrow(/exceeds the context window/);
    expect(model.oversized).toHaveLength(1);
    expect(model.requests).toEqual([]);
  });

  it("refuses an answer longer than maxTokens", async () => {
    const model = new ScriptedModel(() => ({ text: "y".repeat(400) }), 1_000);
    const request = { messages: [{ role: "user" as const, content: "hi" }], schema, schemaName: "t", maxTokens: 20 };
    await expect(model.generateStructured(request)).rejects.toThrow(/exceeds maxTokens/);
  });
});
