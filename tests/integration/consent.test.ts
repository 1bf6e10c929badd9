import fs from "node:fs";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { loader as filesLoader } from "~/routes/api.files";
import { action as uploadUrlAction } from "~/routes/api.get-upload-url";
import { action as partsStartAction } from "~/routes/api.upload-parts.start";
import { action as metadataAction } from "~/routes/api.update-file-metadata";
import { action as audioAction } from "~/routes/_app._index/route";
import { action as createLiveAction } from "~/routes/live.sessions";
import { DETAIL_LANGUAGE_HEADER } from "~/services/web/api.server";
import { setConfig } from "~/services/config/config.server";
import { getDb } from "~/models/db.server";
import { setupSpeechWav } from "../support/audio-fixtures";
import { apiClientFor, type ApiClient } from "../support/api-client";
import { userIdOf } from "../support/letter-fixtures";
import { serve } from "../support/remix-document";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";

// Issue 22, consent per recording: the doctor confirms the patient's consent (oral or written; by the patient or a
// legal representative) with every upload and live recording; it is stored with who confirmed it and when, shown in
// the list, and a recording without it is marked. CONSENT_REQUIRED=1 refuses any audio without it — on the pages and
// in the JSON API, with a translated detail. A withdrawn consent deletes the recording.
const app = setupTestApp({ provider: true });
const speech = setupSpeechWav();
let anna: ApiClient;
let annaId: string;

beforeAll(async () => {
  anna = await apiClientFor(app.issuer, "anna-berger");
  await callRoute(filesLoader, anna("/api/files"));
  annaId = await userIdOf("anna-berger");
});
afterEach(() => setConfig(app.config));

const consentOf = (key: string) =>
  getDb()
    .selectFrom("recordings")
    .where("storage_key", "=", key)
    .select(["consent_kind", "consent_given_by", "consent_confirmed_by", "consent_confirmed_at"])
    .executeTakeFirst();

function slot(json: Record<string, unknown>, language?: string) {
  return callRoute(
    uploadUrlAction,
    anna("/api/get-upload-url", {
      method: "POST",
      headers: language ? { [DETAIL_LANGUAGE_HEADER]: language } : {},
      json: { file_name: "visite.wav", file_type: "audio/wav", language_code: "de-DE", ...json },
    }),
  );
}

function formUpload(cookie: string, fields: Record<string, string>) {
  const form = new FormData();
  form.set("audio", new Blob([fs.readFileSync(speech.wav())], { type: "audio/wav" }), "Sprechstunde.wav");
  form.set("language", "de-DE");
  form.set("mode", "transcript");
  for (const [name, value] of Object.entries(fields)) form.set(name, value);
  return callRoute(
    audioAction,
    request("/?index", { method: "POST", cookie, headers: { "Sec-Fetch-Site": "same-origin" }, body: form }),
  );
}

describe("the patient's consent with an upload", () => {
  it("is stored with who confirmed it and when, through the JSON API; without it the recording has none", async () => {
    const before = new Date();
    const given = await slot({ consent: { kind: "written", given_by: "representative" } });
    expect(given.status).toBe(200);
    const stored = await consentOf((await given.json()).key);
    expect(stored).toMatchObject({
      consent_kind: "written",
      consent_given_by: "representative",
      consent_confirmed_by: annaId,
    });
    expect(stored!.consent_confirmed_at!.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);

    const none = await slot({});
    expect(await consentOf((await none.json()).key)).toMatchObject({ consent_kind: null, consent_confirmed_by: null });

    // Set afterwards with the metadata, as SPEC §7 clients send the rest of it.
    const later = (await (await slot({})).json()).key as string;
    const metadata = await callRoute(
      metadataAction,
      anna("/api/update-file-metadata", {
        method: "POST",
        json: { s3_key: later, metadata: { consent: { kind: "oral" } } },
      }),
    );
    // Nothing was PUT under the key: the upload check refuses, and nothing changes.
    expect(metadata.status).toBe(400);
    expect(await consentOf(later)).toMatchObject({ consent_kind: null });
  });

  it("refuses a consent it cannot read, naming the expected shape, in the caller's language", async () => {
    const english = await slot({ consent: { kind: "nodded" } });
    expect(english.status).toBe(400);
    expect((await english.json()).detail).toMatch(/expected \{ kind: "oral" or "written"/);
    const german = await slot({ consent: "ja" }, "de");
    expect((await german.json()).detail).toMatch(/^Die Angabe zur Einwilligung ist ungültig/);
  });

  it("is required everywhere audio comes in when the operator says so", async () => {
    setConfig({ ...app.config, consentRequired: true });
    const refused = await slot({}, "de");
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      detail: "Bitte bestätigen Sie zuerst die Einwilligung der Patientin / des Patienten zur Aufnahme.",
    });
    const parts = await callRoute(
      partsStartAction,
      anna("/api/upload-parts/start", {
        method: "POST",
        json: { file_name: "lang.wav", file_type: "audio/wav", file_size: 20_000_000, language_code: "de-DE" },
      }),
    );
    expect(parts.status).toBe(400);
    expect((await parts.json()).detail).toBe("Please confirm the patient's consent to the recording first.");
    expect((await slot({ consent: { kind: "oral" } })).status).toBe(200);

    // The form without JavaScript: refused with the message, and nothing is stored.
    const { cookie, user } = await signedInUser({ email: "einwilligung@praxis.example" });
    const page = await formUpload(cookie, {});
    expect(page.status).toBe(400);
    expect(JSON.stringify(await page.json())).toContain("Bitte bestätigen Sie zuerst die Einwilligung");
    const rows = () => getDb().selectFrom("recordings").where("owner_id", "=", user.id).select("id").execute();
    expect(await rows()).toEqual([]);
    expect((await formUpload(cookie, { consentKind: "oral", consentGivenBy: "patient" })).status).toBe(302);
    expect(await rows()).toHaveLength(1);

    // A live recording asks before its first buffer; a dictation records no patient.
    const live = (body: Record<string, unknown>) =>
      callRoute(
        createLiveAction,
        request("/live/sessions", {
          method: "POST",
          cookie,
          headers: { "Content-Type": "application/json", "Sec-Fetch-Site": "same-origin" },
          body: JSON.stringify({ language: "de", ...body }),
        }),
      );
    const noConsent = await live({ kind: "recording" });
    expect(noConsent.status).toBe(400);
    expect(await noConsent.json()).toMatchObject({ type: "consent_required" });
    expect((await live({ kind: "dictation" })).status).toBe(201);
    const started = await live({ kind: "recording", consent: { kind: "written", given_by: "patient" } });
    expect(started.status).toBe(201);
    const session = await getDb()
      .selectFrom("live_sessions")
      .where("id", "=", (await started.json()).id)
      .select(["consent_kind", "consent_given_by"])
      .executeTakeFirstOrThrow();
    expect(session).toEqual({ consent_kind: "written", consent_given_by: "patient" });
  });
});

describe("the list and a withdrawn consent", () => {
  it("shows the consent or marks its absence, and a withdrawal deletes the recording", async () => {
    const { cookie, user } = await signedInUser({ email: "widerruf@praxis.example" });
    expect((await formUpload(cookie, { consentKind: "oral", consentGivenBy: "patient" })).status).toBe(302);
    expect((await formUpload(cookie, {})).status).toBe(302);
    const html = await (await serve(request("/", { cookie }))).text();
    expect(html).toMatch(/data-consent="documented"[^>]*>Einwilligung mündlich erteilt von der Patientin/);
    expect(html).toMatch(/data-consent="missing"[^>]*>Einwilligung nicht dokumentiert/);

    const [first] = await getDb()
      .selectFrom("recordings")
      .where("owner_id", "=", user.id)
      .where("consent_kind", "=", "oral")
      .select(["storage_key"])
      .execute();
    // The confirmation first: a page that says what will be deleted.
    const dialog = await (
      await serve(request(`/?withdraw=${encodeURIComponent(first!.storage_key)}`, { cookie }))
    ).text();
    expect(dialog).toContain("Audio, Transkript und Arztbrief dieser Aufnahme endgültig gelöscht");
    const form = new URLSearchParams({ intent: "withdraw-consent", key: first!.storage_key });
    const withdrawn = await callRoute(
      audioAction,
      request("/?index", { method: "POST", cookie, headers: { "Sec-Fetch-Site": "same-origin" }, body: form }),
    );
    expect(withdrawn.status).toBe(302);
    expect(await consentOf(first!.storage_key)).toBeUndefined();
    const audit = await getDb()
      .selectFrom("audit_events")
      .where("user_id", "=", user.id)
      .where("action", "=", "recording.consent-withdrawn")
      .select(["outcome"])
      .execute();
    expect(audit).toEqual([{ outcome: "success" }]);
  });
});
