import { describe, expect, it } from "vitest";
import { action as customTemplateAction } from "~/routes/api.structure.custom-template";
import { action as promptsAction } from "~/routes/api.prompts";
import { action as structureAction } from "~/routes/api.structure.user";
import { action as settingsAction } from "~/routes/_app.settings/route";
import { action as accountAction } from "~/routes/_app.settings.account";
import { action as newTemplateAction } from "~/routes/_app.settings.new";
import { action as sessionsAction } from "~/routes/_app.settings.sessions";
import { action as vocabularyAction } from "~/routes/_app.settings.vocabulary";
import { action as letterheadAction } from "~/routes/_app.settings.letterhead";
import { getDb } from "~/models/db.server";
import { readSession, startSession } from "~/services/web/session.server";
import { getUserStructure } from "~/services/templates/templates.server";
import type { World } from "./access-matrix-fixture";
import { forged, forgedFields, form, json } from "./access-matrix-mass";
import { callRoute, request, signedInUser } from "../setup/app";

// Issue 9 mass assignment, continued: saved prompts, templates and structures, and the settings forms.

export function massAssignmentSettingsSuite(context: () => World) {
  const forgedNow = () => forged(context());

  describe("mass assignment: prompts, templates and settings", () => {
    it("a saved prompt gets its own id and B as owner; there is no update through the API", async () => {
      const world = context();
      const saved = await json(
        promptsAction,
        world.jonas.api("/api/prompts", {
          method: "POST",
          json: { ...forgedNow(), title: "B-Prompt", prompt_text: "x" },
        }),
      );
      expect(saved.status).toBe(201);
      expect(saved.body.prompt.id).not.toBe(world.keys.a.promptId);
      const row = await getDb()
        .selectFrom("saved_prompts")
        .where("id", "=", saved.body.prompt.id)
        .selectAll()
        .executeTakeFirstOrThrow();
      expect(row.owner_id).toBe(world.jonas.userId);
      const put = await json(
        promptsAction,
        world.jonas.api("/api/prompts", { method: "PUT", json: { ...forgedNow(), title: "x" } }),
      );
      expect(put.status).toBe(405);
    });

    it("settings forms: B's consent and B's new template, whoever the form names (A's consent is compared last)", async () => {
      const world = context();
      const { a } = world.keys;
      const cookie = world.jonas.cookie;
      // B gave consent earlier (the matrix's rag-permission call); withdrawing it names A's user id.
      const rag = await callRoute(
        settingsAction,
        form("/settings", cookie, { ...forgedFields(world), intent: "rag", ragAgreed: "false", language: "de-DE" }),
      );
      expect(rag.status).toBe(302);
      const created = await callRoute(
        newTemplateAction,
        form("/settings/new?language=de-DE", cookie, {
          ...forgedFields(world),
          templateId: a.templateId,
          name: "B neu",
          "elements[0].name": "Befund",
          "elements[0].description": "Befund",
          prompt: "",
        }),
      );
      expect(created.status).toBe(302);
      const rows = await getDb().selectFrom("custom_templates").where("name", "=", "B neu").selectAll().execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ owner_id: world.jonas.userId });
      expect(rows[0].template_id).not.toBe(a.templateId);
      const consent = await getDb()
        .selectFrom("users")
        .where("id", "=", world.jonas.userId)
        .select("rag_agreed")
        .executeTakeFirstOrThrow();
      expect(consent.rag_agreed).toBe(false);
    });

    it("deleting one's account with A's ids in the form deletes one's own", async () => {
      const world = context();
      const third = await signedInUser({ email: "dritte@praxis.example" });
      const fields = { ...forgedFields(world), email: "anna.berger@praxis-berger.example", confirm: "yes" };
      const deleted = await callRoute(accountAction, form("/settings/account", third.cookie, fields));
      expect(deleted.status).toBe(302);
      const users = await getDb()
        .selectFrom("users")
        .where("id", "in", [third.user.id, world.keys.a.userId])
        .select("id")
        .execute();
      expect(users.map((u) => u.id)).toEqual([world.keys.a.userId]);
    });

    it("ending sessions with A's ids in the form ends only B's own other sessions", async () => {
      const world = context();
      const second = (await startSession({ userId: world.jonas.userId, idToken: null })).split(";")[0];
      const fields = { ...forgedFields(world), intent: "end-others", session: world.keys.a.sessionId };
      const ended = await callRoute(sessionsAction, form("/settings/sessions", world.jonas.cookie, fields));
      expect(ended.status).toBe(302);
      const alive = async (cookie: string) => (await readSession(request("/", { cookie }))).kind;
      expect([await alive(second), await alive(world.jonas.cookie)]).toEqual(["none", "active"]);
    });

    it("a term added by hand with A's ids in the form is B's own, and A's term stays", async () => {
      const world = context();
      const fields = {
        ...forgedFields(world),
        id: world.keys.a.vocabularyId,
        intent: "add",
        term: "Forged",
        language: "de",
      };
      const added = await callRoute(vocabularyAction, form("/settings/vocabulary", world.jonas.cookie, fields));
      expect(added.status).toBe(302);
      const rows = await getDb()
        .selectFrom("user_vocabulary")
        .where("content", "=", "Forged")
        .select(["id", "owner_id", "sounds_like"])
        .execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ owner_id: world.jonas.userId, sounds_like: [] });
      expect(rows[0].id).not.toBe(world.keys.a.vocabularyId);
    });

    it("a letterhead saved with A's ids in the form is B's own, and A's stays as it was", async () => {
      const world = context();
      const fields = {
        ...forgedFields(world),
        id: world.keys.a.letterheadId,
        scope: "practice",
        intent: "save",
        practiceName: "Praxis Forged",
      };
      const saved = await callRoute(letterheadAction, form("/settings/letterhead", world.jonas.cookie, fields));
      expect(saved.status).toBe(302);
      const rows = await getDb()
        .selectFrom("letterheads")
        .where("practice_name", "=", "Praxis Forged")
        .select(["id", "scope", "owner_id"])
        .execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ scope: "user", owner_id: world.jonas.userId });
      expect(rows[0].id).not.toBe(world.keys.a.letterheadId);
    });

    // Last: from here on an id like A's template id names a template of B's.
    it("a custom template and a structure are B's, never a system template, and protect nothing B named", async () => {
      const world = context();
      // Template ids are per owner: B proposing the id of A's template gets a template of B's own under it.
      const templateId = world.keys.a.templateId;
      const api = world.jonas.api;
      const element = { name: "Eigenes", description: "x", isProtected: true, is_protected: true };
      const created = await json(
        customTemplateAction,
        api("/api/structure/custom-template", {
          method: "POST",
          json: {
            ...forgedNow(),
            organization: "partner",
            template_id: templateId,
            custom_name: "B eigen",
            language_code: "de-DE",
            structure_elements: [element],
            prompt: "",
          },
        }),
      );
      expect(created.status).toBe(201);
      const custom = await getUserStructure({ userId: world.jonas.userId, templateId, language: "de-DE" });
      expect(custom).toMatchObject({ isSystem: false, elements: [{ id: "eigenes", isProtected: false }] });

      const put = await json(
        structureAction,
        api("/api/structure/user?template=default&language=de", {
          method: "PUT",
          json: { ...forgedNow(), structure: [...(await defaultElements()), element], prompt: "" },
        }),
      );
      expect(put.status).toBe(200);
      const own = await getUserStructure({ userId: world.jonas.userId, templateId: "default", language: "de-DE" });
      expect(own.elements.find((e) => e.name === "Eigenes")).toMatchObject({ isProtected: false });
    });

    async function defaultElements() {
      const world = context();
      const structure = await getUserStructure({
        userId: world.jonas.userId,
        templateId: "default",
        language: "de-DE",
      });
      return structure.elements.map((e) => ({ id: e.id, name: e.name, description: e.description }));
    }
  });
}
