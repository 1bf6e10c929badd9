import { describe, expect, it } from "vitest";
import { insertProposal } from "~/models/letter.server";
import type { StoredLetterContent } from "~/models/schema";
import { action as editorAction } from "~/routes/_app.arztbriefe.$/route";
import { getDb } from "~/models/db.server";
import { setLanguageModel } from "~/services/llm/engine.server";
import { page, post, seedLetter, SOAP, titlesAndTexts, versionsOf } from "../support/letter-screens";
import { ScriptedModel } from "../support/scripted-model";
import { setupTestApp, signedInUser } from "../setup/app";

// The letter editor's revisions (issue 6): proposals accepted, rejected or stale, the refinement that asks the model
// for one (the only test with a language model, a scripted one), the version history with compare and restore, and the
// saved prompts. Called with real requests against a real database and rendered to HTML the way the server renders them
// (no JavaScript); letters are inserted through the models (tests/support/letter-screens.ts).
setupTestApp();

async function letterIdOf(key: string) {
  const row = await getDb().selectFrom("letters").where("storage_key", "=", key).select("id").executeTakeFirstOrThrow();
  return row.id;
}

describe("the letter editor", () => {
  it("turns a proposal into a version on accept, creates none on reject, and only lets a stale one be rejected", async () => {
    const { user, cookie } = await signedInUser({ email: "proposal@praxis.example" });
    const letter = await seedLetter(user.id);
    const letterId = await letterIdOf(letter.key);
    const proposed: StoredLetterContent = {
      structured_output: [
        { Anamnese: "Husten seit drei Tagen, kein Fieber." },
        { Befund: "Lunge frei." },
        { Procedere: "Keine Informationen gefunden" },
      ],
    };
    const one = await insertProposal({
      ownerId: user.id,
      letterId,
      baseVersion: 1,
      scope: "section",
      sectionTitle: "Anamnese",
      query: "Fieber erwähnen",
      content: proposed,
    });
    const view = await page(`${letter.editor}?proposal=${one.id}`, cookie);
    expect(view.html).toContain(`data-proposal="${one.id}"`);
    expect(view.html).toMatch(/data-diff-section="Anamnese" data-change="changed"/);
    expect(view.html).toMatch(/<del[^>]*>Tagen\.<\/del><ins[^>]*>Tagen, kein Fieber\.<\/ins>/);
    expect(view.html).toContain('data-action="accept"');
    expect(view.html).toContain('data-action="reject"');

    const rejectedOne = await insertProposal({
      ownerId: user.id,
      letterId,
      baseVersion: 1,
      scope: "all",
      sectionTitle: null,
      query: "Alles kürzen",
      content: proposed,
    });
    const rejected = await post(
      editorAction,
      letter.editor,
      cookie,
      { intent: "reject", proposalId: rejectedOne.id },
      {
        "*": letter.path,
      },
    );
    expect(rejected.status).toBe(302);
    expect(await versionsOf(letter.key)).toHaveLength(1);

    const accepted = await post(
      editorAction,
      letter.editor,
      cookie,
      { intent: "accept", proposalId: one.id },
      {
        "*": letter.path,
      },
    );
    expect(accepted.status).toBe(302);
    const versions = await versionsOf(letter.key);
    expect(versions.map((v) => v.kind)).toEqual(["generated", "refined"]);
    expect(versions[1]!.content).toEqual(proposed);

    // A proposal made from version 1 is stale now: it can only be rejected.
    const late = await insertProposal({
      ownerId: user.id,
      letterId,
      baseVersion: 1,
      scope: "all",
      sectionTitle: null,
      query: "Spät",
      content: SOAP,
    });
    const stale = await page(`${letter.editor}?proposal=${late.id}`, cookie);
    expect(stale.html).toContain("data-stale");
    expect(stale.html).not.toContain('data-action="accept"');
    expect(stale.html).toContain('data-action="reject"');
    const forced = await page(`${letter.editor}?proposal=${late.id}`, cookie, {
      intent: "accept",
      proposalId: late.id,
    });
    expect(forced.status).toBe(409);
    expect(forced.html).toContain("The document was changed in the meantime");
    expect(await versionsOf(letter.key)).toHaveLength(2);
  });

  it("asks the model for a proposal on Update, and keeps an empty or refused instruction in the form", async () => {
    const { user, cookie } = await signedInUser({ email: "refine@praxis.example" });
    const letter = await seedLetter(user.id);
    const model = new ScriptedModel(() => ({ refined_text: "Husten seit drei Tagen, kein Fieber." }));
    setLanguageModel(model);
    try {
      const empty = await page(letter.editor, cookie, { intent: "refine", scope: "Anamnese", query: "  " });
      expect(empty.status).toBe(400);
      expect(empty.html).toContain("Please enter an instruction.");
      const unknownSection = await page(letter.editor, cookie, {
        intent: "refine",
        scope: "Gibt es nicht",
        query: "Kürzer, bitte",
      });
      expect(unknownSection.status).toBe(400);
      expect(unknownSection.html).toContain("Section not found");
      expect(unknownSection.html).toContain("Kürzer, bitte</textarea>");

      const asked = await post(
        editorAction,
        letter.editor,
        cookie,
        {
          intent: "refine",
          scope: "Anamnese",
          query: "Fieber erwähnen",
        },
        { "*": letter.path },
      );
      expect(asked.status).toBe(302);
      const location = asked.headers.get("Location")!;
      expect(location).toMatch(new RegExp(`^${letter.editor}\\?proposal=[0-9a-f-]{36}$`));
      expect(model.requests).toHaveLength(1);
      // A proposal is not a version.
      expect(await versionsOf(letter.key)).toHaveLength(1);
      const { html } = await page(location, cookie);
      expect(html).toMatch(/data-diff-section="Anamnese" data-change="changed"/);
      expect(html).toMatch(/data-diff-section="Befund" data-change="unchanged"/);
    } finally {
      setLanguageModel(undefined);
    }
  });

  it("lists the versions with their kind, compares one with the current version, and restores it as a new version", async () => {
    const { user, cookie } = await signedInUser({ email: "restore@praxis.example", name: "Dr. Restore" });
    const letter = await seedLetter(user.id);
    const { title, text } = titlesAndTexts(SOAP);
    await post(
      editorAction,
      letter.editor,
      cookie,
      {
        intent: "save",
        base_version: "1",
        title,
        text: [text[0]!, "Lunge: Giemen.", text[2]!],
      },
      { "*": letter.path },
    );
    const history = await page(`${letter.editor}?versions=1`, cookie);
    expect(history.html).toContain("data-versions");
    expect(history.html).toMatch(/data-version="2" data-kind="edited" data-current=""/);
    expect(history.html).toMatch(/data-version="1" data-kind="generated"/);
    expect(history.html).toContain("Dr. Restore");
    expect(history.html).toContain(`href="${letter.editor}?compare=1"`);

    const compare = await page(`${letter.editor}?compare=1`, cookie);
    expect(compare.html).toContain('data-compare="1"');
    expect(compare.html).toMatch(/<del[^>]*>Lunge frei\.<\/del><ins[^>]*>Lunge: Giemen\.<\/ins>/);

    const restored = await post(
      editorAction,
      letter.editor,
      cookie,
      { intent: "restore", version: "1" },
      {
        "*": letter.path,
      },
    );
    expect(restored.status).toBe(302);
    expect(restored.headers.get("Location")).toBe(`${letter.editor}?versions=1`);
    const versions = await versionsOf(letter.key);
    expect(versions.map((v) => v.kind)).toEqual(["generated", "edited", "restored"]);
    expect(versions[2]!.content).toEqual(versions[0]!.content);
  });

  it("saves three prompts and refuses the fourth with SPEC's message; use and delete go through the server", async () => {
    const { user, cookie } = await signedInUser({ email: "prompts@praxis.example" });
    const letter = await seedLetter(user.id);
    for (const n of [1, 2, 3]) {
      const saved = await post(
        editorAction,
        letter.editor,
        cookie,
        {
          intent: "savePrompt",
          scope: "__all__",
          query: `Anweisung ${n}`,
          title: `Prompt ${n}`,
          promptText: "",
        },
        { "*": letter.path },
      );
      expect(saved.status).toBe(302);
    }
    const fourth = await page(letter.editor, cookie, {
      intent: "savePrompt",
      scope: "__all__",
      query: "Noch eine",
      title: "Prompt 4",
      promptText: "Noch eine",
    });
    expect(fourth.status).toBe(400);
    expect(fourth.html).toContain("Maximum 3 prompts allowed. Please delete one first.");
    expect(fourth.html).toMatch(/<button[^>]*disabled=""[^>]*data-action="save-prompt"/);
    const tooLong = await post(
      editorAction,
      letter.editor,
      cookie,
      {
        intent: "savePrompt",
        query: "x",
        title: "t".repeat(41),
        promptText: "x",
      },
      { "*": letter.path },
    );
    expect((await tooLong.json()).promptError).toBe("The title may be at most 40 characters long.");

    const prompts = await getDb()
      .selectFrom("saved_prompts")
      .where("owner_id", "=", user.id)
      .select(["id", "prompt_text"])
      .orderBy("created_at", "asc")
      .execute();
    // Left empty, the prompt text is the instruction it was saved from.
    expect(prompts.map((p) => p.prompt_text)).toEqual(["Anweisung 1", "Anweisung 2", "Anweisung 3"]);
    const used = await page(letter.editor, cookie, { intent: "usePrompt", promptId: prompts[1]!.id, scope: "__all__" });
    expect(used.status).toBe(200);
    expect(used.html).toMatch(/<textarea[^>]*name="query"[^>]*>Anweisung 2<\/textarea>/);
    const removed = await post(
      editorAction,
      letter.editor,
      cookie,
      { intent: "deletePrompt", promptId: prompts[0]!.id },
      {
        "*": letter.path,
      },
    );
    expect(removed.status).toBe(302);
    const titleMissing = await post(
      editorAction,
      letter.editor,
      cookie,
      {
        intent: "savePrompt",
        query: "x",
        title: " ",
        promptText: "x",
      },
      { "*": letter.path },
    );
    expect((await titleMissing.json()).promptError).toBe("Title is required");
  });
});
