import { beforeAll, describe, expect, it } from "vitest";
import { action as extractPdf } from "~/routes/api.extract-pdf-from-s3";
import { loader as filesLoader } from "~/routes/api.files";
import { action as pdfUploadUrls } from "~/routes/api.get-pdf-upload-urls";
import { apiClientFor, type ApiClient } from "../support/api-client";
import { putTo, storedState } from "../support/bad-file-doors";
import { pdfBomb } from "../support/bad-file-fixtures";
import { chatPage, conversationOf } from "../support/chat-fixtures";
import { userIdOf } from "../support/letter-fixtures";
import { htmlNamedPdf, multiPagePdf } from "../support/pdf-fixtures";
import { callRoute, setupTestApp, signedInUser } from "../setup/app";

// Hostile PDFs as context (SPEC §5 "Only application/pdf files are accepted as chat context"; §8 "PDF extraction
// failure is only logged"): through get-pdf-upload-urls + PUT + extract-pdf-from-s3, and through the chat screen's
// attach form. Nothing of a refused file is kept, and a PDF whose streams unpack to 256 MiB is refused before it
// is unpacked — the process's peak memory barely moves (reading it whole would add over a gigabyte).
const app = setupTestApp({ provider: true });
const MiB = 1024 * 1024;
const NOTHING = { success: false, extracted_text: "", pdfs_processed: 0 };
let anna: ApiClient;
let annaId: string;
let bomb: Buffer;

beforeAll(async () => {
  anna = await apiClientFor(app.issuer, "anna-berger");
  await callRoute(filesLoader, anna("/api/files"));
  annaId = await userIdOf("anna-berger");
  bomb = await pdfBomb(256);
});

/** The peak resident memory of this test process so far (bytes); it only ever grows. */
function peakRss() {
  return process.resourceUsage().maxRSS * 1024;
}

async function extractThroughApi(name: string, bytes: Uint8Array) {
  const urls = await callRoute(
    pdfUploadUrls,
    anna("/api/get-pdf-upload-urls", { method: "POST", json: { filenames: [name] } }),
  );
  expect(urls.status).toBe(200);
  const [{ upload_url, s3_key }] = (await urls.json()).upload_urls;
  expect((await putTo(upload_url, Buffer.from(bytes), "application/pdf")).status).toBe(200);
  const response = await callRoute(
    extractPdf,
    anna("/api/extract-pdf-from-s3", { method: "POST", json: { s3_keys: [s3_key] } }),
  );
  return { status: response.status, body: await response.json() };
}

describe("PDF context through the API", () => {
  it.each([
    ["an HTML page named .pdf", "befund.pdf", () => htmlNamedPdf().data],
    ["a PNG named .pdf", "foto.pdf", () => new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0])],
    ["zero bytes", "leer.pdf", () => new Uint8Array()],
    ["51 pages", "lang.pdf", () => multiPagePdf(51)],
    ["a NUL and a bidi override in its name", "Be\u0000fund\u202Efdp.exe", () => htmlNamedPdf().data],
  ] as const)("%s gives no text, and neither the file nor its slot is kept", async (_, name, bytes) => {
    const before = await storedState(annaId);
    expect(await extractThroughApi(name, await bytes())).toEqual({ status: 200, body: NOTHING });
    expect(await storedState(annaId)).toEqual(before);
  });

  it("a PDF whose page unpacks to 256 MiB is refused without unpacking it", async () => {
    expect(bomb.length).toBeLessThan(MiB);
    const before = { state: await storedState(annaId), peak: peakRss() };
    expect(await extractThroughApi("bombe.pdf", bomb)).toEqual({ status: 200, body: NOTHING });
    expect(peakRss() - before.peak).toBeLessThan(192 * MiB);
    expect(await storedState(annaId)).toEqual(before.state);
  });
});

describe("PDF context through the chat screen", () => {
  async function attach(cookie: string, name: string, data: Uint8Array) {
    return chatPage(cookie, { fields: { intent: "attach" }, files: [{ name, data }] });
  }

  it("refuses a file that is not a PDF, an empty one and a name the form cannot read; keeps nothing", async () => {
    const { user, cookie } = await signedInUser({ email: "bad-pdf-chat@praxis.example" });
    const before = await storedState(user.id);
    const html = await attach(cookie, "befund.pdf", htmlNamedPdf().data);
    expect(html.status).toBe(400);
    expect(html.html).toContain("„befund.pdf“ ist keine PDF-Datei. Es werden nur PDF-Dateien angenommen.");
    const empty = await attach(cookie, "leer.pdf", new Uint8Array());
    expect(empty.status).toBe(400);
    expect(empty.html).toContain("Bitte wählen Sie eine PDF-Datei aus.");
    const named = await attach(cookie, "Befund; Labor=2.pdf", await multiPagePdf(1));
    expect(named.status).toBe(400);
    expect(named.html).toContain("Ein Dateiname kann nicht gelesen werden.");
    expect(await conversationOf(user.id)).toEqual({ messages: [], context: [] });
    expect(await storedState(user.id)).toEqual(before);
  });

  it("reads nothing out of a PDF whose page unpacks to 256 MiB, and does not unpack it", async () => {
    const { user, cookie } = await signedInUser({ email: "bad-pdf-bomb@praxis.example" });
    const peak = peakRss();
    expect(await attach(cookie, "bombe.pdf", bomb)).toMatchObject({ status: 302, location: "/chat" });
    expect(peakRss() - peak).toBeLessThan(192 * MiB);
    // SPEC §8: a PDF that gives nothing is only logged; the chat names it with no text.
    expect((await conversationOf(user.id)).context).toEqual([{ name: "bombe.pdf", text: "" }]);
  });
});
