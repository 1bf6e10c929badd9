import { get, submit, type Door, type Probe, type RouteCheck } from "./access-matrix";
import type { Keys } from "./access-matrix-fixture";

// The screens, sign-in and resource routes in the access matrix. Pages take the session cookie only; their
// posts are forms with the same-origin headers a browser sends.

const COOKIE: Door[] = ["cookie"];

type Check = RouteCheck<Keys>;
const owned = (probes: (k: Keys) => Probe[]): Check => ({ kind: "owned", doors: COOKIE, probes });
const ownDataOnly = (probes: (k: Keys) => Probe[]): Check => ({ kind: "own-data-only", doors: COOKIE, probes });
const mine = (probe: Probe): Probe => ({ ...probe, expect: "no-leak" });
const publicRoute = (reason: string): Check => ({ kind: "public", reason });
const admin: Check = { kind: "admin", coveredBy: "tests/integration/admin-access.test.ts" };

/** A structure as the settings editor posts it (conform field names). */
const STRUCTURE = { "elements[0].name": "Befund", "elements[0].description": "Befund", prompt: "" };

export const screenRoutes: Record<string, Check> = {
  _app: ownDataOnly(() => [get("/")]),
  "_app._index": owned(({ a }) => [
    get(`/?play=${encodeURIComponent(a.recordingKey)}`),
    get(`/?edit=${encodeURIComponent(a.recordingKey)}`),
    get(`/?delete=${encodeURIComponent(a.recordingKey)}`),
    // The record tab offers an unfinished live session: only one of B's.
    mine(get("/?tab=record")),
    submit("/?index", { intent: "rename", key: a.recordingKey, displayName: "Gestohlen" }),
    submit("/?index", { intent: "add-tag", key: a.recordingKey, tag: "gestohlen" }),
    submit("/?index", { intent: "remove-tag", key: a.recordingKey, tag: "x" }),
    submit("/?index", { intent: "uploaded", key: a.uploadedKey }),
    submit("/?index", { intent: "transcribe", key: a.uploadedKey }),
    submit("/?index", { intent: "reset", key: a.recordingKey }),
    submit("/?index", { intent: "delete", key: a.recordingKey }),
  ]),
  "_app.arztbriefe": owned(({ a }) => [
    mine(get("/arztbriefe")),
    get(`/arztbriefe?delete=${encodeURIComponent(a.letterKey)}`),
    submit("/arztbriefe", { intent: "delete", key: a.letterKey }),
  ]),
  "_app.arztbriefe.$": owned(({ a, b }) => {
    const at = { "*": a.letterParam };
    const path = `/arztbriefe/${a.letterParam}`;
    const fields: Record<string, Record<string, string>> = {
      save: { title: "Anamnese", text: "Gestohlen", base_version: "1" },
      refine: { query: "kürzer", scope: "__all__" },
      usePrompt: { promptId: a.promptId },
      savePrompt: { title: "Gestohlen", promptText: "x" },
      deletePrompt: { promptId: a.promptId },
      accept: { proposalId: a.proposalId },
      reject: { proposalId: a.proposalId },
      restore: { version: "1" },
      regenerate: { scope: "__all__" },
    };
    // A's proposal and prompt named inside B's own letter: the panel's own "not found", word for word the
    // answer for an id that never existed, so B learns nothing about A's.
    const inOwn = { "*": b.letterParam };
    const own = `/arztbriefe/${b.letterParam}`;
    const likeUnknown = (intent: string, field: string, id: string): Probe => ({
      ...submit(own, { intent, [field]: id }, inOwn),
      expect: { like: submit(own, { intent, [field]: "00000000-0000-4000-8000-000000000000" }, inOwn) },
      insideOwn: true,
    });
    return [
      ...["", "?versions=1", "?compare=1", `?proposal=${a.proposalId}`].map((q) => get(`${path}${q}`, at)),
      ...Object.entries(fields).map(([intent, rest]) => submit(path, { intent, ...rest }, at)),
      { ...get(`${own}?proposal=${a.proposalId}`, inOwn), insideOwn: true },
      likeUnknown("accept", "proposalId", a.proposalId),
      likeUnknown("reject", "proposalId", a.proposalId),
      likeUnknown("usePrompt", "promptId", a.promptId),
      likeUnknown("deletePrompt", "promptId", a.promptId),
    ];
  }),
  "_app.arztbriefe.export.$": owned(({ a }) => [
    get(`/arztbriefe/export/${a.letterParam}`, { "*": a.letterParam }),
    submit(`/arztbriefe/export/${a.letterParam}`, { format: "text", keep: "yes" }, { "*": a.letterParam }),
  ]),
  "resources.arztbrief-export.$": owned(({ a }) =>
    ["pdf", "docx", "fhir"].map((format) =>
      submit(`/resources/arztbrief-export/${a.letterParam}`, { format, keep: "yes" }, { "*": a.letterParam }),
    ),
  ),
  "druck.arztbriefe.$": owned(({ a }) => [
    get(`/druck/arztbriefe/${a.letterParam}`, { "*": a.letterParam }),
    submit(`/druck/arztbriefe/${a.letterParam}`, { recipient_name: "B", keep: "yes" }, { "*": a.letterParam }),
  ]),
  "_app.arztbriefe.redo.$": owned(({ a }) => [
    get(`/arztbriefe/redo/${a.letterParam}`, { "*": a.letterParam }),
    submit(`/arztbriefe/redo/${a.letterParam}`, { templateId: "kurzbrief" }, { "*": a.letterParam }),
  ]),
  // One conversation per user, found by the caller: B's clear empties B's (A's is compared afterwards).
  "_app.chat": ownDataOnly(() => [get("/chat"), submit("/chat", { intent: "clear" })]),
  "_app.help": ownDataOnly(() => [get("/help")]),
  "_app.settings": owned(({ a }) => [
    // `open` only unfolds a card of B's own list; A's id opens nothing.
    mine(get(`/settings?language=de-DE&open=${a.templateId}`)),
    submit("/settings", { intent: "structure", templateId: a.templateId, language: "de-DE", ...STRUCTURE }),
    submit("/settings", { intent: "reset", templateId: a.templateId, language: "de-DE" }),
    mine(submit("/settings", { intent: "rag", ragAgreed: "true", language: "de-DE" })),
  ]),
  // Deleting an account deletes the caller's own: no id is taken (mass assignment tries one, see the test).
  "_app.settings.account": ownDataOnly(() => [get("/settings/account"), submit("/settings/account", {})]),
  // B's list shows B's sessions only; A's session id is a 404 and A's session lives on (compared afterwards).
  "_app.settings.sessions": owned(({ a }) => [
    mine(get("/settings/sessions")),
    submit("/settings/sessions", { intent: "end", session: a.sessionId }),
    mine(submit("/settings/sessions", { intent: "end-others" })),
  ]),
  // B's list shows B's terms only; A's term id is a 404 and A's term stays (compared afterwards). B's own term is B's.
  "_app.settings.vocabulary": owned(({ a }) => [
    mine(get("/settings/vocabulary")),
    submit("/settings/vocabulary", { intent: "remove", id: a.vocabularyId }),
    mine(submit("/settings/vocabulary", { intent: "add", term: "Eigener Begriff", language: "de" })),
  ]),
  // One letterhead per user, found by the caller alone: no id is taken, so B's posts change B's own (A's is compared
  // afterwards) and B's page shows B's.
  "_app.settings.letterhead": ownDataOnly(() => [
    get("/settings/letterhead"),
    submit("/settings/letterhead", { intent: "save", practiceName: "Praxis B", doctors: "Dr. B" }),
    submit("/settings/letterhead", { intent: "remove-logo" }),
    submit("/settings/letterhead", { intent: "remove" }),
  ]),
  "_app.settings.describe.$templateId.$elementId": owned(({ a }) => {
    const params = { templateId: a.templateId, elementId: a.elementId };
    const path = `/settings/describe/${a.templateId}/${a.elementId}?language=de-DE`;
    return [get(path, params), submit(path, { description: "Gestohlen" }, params)];
  }),
  "_app.settings.edit.$templateId": owned(({ a }) => {
    const path = `/settings/edit/${a.templateId}?language=de-DE`;
    return [get(path, { templateId: a.templateId }), submit(path, STRUCTURE, { templateId: a.templateId })];
  }),
  "_app.settings.new": ownDataOnly(() => [
    get("/settings/new?language=de-DE"),
    submit("/settings/new?language=de-DE", { name: "Eigene Vorlage B", ...STRUCTURE }),
  ]),
  "_app.settings.remove.$templateId": owned(({ a }) => {
    const path = `/settings/remove/${a.templateId}?language=de-DE`;
    return [get(path, { templateId: a.templateId }), submit(path, {}, { templateId: a.templateId })];
  }),
  // The repository lists system templates only, so no user's id can be named in it; an id that is not there
  // (A's custom template) gets SPEC §8's 'Failed to add template' toast like any unknown one.
  "_app.settings.repository": ownDataOnly(({ a }) => [
    get("/settings/repository?language=de-DE"),
    submit("/settings/repository?language=de-DE", { templateId: a.templateId }),
  ]),
  "_app.transcriptions": owned(({ a }) => [
    mine(get("/transcriptions")),
    submit("/transcriptions", { intent: "createLetter", key: a.recordingKey }),
  ]),
  "_app.transcriptions.$": owned(({ a }) => {
    const at = { "*": a.transcriptParam };
    const path = `/transcriptions/${a.transcriptParam}`;
    const version = { base_version: "1" };
    return [
      get(path, at),
      get(`${path}?review=1`, at),
      submit(path, { intent: "delete" }, at),
      submit(path, { intent: "createLetter" }, at),
      submit(path, { intent: "correctWord", ...version, segment: "t0p0", index: "0", text: "Gestohlen" }, at),
      submit(path, { intent: "confirmWord", ...version, segment: "t0p0", index: "0" }, at),
      submit(path, { intent: "nameSpeaker", ...version, speaker: "S1", role: "doctor", name: "" }, at),
      submit(path, { intent: "mergeSpeakers", ...version, from: "S2", into: "S1" }, at),
      submit(path, { intent: "moveSegment", ...version, segment: "t0p0", to: "S2" }, at),
    ];
  }),
  "resume.$id": owned(({ a }) => [
    get(`/resume/${a.pendingPostId}`, { id: a.pendingPostId }),
    submit(`/resume/${a.pendingPostId}`, {}, { id: a.pendingPostId }),
  ]),

  "api.$": publicRoute("unknown API paths: a JSON 404 for everyone, before any user or data is looked at"),
  "auth.start": publicRoute("starts sign-in at the identity provider; holds no user data"),
  "auth.callback": publicRoute("finishes sign-in with the provider's code; the session it makes is the caller's own"),
  login: publicRoute("the sign-in page"),
  logout: publicRoute("ends the caller's own session (the cookie is the only input)"),
  "verify-email": publicRoute("the provider's 'verify your e-mail' notice; static"),
  "resources.healthz": publicRoute("liveness for load balancers: 'ok', no database, no details"),
  "resources.locale": publicRoute("sets the caller's language cookie"),
  "resources.letter-print[.]css": publicRoute("the print view's page numbers as CSS: fixed wording, nobody's data"),
  "resources.keepalive": publicRoute("extends the caller's own session; answers { ok: true } and nothing else"),
  // The caller's own logo, or the practice's: no id in the address, so A's logo cannot be named.
  "resources.letterhead-logo": ownDataOnly(({ a }) => [
    get("/resources/letterhead-logo"),
    get(`/resources/letterhead-logo?owner=${a.userId}&id=${a.letterheadId}`),
    get("/resources/letterhead-logo?scope=practice"),
  ]),
  "resources.storage.$": publicRoute(
    "the local store's presigned URLs: the signature is the authorization, as at S3 (no session is consulted); " +
      "a URL not signed for the key is refused before the object is looked up (checked below)",
  ),

  $adminPath: admin,
  "$adminPath._index": admin,
  "$adminPath.accounts": admin,
  "$adminPath.audit": admin,
  "$adminPath.sessions": admin,
  "$adminPath.letterhead": { kind: "admin", coveredBy: "tests/integration/letterhead-admin.test.ts" },
  "$adminPath_.usage[.]csv": admin,
  "api.usage-dashboard": admin,
  "api.health": admin,
};
