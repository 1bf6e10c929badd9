import { describe, expect, it, vi } from "vitest";
import { getDb } from "~/models/db.server";
import { findDataBlocks } from "~/services/letters/data-blocks";
import { reply } from "../support/fake-openai-chat";
import { chatPage, conversationOf, cookieIn, setupChatModel } from "../support/chat-fixtures";
import { GERMAN_LINES, germanTextPdf, htmlNamedPdf, truncatedPdf } from "../support/pdf-fixtures";
import { setupTestApp, signedInUser } from "../setup/app";

// The chat screen without JavaScript (issue 8, SPEC §2/§4/§5 "Chat"): questions, PDF context and "clear chat" as
// plain form posts against a real database, the answer from the OpenAI-compatible engine talking to the fake
// server, the page rendered as the server renders it. Every conversation stays its owner's.
setupTestApp();
const llm = setupChatModel();

const send = (question: string) => ({ fields: { intent: "send", question } });
const lastUserMessage = () => {
  const messages = llm().chatRequests().at(-1)!.body.messages as Array<{ role: string; content: string }>;
  return messages.at(-1)!.content;
};

describe("the chat screen", () => {
  it("answers a question posted as a plain form, and shows the conversation", async () => {
    const { user, cookie } = await signedInUser({ email: "frage@praxis.example" });
    const empty = await chatPage(cookie);
    expect(empty.html).toContain("Noch keine Nachrichten.");
    expect(empty.html).toMatch(/<form method="post" action="\/chat" enctype="multipart\/form-data"/i);
    expect(empty.html).toContain('accept="application/pdf,.pdf"');

    const posted = await chatPage(cookie, send("Was bedeutet NYHA II?"));
    expect(posted).toMatchObject({ status: 302, location: "/chat#latest" });
    expect((await conversationOf(user.id)).messages).toEqual([
      { role: "user", status: "done", content: "Was bedeutet NYHA II?" },
      { role: "assistant", status: "done", content: "Antwort auf: Was bedeutet NYHA II?" },
    ]);
    const sent = llm().chatRequests().at(-1)!.body;
    expect(sent.messages[0].role).toBe("system");
    expect(sent.messages[0].content).toContain("German (de-DE)");
    expect(sent.stream).toBeUndefined();

    const page = await chatPage(cookie);
    expect(page.html).toContain("Antwort auf: Was bedeutet NYHA II?");
    expect(page.html).toContain('data-role="assistant" data-status="done"');
    // SPEC §2: the PDF area only while the conversation has no answer.
    expect(page.html).not.toContain("data-chat-pdf");

    const usage = await getDb()
      .selectFrom("usage_events")
      .where("user_id", "=", user.id)
      .where("endpoint", "=", "chat-request")
      .where("unit", "!=", "call")
      .select(["unit", "units"])
      .execute();
    expect(usage.map((u) => u.unit).sort()).toEqual(["input_token", "output_token"]);
    const audited = await getDb()
      .selectFrom("audit_events")
      .where("user_id", "=", user.id)
      .select(["action", "outcome"])
      .execute();
    expect(audited).toEqual(
      expect.arrayContaining([
        { action: "chat.ask", outcome: "success" },
        { action: "chat.answer", outcome: "success" },
        { action: "chat.read", outcome: "success" },
      ]),
    );
  });

  it("shows what the model writes as text, never as markup", async () => {
    const { cookie } = await signedInUser({ email: "escape@praxis.example" });
    llm().replies = [reply.text('<script>alert("x")</script><img src=x onerror=alert(1)>')];
    await chatPage(cookie, send("Zeig mir HTML."));
    const page = await chatPage(cookie);
    expect(page.html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img");
    expect(page.html).not.toContain("<img src=x");
  });

  it("puts a real PDF's text before the question, and takes no PDF after the first answer", async () => {
    const { user, cookie } = await signedInUser({ email: "pdf@praxis.example" });
    const pdf = { name: "Befund.pdf", data: await germanTextPdf() };
    const posted = await chatPage(cookie, { ...send("Fasse den Befund zusammen."), files: [pdf] });
    expect(posted.status).toBe(302);
    const blocks = findDataBlocks(lastUserMessage());
    expect(blocks).toHaveLength(1);
    expect(blocks[0]).toMatchObject({ kind: "CONTEXT", attributes: { kind: "pdf", name: "Befund.pdf" } });
    expect(blocks[0]!.body).toContain(GERMAN_LINES[0]);
    expect(lastUserMessage().endsWith("Fasse den Befund zusammen.")).toBe(true);
    const { messages, context } = await conversationOf(user.id);
    expect(messages[1]!.content).toBe(`Antwort auf: Fasse den Befund zusammen. | PDF Befund.pdf: ${GERMAN_LINES[0]}`);
    expect(context.map((c) => c.name)).toEqual(["Befund.pdf"]);
    expect((await chatPage(cookie)).html).toContain("Befund.pdf");

    // The next question carries the context again; a PDF after the first answer is refused.
    await chatPage(cookie, send("Und die Größe?"));
    expect(findDataBlocks(lastUserMessage())[0]!.body).toContain(GERMAN_LINES[0]);
    const late = await chatPage(cookie, { fields: { intent: "attach" }, files: [pdf] });
    expect(late.status).toBe(409);
    expect(late.html).toContain("PDF-Dateien können nur vor der ersten Antwort hinzugefügt werden.");
  });

  it("attaches PDFs without a question, and asks the model nothing", async () => {
    const { user, cookie } = await signedInUser({ email: "anhang@praxis.example" });
    const before = llm().chatRequests().length;
    const attached = await chatPage(cookie, {
      fields: { intent: "attach" },
      files: [{ name: "Labor.pdf", data: await germanTextPdf() }],
    });
    expect(attached).toMatchObject({ status: 302, location: "/chat" });
    expect((await conversationOf(user.id)).context.map((c) => c.name)).toEqual(["Labor.pdf"]);
    expect(llm().chatRequests().length).toBe(before);
    const page = await chatPage(cookie);
    expect(page.html).toContain("Kontext aus PDF");
    expect(page.html).toContain("data-chat-pdf");
  });

  it("refuses a file that is not a PDF, whatever its name, and keeps the typed question", async () => {
    const { user, cookie } = await signedInUser({ email: "kein-pdf@praxis.example" });
    const before = llm().chatRequests().length;
    const html = htmlNamedPdf();
    const refused = await chatPage(cookie, { ...send("Was steht im Befund?"), files: [html] });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain("„befund.pdf“ ist keine PDF-Datei. Es werden nur PDF-Dateien angenommen.");
    expect(refused.html).toContain("Was steht im Befund?</textarea>");
    const english = await chatPage(await cookieIn(cookie, "en"), { fields: { intent: "attach" }, files: [html] });
    expect(english.html).toContain("“befund.pdf” is not a PDF file. Only PDF files are accepted.");
    expect(await conversationOf(user.id)).toEqual({ messages: [], context: [] });
    expect(llm().chatRequests().length).toBe(before);
  });

  it("logs a PDF that cannot be read, without its content, still sends the question, and says so", async () => {
    const { user, cookie } = await signedInUser({ email: "kaputt@praxis.example" });
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const posted = await chatPage(cookie, {
        ...send("Was steht drin?"),
        files: [{ name: "Kaputt.pdf", data: await truncatedPdf() }],
      });
      expect(posted.status).toBe(302);
      const logged = warn.mock.calls.map((call) => call.join(" ")).join("\n");
      expect(logged).toContain("a PDF could not be read (broken)");
      expect(logged).not.toContain("Befund");
    } finally {
      warn.mockRestore();
    }
    expect(findDataBlocks(lastUserMessage())).toEqual([]);
    const { messages, context } = await conversationOf(user.id);
    expect(messages.map((m) => m.status)).toEqual(["done", "done"]);
    // Kept by name only, so the clinician sees that the file gave nothing rather than a silent omission.
    expect(context).toEqual([{ name: "Kaputt.pdf", text: "" }]);
    const page = await chatPage(cookie);
    expect(page.html).toMatch(
      /data-readable="false">Kaputt\.pdf<span[^>]*> \(<!-- -->ohne lesbaren Text, nicht verwendet/,
    );
  });

  it("keeps the PDF area open after a failed answer, so the context can still be added", async () => {
    const { user, cookie } = await signedInUser({ email: "pdf-fehler@praxis.example" });
    llm().replies = [reply.error(500), reply.error(500), reply.error(500)];
    expect((await chatPage(cookie, send("Erste Frage?"))).status).toBe(302);
    expect((await conversationOf(user.id)).messages.map((m) => m.status)).toEqual(["done", "failed"]);
    const page = await chatPage(cookie);
    expect(page.html).toContain("data-chat-pdf");
    const attached = await chatPage(cookie, {
      fields: { intent: "attach" },
      files: [{ name: "Nachgereicht.pdf", data: await germanTextPdf() }],
    });
    expect(attached.status).toBe(302);
    expect((await conversationOf(user.id)).context.map((c) => c.name)).toEqual(["Nachgereicht.pdf"]);
    // A good answer closes it again.
    await chatPage(cookie, send("Und jetzt?"));
    expect((await chatPage(cookie)).html).not.toContain("data-chat-pdf");
  });

  it("asks for a question, and bounds its length", async () => {
    const { cookie } = await signedInUser({ email: "leer@praxis.example" });
    expect((await chatPage(cookie, send("   "))).html).toContain("Bitte geben Sie eine Frage ein.");
    const long = await chatPage(cookie, send("x".repeat(4001)));
    expect(long.status).toBe(400);
    expect(long.html).toContain("Die Frage ist zu lang (höchstens 4000 Zeichen).");
  });

  it("keeps every conversation to its owner", async () => {
    const anna = await signedInUser({ email: "anna@praxis.example" });
    const ben = await signedInUser({ email: "ben@praxis.example" });
    await chatPage(anna.cookie, {
      ...send("Annas geheime Frage"),
      files: [{ name: "Anna.pdf", data: await germanTextPdf() }],
    });

    const bens = await chatPage(ben.cookie);
    expect(bens.html).not.toContain("Annas geheime Frage");
    expect(bens.html).not.toContain("Anna.pdf");
    await chatPage(ben.cookie, send("Bens Frage"));
    const sentForBen = JSON.stringify(llm().chatRequests().at(-1)!.body.messages);
    expect(sentForBen).not.toContain("Annas geheime Frage");
    expect(sentForBen).not.toContain(GERMAN_LINES[0]);

    // Ben's "clear chat" clears only his.
    expect((await chatPage(ben.cookie, { fields: { intent: "clear" } })).status).toBe(302);
    expect(await conversationOf(ben.user.id)).toEqual({ messages: [], context: [] });
    expect((await conversationOf(anna.user.id)).messages).toHaveLength(2);
  });

  it("clears messages and context, and offers the PDF area again", async () => {
    const { user, cookie } = await signedInUser({ email: "leeren@praxis.example" });
    await chatPage(cookie, { ...send("Erste Frage"), files: [{ name: "X.pdf", data: await germanTextPdf() }] });
    const cleared = await chatPage(cookie, { fields: { intent: "clear" } });
    expect(cleared).toMatchObject({ status: 302, location: "/chat" });
    expect(await conversationOf(user.id)).toEqual({ messages: [], context: [] });
    const page = await chatPage(cookie);
    expect(page.html).toContain("data-chat-pdf");
    expect(page.html).toContain("Noch keine Nachrichten.");
  });
});
