import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { action as streamAction } from "~/routes/resources.chat-stream";
import { ANSWER_STALE_MS, sweepChats } from "~/services/chat/chat.server";
import { getDb } from "~/models/db.server";
import { reply } from "../support/fake-openai-chat";
import { chatPage, chatRequest, conversationOf, cookieIn, readEvents, setupChatModel } from "../support/chat-fixtures";
import { germanTextPdf } from "../support/pdf-fixtures";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// The chat's streamed send (issue 8): the answer as server-sent events from /resources/chat-stream, piece by piece
// as the engine streams it; a second send while an answer is being written refused before any model call; a
// failed answer as SPEC §8's apology; and the minute sweep (answers whose writer died, expired conversations).
const app = setupTestApp();
const llm = setupChatModel();

const post = (cookie: string, question: string, files = [] as Array<{ name: string; data: Uint8Array }>) =>
  callRoute(streamAction, chatRequest("/resources/chat-stream", cookie, { intent: "send", question }, files));

async function until(check: () => Promise<boolean>) {
  for (let i = 0; i < 200 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe("the streamed chat", () => {
  it("streams the answer as server-sent events and stores the same text", async () => {
    const { user, cookie } = await signedInUser({ email: "stream@praxis.example" });
    llm().streamDelayMs = 2;
    const response = await post(cookie, "Was ist ein Entlassbrief?", [
      { name: "Brief.pdf", data: await germanTextPdf() },
    ]);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("text/event-stream; charset=utf-8");
    expect(response.headers.get("Cache-Control")).toContain("no-transform");
    const events = await readEvents(response);
    expect(events[0]).toMatchObject({ type: "start" });
    const pieces = events.filter((e) => e.type === "text").map((e) => e.text as string);
    expect(pieces.length).toBeGreaterThan(3);
    const done = events.at(-1)!;
    expect(done).toMatchObject({ type: "done", truncated: false });
    expect(pieces.join("").trim()).toBe(done.content);
    expect(done.content).toMatch(/^Antwort auf: Was ist ein Entlassbrief\? \| PDF Brief\.pdf: /);
    expect(llm().chatRequests().at(-1)!.body).toMatchObject({ stream: true });
    const { messages } = await conversationOf(user.id);
    expect(messages.at(-1)).toEqual({ role: "assistant", status: "done", content: done.content });
  });

  it("refuses a second send while an answer is being written, without a second model call", async () => {
    const { user, cookie } = await signedInUser({ email: "doppelt@praxis.example" });
    llm().replies = [reply.slow(400, reply.text("Die erste Antwort."))];
    const before = llm().chatRequests().length;
    const first = await post(cookie, "Erste Frage");
    expect(first.status).toBe(200);
    await until(async () => llm().chatRequests().length > before);

    const second = await post(cookie, "Zweite Frage");
    expect(second.status).toBe(409);
    expect(await second.json()).toEqual({
      detail: "Die vorige Antwort wird noch erstellt. Bitte warten Sie, bis sie fertig ist.",
    });
    const viaForm = await chatPage(await cookieIn(cookie, "en"), { fields: { intent: "send", question: "Third" } });
    expect(viaForm.status).toBe(409);
    expect(viaForm.html).toContain("The previous answer is still being written.");
    const page = await chatPage(cookie);
    expect(page.html).toContain('data-status="pending"');
    expect(page.html).toContain("Denkt nach …");

    expect((await readEvents(first)).at(-1)).toMatchObject({ type: "done", content: "Die erste Antwort." });
    expect(llm().chatRequests().length - before).toBe(1);
    expect((await conversationOf(user.id)).messages.map((m) => m.content)).toEqual([
      "Erste Frage",
      "Die erste Antwort.",
    ]);
  });

  it("turns a model failure into the apology, in the clinician's language", async () => {
    const { user, cookie } = await signedInUser({ email: "fehler@praxis.example" });
    llm().replies = [reply.error(500), reply.error(500), reply.error(500)];
    const events = await readEvents(await post(await cookieIn(cookie, "en"), "Geht das?"));
    expect(events.at(-1)).toEqual({ type: "error", message: "Sorry, I encountered an error. Please try again." });
    expect((await conversationOf(user.id)).messages.at(-1)).toMatchObject({ status: "failed", content: "" });
    const page = await chatPage(cookie);
    expect(page.html).toContain('data-status="failed"');
    expect(page.html).toContain("Entschuldigung, es ist ein Fehler aufgetreten. Bitte versuchen Sie es erneut.");

    // The form door as well; and the next question goes out without the failed turn.
    llm().replies = [reply.error(500), reply.error(500), reply.error(500)];
    expect((await chatPage(cookie, { fields: { intent: "send", question: "Noch einmal?" } })).status).toBe(302);
    expect((await conversationOf(user.id)).messages.map((m) => m.status)).toEqual(["done", "failed", "done", "failed"]);
    await chatPage(cookie, { fields: { intent: "send", question: "Jetzt?" } });
    const roles = (llm().chatRequests().at(-1)!.body.messages as Array<{ role: string }>).map((m) => m.role);
    expect(roles).toEqual(["system", "user"]);
  });

  it("answers 401 JSON to a request without a session", async () => {
    const response = await callRoute(
      streamAction,
      request("/resources/chat-stream", { method: "POST", headers: { "Sec-Fetch-Site": "same-origin" } }),
    );
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ detail: "Unauthorized" });
  });
});

describe("the chat sweep", () => {
  async function age(userId: string, table: "chat_messages" | "chat_context", ms: number) {
    const at = new Date(Date.now() - ms);
    if (table === "chat_messages")
      await getDb()
        .updateTable("chat_messages")
        .set({ created_at: at, updated_at: at } as never)
        .where("owner_id", "=", userId)
        .execute();
    else
      await getDb()
        .updateTable("chat_context")
        .set({ created_at: at } as never)
        .where("owner_id", "=", userId)
        .execute();
  }

  it("deletes conversations past their retention, keeps recent ones, and fails answers whose writer died", async () => {
    const retention = app.config.chat.retentionMs;
    const old = await signedInUser({ email: "alt@praxis.example" });
    const recent = await signedInUser({ email: "neu@praxis.example" });
    const attachedOnly = await signedInUser({ email: "nur-pdf@praxis.example" });
    const orphan = await signedInUser({ email: "verwaist@praxis.example" });
    await chatPage(old.cookie, { fields: { intent: "send", question: "Alte Frage" } });
    await chatPage(recent.cookie, { fields: { intent: "send", question: "Neue Frage" } });
    await chatPage(attachedOnly.cookie, {
      fields: { intent: "attach" },
      files: [{ name: "A.pdf", data: await germanTextPdf() }],
    });
    await age(old.user.id, "chat_messages", retention + 60_000);
    await age(attachedOnly.user.id, "chat_context", retention + 60_000);
    // An answer whose writer stopped its heartbeat (the process died).
    await getDb()
      .insertInto("chat_messages")
      .values([
        { owner_id: orphan.user.id, role: "user", content: "Frage", status: "done" },
        { owner_id: orphan.user.id, role: "assistant", status: "pending", updated_at: sql`now() - interval '1 hour'` },
      ])
      .execute();
    expect(ANSWER_STALE_MS).toBeLessThan(3_600_000);

    const swept = await sweepChats();
    expect(swept).toMatchObject({ failed: 1, messages: 2, context: 1 });
    expect(await conversationOf(old.user.id)).toEqual({ messages: [], context: [] });
    expect(await conversationOf(attachedOnly.user.id)).toEqual({ messages: [], context: [] });
    expect((await conversationOf(recent.user.id)).messages).toHaveLength(2);
    expect((await conversationOf(orphan.user.id)).messages.map((m) => m.status)).toEqual(["done", "failed"]);
  });
});
