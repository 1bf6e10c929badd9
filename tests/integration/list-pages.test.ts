import { describe, expect, it } from "vitest";
import { LIST_PAGE_SIZE } from "~/services/web/pagination";
import { recordingWithLetter } from "../support/access-matrix-fixture";
import { serve } from "../support/remix-document";
import { request, setupTestApp, signedInUser } from "../setup/app";

// A clinician with more recordings than fit on a page (issue 9: 1,000 for one user): each list shows the newest
// LIST_PAGE_SIZE, says which ones, and links to the older and newer pages; a dialog opened on a later page
// returns there. Plain links, so it all works without JavaScript.
setupTestApp();

const COUNT = LIST_PAGE_SIZE + 5;

async function page(url: string, cookie: string) {
  const response = await serve(request(url, { cookie }));
  expect(response.status).toBe(200);
  return response.text();
}

const count = (html: string, marker: RegExp) => html.match(marker)?.length ?? 0;
const hrefs = (html: string, action: string) =>
  [...html.matchAll(new RegExp(`<a[^>]*data-(?:action|page-link)="${action}"[^>]*>`, "g"))].map((m) =>
    /href="([^"]*)"/.exec(m[0])![1].replace(/&amp;/g, "&"),
  );

describe("long lists, a page at a time", () => {
  it("shows 50 recordings, transcripts and letters per page, the rest on the next, with their links", async () => {
    const { user, cookie } = await signedInUser({ email: "viele@praxis.example" });
    for (let i = 0; i < COUNT; i++) {
      await recordingWithLetter(user.id, {
        fileName: `Sprechstunde-${i}.wav`,
        displayName: `Patientengespräch ${i}`,
        spoken: "geht es gut",
        letter: "Beschwerdefrei.",
      });
    }
    const lists = [
      { path: "/", row: /data-recording="/g },
      { path: "/transcriptions", row: /data-transcript-row="/g },
      { path: "/arztbriefe", row: /data-letter-row="/g },
    ];
    for (const { path, row } of lists) {
      const first = await page(path, cookie);
      expect(count(first, row), path).toBe(LIST_PAGE_SIZE);
      expect(first).toContain(`Einträge 1–${LIST_PAGE_SIZE} von ${COUNT}`);
      expect(hrefs(first, "older")).toEqual([`${path}?page=2`]);
      expect(hrefs(first, "newer")).toEqual([]);

      const second = await page(`${path}?page=2`, cookie);
      expect(count(second, row), path).toBe(5);
      expect(second).toContain(`Einträge ${LIST_PAGE_SIZE + 1}–${COUNT} von ${COUNT}`);
      expect(hrefs(second, "newer")).toEqual([path]);
      expect(hrefs(second, "older")).toEqual([]);
      // The oldest recording is on the last page, not the first.
      expect(second).toContain("Patientengespräch 0<");
      expect(first).not.toContain("Patientengespräch 0<");

      // A page past the end, or nonsense, shows a real page rather than an empty list or an error.
      expect(count(await page(`${path}?page=99`, cookie), row)).toBe(5);
      expect(count(await page(`${path}?page=abc`, cookie), row)).toBe(LIST_PAGE_SIZE);
    }
  });

  it("opens a dialog over the page it was asked from and closes back to it", async () => {
    const { user, cookie } = await signedInUser({ email: "dialog@praxis.example" });
    for (let i = 0; i < COUNT; i++) {
      await recordingWithLetter(user.id, {
        fileName: `Visite-${i}.wav`,
        displayName: `Visite ${i}`,
        spoken: "gut",
        letter: "Gut.",
      });
    }
    const second = await page("/?page=2", cookie);
    const edit = hrefs(second, "edit")[0];
    expect(edit).toMatch(/^\/\?edit=audio%2F.+&page=2$/);
    const dialog = await page(edit, cookie);
    expect(dialog).toMatch(/<a[^>]*href="\/\?page=2"[^>]*>/);

    const letters = await page("/arztbriefe?page=2", cookie);
    const remove = hrefs(letters, "delete")[0];
    expect(remove).toMatch(/^\/arztbriefe\?delete=arztbriefe%2F.+&page=2$/);
    expect(await page(remove, cookie)).toMatch(/<a[^>]*href="\/arztbriefe\?page=2"[^>]*>/);
  });

  it("shows no page links while everything fits on one page", async () => {
    const { user, cookie } = await signedInUser({ email: "wenige@praxis.example" });
    await recordingWithLetter(user.id, { fileName: "a.wav", displayName: "A", spoken: "gut", letter: "Gut." });
    for (const path of ["/", "/transcriptions", "/arztbriefe"]) {
      expect(await page(path, cookie)).not.toContain("data-pagination");
    }
  });
});
