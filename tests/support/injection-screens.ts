import { HOSTILE, type HostileWorld } from "./injection-world";

// Every screen (a route module with a component) and the pages it is seen at with the hostile clinician's data,
// with the hostile values each page must show — as text — so a check that finds nothing dangerous has looked at
// something that was there. A screen seen only inside another (a layout) or only by someone else says so.

export type Shown = Exclude<keyof typeof HOSTILE, "tags">;
export type Page = { path: string; shows: Shown[]; who?: "operator" | "anonymous" };
export type ScreenEntry = { pages: (keys: HostileWorld["keys"]) => Page[] } | { reason: string };

const letterShows: Shown[] = ["displayName", "sectionTitle", "spoken", "promptTitle", "promptText", "pdfText"];
const templateShows: Shown[] = ["templateName", "description", "templatePrompt"];

export const screens: Record<string, ScreenEntry> = {
  _app: { reason: "the workspace layout: seen around every _app.* page below (the user's name is in its menu)" },
  "_app._index": {
    pages: ({ recordingKey: key }) => [
      { path: "/", shows: ["userName", "fileName", "displayName", "uploadName"] },
      { path: "/?tab=record", shows: ["displayName", "live"] },
      // The player is the page's island: the loader data goes into an inline script (ADR 0006).
      { path: `/?play=${encodeURIComponent(key)}`, shows: ["displayName", "fileName"] },
      { path: `/?edit=${encodeURIComponent(key)}`, shows: ["displayName"] },
      { path: `/?delete=${encodeURIComponent(key)}`, shows: ["displayName"] },
    ],
  },
  "_app.arztbriefe": {
    pages: ({ letterKey }) => [
      { path: "/arztbriefe", shows: ["displayName", "fileName"] },
      { path: `/arztbriefe?delete=${encodeURIComponent(letterKey)}`, shows: ["displayName"] },
    ],
  },
  "_app.arztbriefe.$": {
    pages: ({ letterParam, proposalId }) => [
      { path: `/arztbriefe/${letterParam}`, shows: [...letterShows, "edited"] },
      { path: `/arztbriefe/${letterParam}?versions=1`, shows: letterShows },
      { path: `/arztbriefe/${letterParam}?compare=1`, shows: letterShows },
      { path: `/arztbriefe/${letterParam}?proposal=${proposalId}`, shows: [...letterShows, "proposal", "instruction"] },
    ],
  },
  "_app.arztbriefe.export.$": {
    pages: ({ letterParam }) => [{ path: `/arztbriefe/export/${letterParam}`, shows: ["displayName", "recipient"] }],
  },
  // The print view, outside the workspace: the letter as it is sent, with the kept recipient and the letterhead.
  "druck.arztbriefe.$": {
    pages: ({ letterParam }) => [
      { path: `/druck/arztbriefe/${letterParam}`, shows: ["sectionTitle", "edited", "recipient", "userName"] },
    ],
  },
  "_app.arztbriefe.redo.$": {
    pages: ({ letterParam }) => [{ path: `/arztbriefe/redo/${letterParam}`, shows: ["templateName", "displayName"] }],
  },
  "_app.chat": { pages: () => [{ path: "/chat", shows: ["question", "answer"] }] },
  "_app.help": { pages: () => [{ path: "/help", shows: ["userName"] }] },
  "_app.settings": {
    pages: ({ templateId }) => [{ path: `/settings?language=de-DE&open=${templateId}`, shows: templateShows }],
  },
  "_app.settings.account": { pages: () => [{ path: "/settings/account", shows: ["userName"] }] },
  // The device label is one of a few fixed names (accounts/device-label.server.ts): nothing the browser sent is shown.
  "_app.settings.sessions": { pages: () => [{ path: "/settings/sessions", shows: ["userName"] }] },
  "_app.settings.vocabulary": {
    pages: () => [{ path: "/settings/vocabulary", shows: ["userName", "vocabulary", "misheard"] }],
  },
  "_app.settings.letterhead": { pages: () => [{ path: "/settings/letterhead", shows: ["userName", "letterhead"] }] },
  "_app.settings.describe.$templateId.$elementId": {
    pages: ({ templateId, elementId }) => [
      { path: `/settings/describe/${templateId}/${elementId}?language=de-DE`, shows: ["description"] },
    ],
  },
  "_app.settings.edit.$templateId": {
    pages: ({ templateId }) => [{ path: `/settings/edit/${templateId}?language=de-DE`, shows: templateShows }],
  },
  "_app.settings.new": { pages: () => [{ path: "/settings/new?language=de-DE", shows: ["templateName"] }] },
  "_app.settings.remove.$templateId": {
    pages: ({ templateId }) => [{ path: `/settings/remove/${templateId}?language=de-DE`, shows: ["templateName"] }],
  },
  "_app.settings.repository": { pages: () => [{ path: "/settings/repository?language=de-DE", shows: ["userName"] }] },
  "_app.transcriptions": { pages: () => [{ path: "/transcriptions", shows: ["displayName", "liveName"] }] },
  "_app.transcriptions.$": {
    pages: ({ transcriptParam }) => [{ path: `/transcriptions/${transcriptParam}`, shows: ["displayName", "spoken"] }],
  },
  "resume.$id": { pages: ({ pendingId }) => [{ path: `/resume/${pendingId}`, shows: ["pending"] }] },
  login: {
    pages: () => [
      { path: `/login?redirectTo=${encodeURIComponent("javascript:alert(1)")}`, shows: [], who: "anonymous" },
      {
        path: `/login?failed=1&redirectTo=${encodeURIComponent('/"><script>alert(1)</script>')}`,
        shows: [],
        who: "anonymous",
      },
    ],
  },
  "verify-email": { pages: () => [{ path: "/verify-email", shows: [], who: "anonymous" }] },
  "auth.callback": {
    reason:
      "shown for a moment after a real code exchange; it renders only a translated title and the return path, " +
      "which goes through safeRedirect (a same-origin path) — the same value the login page's checks above cover",
  },
  $adminPath: { reason: "the admin layout: seen around the four admin pages below" },
  "$adminPath._index": { pages: () => [{ path: "/betrieb?period=30d", shows: ["userName"], who: "operator" }] },
  "$adminPath.accounts": { pages: () => [{ path: "/betrieb/accounts", shows: [], who: "operator" }] },
  "$adminPath.audit": { pages: () => [{ path: "/betrieb/audit", shows: [], who: "operator" }] },
  "$adminPath.sessions": { pages: () => [{ path: "/betrieb/sessions", shows: [], who: "operator" }] },
  "$adminPath.letterhead": { pages: () => [{ path: "/betrieb/letterhead", shows: [], who: "operator" }] },
};
