import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { I18nextProvider } from "react-i18next";
import { createStaticHandler, createStaticRouter, StaticRouterProvider } from "react-router-dom/server";
import { insertLetter } from "~/models/letter.server";
import type { LetterStatus, StoredLetterContent } from "~/models/schema";
import EditorPage, { action as editorAction, loader as editorLoader } from "~/routes/_app.arztbriefe.$/route";
import RedoPage, { action as redoAction, loader as redoLoader } from "~/routes/_app.arztbriefe.redo.$";
import ExportPage, { action as exportAction, loader as exportLoader } from "~/routes/_app.arztbriefe.export.$";
import PrintPage, { action as printAction, loader as printLoader } from "~/routes/druck.arztbriefe.$";
import ListPage, { action as listAction, loader as listLoader } from "~/routes/_app.arztbriefe/route";
import ViewerPage, { action as viewerAction, loader as viewerLoader } from "~/routes/_app.transcriptions.$";
import TranscriptionsPage, {
  action as transcriptionsAction,
  loader as transcriptionsLoader,
} from "~/routes/_app.transcriptions/route";
import { getDb } from "~/models/db.server";
import { createI18n, languageCookie } from "~/services/web/i18n.server";
import { makeStorageKey } from "~/services/storage/storage.server";
import { callRoute, request } from "../setup/app";
import { seedTranscribedRecording, type SpokenLine } from "./letter-fixtures";

// The letter screens' test world (letter-screens-*.test.ts): the Arztbriefe and Transcriptions routes as Remix
// nests them, rendered to HTML the way the server renders them (no JavaScript), forms posted in English, and
// letters inserted through the models with their first version.

type Fields = Record<string, string | string[]>;

/** The English language cookie, so that the screens answer in the language the tests expect. */
async function english() {
  return (await languageCookie().serialize("en")).split(";")[0]!;
}

// The routes as Remix nests them under the workspace (the layout itself adds only the shell and the toast).
/* eslint-disable @typescript-eslint/no-explicit-any -- Remix loaders handed to React Router's static handler */
const routes = [
  {
    id: "routes/_app.arztbriefe",
    path: "/arztbriefe",
    loader: (a: any) => listLoader(a),
    action: (a: any) => listAction(a),
    Component: ListPage,
    children: [
      {
        id: "routes/_app.arztbriefe.redo.$",
        path: "redo/*",
        loader: (a: any) => redoLoader(a),
        action: (a: any) => redoAction(a),
        Component: RedoPage,
      },
      {
        id: "routes/_app.arztbriefe.export.$",
        path: "export/*",
        loader: (a: any) => exportLoader(a),
        action: (a: any) => exportAction(a),
        Component: ExportPage,
      },
      {
        id: "routes/_app.arztbriefe.$",
        path: "*",
        loader: (a: any) => editorLoader(a),
        action: (a: any) => editorAction(a),
        Component: EditorPage,
      },
    ],
  },
  {
    id: "routes/druck.arztbriefe.$",
    path: "/druck/arztbriefe/*",
    loader: (a: any) => printLoader(a),
    action: (a: any) => printAction(a),
    Component: PrintPage,
  },
  {
    id: "routes/_app.transcriptions",
    path: "/transcriptions",
    loader: (a: any) => transcriptionsLoader(a),
    action: (a: any) => transcriptionsAction(a),
    Component: TranscriptionsPage,
    children: [
      {
        id: "routes/_app.transcriptions.$",
        path: "*",
        loader: (a: any) => viewerLoader(a),
        action: (a: any) => viewerAction(a),
        Component: ViewerPage,
      },
    ],
  },
];
/* eslint-enable @typescript-eslint/no-explicit-any */
// As remix.config.js's v3_relativeSplatPath: a form in a splat route posts to the whole URL.
const future = { v7_relativeSplatPath: true };
const handler = createStaticHandler(routes, { future });

/** A page as the server renders it: the redirect an action answers with, or the status and the HTML. */
export async function page(path: string, cookie: string, fields?: Fields) {
  const req = request(path, { cookie: `${cookie}; ${await english()}`, ...(fields ? form(fields) : {}) });
  const context = await handler.query(req);
  if (context instanceof Response)
    return { status: context.status, location: context.headers.get("Location"), html: "" };
  const router = createStaticRouter(handler.dataRoutes, context, { future });
  const i18n = await createI18n("en");
  const html = renderToString(
    createElement(I18nextProvider, { i18n }, createElement(StaticRouterProvider, { router, context, hydrate: false })),
  );
  return { status: context.statusCode, location: null, html, context };
}

function form(fields: Fields) {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(fields))
    for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
  return {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin" },
    body: body.toString(),
  };
}

export async function post(
  route: Parameters<typeof callRoute>[0],
  path: string,
  cookie: string,
  fields: Fields,
  params: Record<string, string> = {},
) {
  return callRoute(route, request(path, { cookie: `${cookie}; ${await english()}`, ...form(fields) }), params);
}

export const LINES = [
  { speaker: "S1" as const, text: "Guten Tag, was führt Sie zu mir?" },
  { speaker: "S2" as const, text: "Seit drei Tagen habe ich Husten." },
];

/**
 * A consultation about medication, fever and an allergy: what the letter check's tests (evidence, citations) check
 * letters against — each statement in a paragraph of its own (t0p0 … t5p0).
 */
export const CHECKED_CONSULTATION = [
  { speaker: "S1" as const, text: "Welche Medikamente nehmen Sie im Moment?" },
  { speaker: "S2" as const, text: "Ramipril 5 Milligramm morgens, sonst nichts." },
  { speaker: "S1" as const, text: "Hatten Sie Fieber oder Husten?" },
  { speaker: "S2" as const, text: "Nein, kein Fieber und kein Husten." },
  { speaker: "S1" as const, text: "Haben Sie Allergien gegen Medikamente?" },
  { speaker: "S2" as const, text: "Ja, gegen Penicillin, da hatte ich einen Ausschlag." },
];

export const SOAP: StoredLetterContent = {
  structured_output: [
    { Anamnese: "Husten seit drei Tagen." },
    { Befund: "Lunge frei." },
    { Procedere: "Keine Informationen gefunden" },
  ],
};

export async function seedLetter(
  ownerId: string,
  options: {
    content?: StoredLetterContent;
    status?: LetterStatus;
    templateId?: string | null;
    language?: string;
    displayName?: string;
    /** The consultation the letter was written from (LINES when not given). */
    lines?: SpokenLine[];
  } = {},
) {
  const recording = await seedTranscribedRecording({
    ownerId,
    lines: options.lines ?? LINES,
    templateId: options.templateId === undefined ? "soap" : options.templateId,
    fileName: "Visite.wav",
  });
  const key = makeStorageKey({ ownerId, area: "arztbriefe", extension: ".json" });
  await getDb()
    .transaction()
    .execute(async (trx) => {
      const letter = await insertLetter(trx, {
        ownerId,
        recordingId: recording.recordingId,
        key,
        templateId: options.templateId === undefined ? "soap" : (options.templateId ?? "soap"),
        language: options.language ?? "de-DE",
        tags: [],
      });
      await trx
        .insertInto("letter_versions")
        .values({
          letter_id: letter!.id,
          owner_id: ownerId,
          version: 1,
          kind: "generated",
          author_id: ownerId,
          template_id: "soap",
          content: JSON.stringify(options.content ?? SOAP),
        })
        .execute();
    });
  await getDb()
    .updateTable("recordings")
    .set({
      medical_letter_status: options.status ?? "completed",
      display_name: options.displayName ?? null,
      ...(options.templateId === null ? { template_id: null } : {}),
    })
    .where("id", "=", recording.recordingId)
    .execute();
  if (options.templateId === null) {
    await getDb().updateTable("letters").set({ template_id: null }).where("storage_key", "=", key).execute();
  }
  const path = key.replace(/^arztbriefe\//, "");
  return { ...recording, key, path, editor: `/arztbriefe/${path}` };
}

export async function versionsOf(key: string) {
  return getDb()
    .selectFrom("letter_versions")
    .innerJoin("letters", "letters.id", "letter_versions.letter_id")
    .where("letters.storage_key", "=", key)
    .select(["letter_versions.version", "letter_versions.kind", "letter_versions.content"])
    .orderBy("letter_versions.version", "asc")
    .execute();
}

export function titlesAndTexts(content: StoredLetterContent) {
  const sections = typeof content === "string" ? [] : content.structured_output.map((s) => Object.entries(s)[0]!);
  return { title: sections.map(([t]) => t), text: sections.map(([, v]) => v) };
}
