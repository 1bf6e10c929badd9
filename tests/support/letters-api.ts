import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { loader as filesLoader } from "~/routes/api.files";
import { action as createAction } from "~/routes/api.medical-letter-v2";
import { runLetterJob } from "~/services/letters/job.server";
import { findDataBlocks } from "~/services/letters/data-blocks";
import { setLanguageModel } from "~/services/llm/engine.server";
import { createOpenAiChatModel } from "~/services/llm/openai-chat.server";
import { callRoute } from "../setup/app";
import { apiClientFor, type ApiClient } from "./api-client";
import { reply, startFakeOpenAiChatServer, type FakeChatRequest, type FakeChatServer } from "./fake-openai-chat";
import { citableLine, sectionAnswer } from "./fake-llm-letters";
import { letterJobOf, userIdOf } from "./letter-fixtures";

// The letters API's test world (letters-api-*.test.ts): the real OpenAI-compatible adapter talking HTTP to a
// protocol-faithful chat-completions server that records what it is sent, a responder that writes letters from
// the transcript block, JSON calls as an API client makes them, and a consultation to make letters from.

/** The fake language model for one test file; its queue and responder are reset after each test. */
export function setupLetterModel() {
  const state: { server?: FakeChatServer } = {};
  beforeAll(async () => {
    state.server = await startFakeOpenAiChatServer({ apiKey: "llm-key", responder: letterResponder() });
    setLanguageModel(
      createOpenAiChatModel({
        baseUrl: state.server.url,
        apiKey: "llm-key",
        model: "test-model",
        structuredOutput: "json_schema",
        contextTokens: 16_000,
        timeoutMs: 2_000,
        retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
      }),
    );
  });
  afterAll(async () => {
    setLanguageModel(undefined);
    await state.server?.close();
  });
  afterEach(() => {
    state.server!.replies = [];
    state.server!.responder = letterResponder();
  });
  return () => state.server!;
}

/** A model that answers every schema it is sent: sections quote what the transcript block says. */
export function letterResponder(documentType = "patient_conversation") {
  return (request: FakeChatRequest) => {
    const schema = request.body?.response_format?.json_schema?.schema;
    const text = (request.body.messages as Array<{ content: string }>).map((m) => m.content).join("\n");
    const transcript = findDataBlocks(text).find((b) => b.kind === "TRANSCRIPT")?.body ?? "";
    if (schema?.properties?.sections) {
      const keys = Object.keys(schema.properties.sections.properties);
      const first = citableLine(transcript.split("\n")[0] ?? "");
      const sections = Object.fromEntries(
        keys.map((key, i) => [
          key,
          sectionAnswer(schema, key, i === 0 ? `Aus dem Gespräch: ${first.text}` : "", first.sources),
        ]),
      );
      return reply.json({ document_type: documentType, sections });
    }
    if (schema?.properties?.refined_text || schema?.properties?.text) {
      return reply.json({ [Object.keys(schema.properties)[0]!]: "Überarbeitet." });
    }
    if (schema?.properties?.sections === undefined && schema?.properties) {
      // Bulk refinement and anything else: the smallest valid answer with every string filled in.
      return reply.json(fill(schema));
    }
    return reply.text("OK");
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON schema from the wire
function fill(schema: any): unknown {
  if (schema.type === "object") {
    return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, fill(v)]));
  }
  if (schema.type === "array") return Array.from({ length: schema.minItems ?? 0 }, () => fill(schema.items));
  if (schema.enum) return schema.enum[0];
  if (schema.type === "string") return "Überarbeitet.";
  return null;
}

export async function call(route: Parameters<typeof callRoute>[0], client: ApiClient, path: string, json?: unknown) {
  const response = await callRoute(route, client(path, json === undefined ? {} : { method: "POST", json }));
  return { status: response.status, body: await response.json() };
}

export async function withParams(
  route: Parameters<typeof callRoute>[0],
  client: ApiClient,
  path: string,
  params: Record<string, string>,
  init: { method?: string; json?: unknown } = {},
) {
  const response = await callRoute(route, client(path, init), params);
  return { status: response.status, body: await response.json() };
}

/** signIn(account): an API client for a development account, and the user its first call made. */
export function signInWith(app: { readonly issuer: string }) {
  return async function signIn(account: string) {
    const client = await apiClientFor(app.issuer, account);
    await call(filesLoader, client, "/api/files");
    return { client, userId: await userIdOf(account) };
  };
}

export const CONSULTATION = [
  { speaker: "S1" as const, text: "Guten Tag, was führt Sie zu mir?" },
  { speaker: "S2" as const, text: "Seit drei Tagen habe ich Brustschmerzen beim Treppensteigen." },
  { speaker: "S1" as const, text: "Wir machen ein EKG und ich verschreibe Ihnen ASS 100 mg." },
];

export async function createAndRun(client: ApiClient, sourceKey: string, recordingId: string) {
  const created = await call(createAction, client, "/api/medical-letter-v2", {
    source_key: sourceKey,
    original_filename: "Sprechstunde.wav",
    transcript_data: "ignored",
  });
  expect(created.status).toBe(202);
  const job = await letterJobOf(recordingId);
  expect(await runLetterJob(job!.id)).toBe("completed");
  return created.body;
}
