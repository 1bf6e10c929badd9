// The screens' query parameters and forms' fields, and the whole list sqlmap is pointed at: the JSON calls
// (api-targets.mjs) as one clinician, the screens as another, what deletes the seeded data last.
import fs from "node:fs";
import path from "node:path";
import { API_NOT_SCANNED, apiTargets, form, page, q } from "./api-targets.mjs";
import { APP, ROOT, opts } from "./config.mjs";

/** The screens' query parameters and the forms' fields. */
function screenTargets(ids) {
  const rec = q(ids.recordingKey);
  return {
    "_app._index": [
      page(`/?play=${rec}*`),
      page(`/?edit=${rec}*`),
      page(`/?delete=${rec}*`),
      page("/?tab=record*"),
      form("/?index", { intent: "rename", key: `${ids.recordingKey}*`, displayName: "Visite Frau B*" }),
      form("/?index", { intent: "add-tag", key: ids.recordingKey, tag: "verlauf*" }),
      form("/?index", { intent: "remove-tag", key: ids.recordingKey, tag: "verlauf*" }),
      form("/?index", { intent: "transcribe*", key: `${ids.recordingKey}*` }),
    ],
    "_app.arztbriefe": [page(`/arztbriefe?delete=${q(ids.letterKey)}*`)],
    "_app.arztbriefe.$": [
      page(`/arztbriefe/${ids.letterParam}?versions=1*&compare=1*`),
      page(`/arztbriefe/${ids.letterParam}?proposal=00000000-0000-4000-8000-000000000000*`),
      form(`/arztbriefe/${ids.letterParam}`, {
        intent: "save",
        title: "Anamnese*",
        text: "Husten seit drei Tagen.*",
        base_version: "", // no conflict check: other targets add versions meanwhile
      }),
      form(`/arztbriefe/${ids.letterParam}`, { intent: "savePrompt", title: "Kurz*", promptText: "Kürzer bitte.*" }),
      form(`/arztbriefe/${ids.letterParam}`, { intent: "restore", version: "1*" }),
    ],
    "_app.chat": [form("/chat", { intent: "send", question: "Was bedeutet NYHA II?*" })],
    "_app.settings": [
      page(`/settings?language=de-DE*&open=${q(ids.templateId)}*`),
      form("/settings", {
        intent: "structure",
        templateId: `${ids.structureTemplateId}*`,
        language: "de-DE*",
        "elements[0].name": "Befund*",
        "elements[0].description": "Befund*",
        prompt: "Kurz.*",
      }),
    ],
    "_app.settings.describe.$templateId.$elementId": [
      form(`/settings/describe/${q(ids.templateId)}/${q(ids.elementId)}?language=de-DE`, {
        description: "Befund im Detail*",
      }),
    ],
    "_app.settings.new": [
      form("/settings/new?language=de-DE", {
        name: "Neue Vorlage*",
        "elements[0].name": "Befund*",
        "elements[0].description": "Befund*",
        prompt: "Kurz.*",
      }),
    ],
    "_app.settings.repository": [
      page("/settings/repository?language=de-DE*&q=kardio*"),
      form("/settings/repository?language=de-DE", { templateId: "entlassbrief*" }),
    ],
    "_app.transcriptions": [form("/transcriptions", { intent: "createLetter", key: `${ids.recordingKey}*` })],
    "_app.transcriptions.$": [page(`/transcriptions/${ids.transcriptParam}?highlight=1*`)],
    "_app.arztbriefe.redo.$": [form(`/arztbriefe/redo/${ids.letterParam}`, { templateId: "kurzbrief*" })],
  };
}

function routeIds(prefixes) {
  return fs
    .readdirSync(path.join(ROOT, "app/routes"))
    .map((name) => name.replace(/\.tsx?$/, ""))
    .filter((id) => prefixes.some((prefix) => id.startsWith(prefix)));
}

/**
 * The JSON calls run as one clinician and the screens as another: both doors share the per-user hourly limits
 * (uploads, chats, refinements, letters), and sqlmap's hundreds of requests on one door would leave the other
 * nothing but 429s.
 */
export function sqlmapTargets(api1, screens1) {
  const api = apiTargets(api1.ids);
  const screens = screenTargets(screens1.ids);
  const unmapped = routeIds(["api."]).filter((id) => !(id in api) && !(id in API_NOT_SCANNED));
  for (const id of Object.keys(screens))
    if (!routeIds(["_app"]).includes(id)) throw new Error(`screen target ${id}: no such route in app/routes`);
  const all = [
    ...Object.entries(api).flatMap(([route, list]) => list.map((t) => ({ ...t, route, cookie: api1.cookie }))),
    ...Object.entries(screens).flatMap(([route, list]) => list.map((t) => ({ ...t, route, cookie: screens1.cookie }))),
  ].filter((t) => !opts.only || `${t.route} ${t.url}`.includes(opts.only));
  // What deletes the seeded data goes last.
  const destroying = all.filter((t) => t.last).sort((a, b) => a.last - b.last);
  return { targets: [...all.filter((t) => !t.last), ...destroying], unmapped };
}

/** Each target once as sqlmap's first request sends it (markers removed): the status shows the ids are right. */
export async function dryRun(targets) {
  for (const target of targets) {
    const headers = { cookie: target.cookie, origin: APP, "sec-fetch-site": "same-origin" };
    if (target.data)
      headers["content-type"] = target.kind === "json" ? "application/json" : "application/x-www-form-urlencoded";
    const response = await fetch(`${APP}${target.url.replaceAll("*", "")}`, {
      method: target.method,
      headers,
      body: target.data?.replaceAll("*", ""),
      redirect: "manual",
    });
    const text = await response.text();
    console.log(
      `  ${response.status} ${target.method} ${target.url.replaceAll("*", "")}  ${text.slice(0, 120).replace(/\s+/g, " ")}`,
    );
  }
}
