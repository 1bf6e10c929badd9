import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { I18nextProvider } from "react-i18next";
import { createStaticHandler, createStaticRouter, StaticRouterProvider } from "react-router-dom/server";
import { afterAll, afterEach, beforeAll } from "vitest";
import { listChatContext, listChatMessages } from "~/models/chat.server";
import ChatPage, { action as chatAction, loader as chatLoader } from "~/routes/_app.chat/route";
import { createI18n, languageCookie } from "~/services/web/i18n.server";
import { setLanguageModel } from "~/services/llm/engine.server";
import { createOpenAiChatModel } from "~/services/llm/openai-chat.server";
import { request } from "../setup/app";
import { chatModel } from "./fake-llm-chat";
import { startFakeOpenAiChatServer, type FakeChatServer } from "./fake-openai-chat";

// The chat's loader/action tests (issue 8): the real OpenAI-compatible engine against the fake server with the
// named chat behaviour (fake-llm-chat.ts), forms posted as a browser posts them, and the chat page rendered to
// HTML as the server renders it without JavaScript.

/** The fake language model for one test file; its queue and responder are reset after each test. */
export function setupChatModel() {
  const state: { server?: FakeChatServer } = {};
  beforeAll(async () => {
    state.server = await startFakeOpenAiChatServer({ apiKey: "chat-key", responder: chatModel });
    setLanguageModel(
      createOpenAiChatModel({
        baseUrl: state.server.url,
        apiKey: "chat-key",
        model: "test-model",
        structuredOutput: "json_schema",
        contextTokens: 8192,
        timeoutMs: 5_000,
        retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
      }),
    );
  });
  afterEach(() => {
    state.server!.replies = [];
    state.server!.responder = chatModel;
    state.server!.streamDelayMs = 0;
  });
  afterAll(async () => {
    setLanguageModel(undefined);
    await state.server?.close();
  });
  return () => state.server!;
}

export type ChatFields = Record<string, string>;
export type ChatFile = { name: string; data: Uint8Array; type?: string };

/** The cookie header of a user in a language ("de" is the default without a language cookie). */
export async function cookieIn(cookie: string, language: "de" | "en" = "de") {
  return language === "de" ? cookie : `${cookie}; ${(await languageCookie().serialize("en")).split(";")[0]}`;
}

/** A POST as the chat screen's forms send it: multipart with files, otherwise url-encoded. */
export function chatRequest(path: string, cookie: string, fields: ChatFields, files: ChatFile[] = []) {
  const headers = { "Sec-Fetch-Site": "same-origin" };
  if (files.length === 0 && !("question" in fields)) {
    return request(path, { method: "POST", cookie, headers, body: new URLSearchParams(fields) });
  }
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  for (const file of files)
    body.append("pdf", new File([new Uint8Array(file.data)], file.name, { type: file.type ?? "application/pdf" }));
  return request(path, { method: "POST", cookie, headers, body });
}

/* eslint-disable @typescript-eslint/no-explicit-any -- Remix loaders handed to React Router's static handler */
const routes = [
  {
    id: "routes/_app.chat",
    path: "/chat",
    loader: (args: any) => chatLoader(args),
    action: (args: any) => chatAction(args),
    Component: ChatPage,
  },
];
/* eslint-enable @typescript-eslint/no-explicit-any */
const handler = createStaticHandler(routes);

/** The chat page as the server renders it for a GET or a form POST (status, redirect or HTML). */
export async function chatPage(cookie: string, post?: { fields: ChatFields; files?: ChatFile[] }) {
  const req = post
    ? chatRequest("/chat", cookie, post.fields, post.files)
    : request("/chat", { cookie, headers: { "Sec-Fetch-Site": "same-origin" } });
  const context = await handler.query(req);
  if (context instanceof Response)
    return { status: context.status, location: context.headers.get("Location"), html: "" };
  const router = createStaticRouter(handler.dataRoutes, context);
  const english = cookie.includes("skribent_lng");
  const i18n = await createI18n(english ? "en" : "de");
  const html = renderToString(
    createElement(I18nextProvider, { i18n }, createElement(StaticRouterProvider, { router, context, hydrate: false })),
  );
  return { status: context.statusCode, location: null, html };
}

export async function conversationOf(userId: string) {
  const [messages, context] = await Promise.all([
    listChatMessages({ ownerId: userId }),
    listChatContext({ ownerId: userId }),
  ]);
  return {
    messages: messages.map((m) => ({ role: m.role, status: m.status, content: m.content })),
    context: context.map((c) => ({ name: c.file_name, text: c.text })),
  };
}

/** The server-sent events of a chat stream, parsed, once it has ended. */
export async function readEvents(response: Response) {
  const text = await response.text();
  return text
    .split("\n\n")
    .map((event) => event.split("\n").find((line) => line.startsWith("data: ")))
    .filter((line): line is string => Boolean(line))
    .map((line) => JSON.parse(line.slice("data: ".length)) as Record<string, unknown>);
}
