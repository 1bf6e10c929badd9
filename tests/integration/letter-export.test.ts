import { describe, expect, it } from "vitest";
import { action as exportAction } from "~/routes/_app.arztbriefe.export.$";
import { action as downloadAction } from "~/routes/resources.arztbrief-export.$";
import { action as apiExport } from "~/routes/api.arztbrief-export.$";
import { action as printAction, loader as printLoader } from "~/routes/druck.arztbriefe.$";
import { loader as pageCss } from "~/routes/resources.letter-print[.]css";
import { getDb } from "~/models/db.server";
import type { StoredLetterContent } from "~/models/schema";
import { page, post, seedLetter } from "../support/letter-screens";
import { signInWith, withParams } from "../support/letters-api";
import { callRoute, request, setupTestApp, signedInUser } from "../setup/app";
import { expectConsoleError } from "../setup/console";

// A finished letter leaves Skribent (issue 25): the export dialog over the letters list, without JavaScript, gives
// the letter as a DIN 5008 PDF, a DOCX, a FHIR document or text for the practice software, and opens the print view;
// what the doctor typed is kept with the letter only when asked; every export is audited by format without content;
// another user's letter is a 404 at every door. The files are read back: the PDF with pdf.js, the DOCX as a ZIP, the
// FHIR document as JSON. Rendered as the server renders it (tests/support/letter-screens.ts), in English.
const app = setupTestApp({ provider: true });
const signIn = signInWith(app);

const LETTER: StoredLetterContent = {
  structured_output: [
    { Anamnese: "Seit drei Tagen Husten, kein Fieber. Übelkeit verneint." },
    { Befund: "Lunge frei, Herztöne rein." },
    { Procedere: "Keine Informationen gefunden" },
  ],
};

const DETAILS = {
  recipient_name: "Herrn Dr. med. Jürgen Weiß",
  recipient_address: ["Hauptstraße 5", "12345 Musterstadt", "", ""],
  patient_name: "Erika Mustermann",
  patient_birth_date: "1964-08-12",
  subject: "Arztbrief nach Sprechstunde",
  date: "2026-11-27",
};

async function letterToExport(email: string) {
  const { user, cookie } = await signedInUser({ email });
  const letter = await seedLetter(user.id, { content: LETTER });
  const url = `/arztbriefe/export/${letter.path}`;
  const download = `/resources/arztbrief-export/${letter.path}`;
  return { user, cookie, letter, url, download, at: { "*": letter.path } };
}

async function pdfText(bytes: Uint8Array) {
  await import("pdfjs-dist/legacy/build/pdf.worker.mjs" as string);
  const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
  const doc = await pdfjs.getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, verbosity: 0 }).promise;
  const pages: string[] = [];
  for (let n = 1; n <= doc.numPages; n++) {
    const content = await (await doc.getPage(n)).getTextContent();
    pages.push(content.items.map((item) => ("str" in item ? item.str : "")).join(" "));
  }
  return pages.join("\n");
}

function exportAudit(userId: string) {
  return getDb()
    .selectFrom("audit_events")
    .where("user_id", "=", userId)
    .where("action", "like", "letter.export.%")
    .select(["action", "outcome", "entity_id"])
    .orderBy("id", "asc")
    .execute();
}

function keptRows(letterKey: string) {
  return getDb()
    .selectFrom("letter_export_details")
    .innerJoin("letters", "letters.id", "letter_export_details.letter_id")
    .where("letters.storage_key", "=", letterKey)
    .select(["recipient_name", "recipient_address", "patient_name", "patient_birth_date", "subject", "letter_date"])
    .execute();
}

describe("the export dialog", () => {
  it("is reached from the editor and starts empty with today's date", async () => {
    const { cookie, letter, url } = await letterToExport("export-dialog@praxis.example");
    const editor = await page(letter.editor, cookie);
    expect(editor.html).toContain(`href="${url}"`);
    expect(editor.html).toContain('data-action="export"');
    const dialog = await page(url, cookie);
    expect(dialog.status).toBe(200);
    expect(dialog.html).toContain("Export letter: Visite.wav");
    expect(dialog.html).toContain('name="recipient_name"');
    expect(dialog.html).toMatch(
      new RegExp(`name="date" min="1900-01-01" [^>]*value="${new Date().toISOString().slice(0, 10)}"`),
    );
    for (const format of ["pdf", "docx", "text", "print", "fhir"])
      expect(dialog.html).toContain(`data-format="${format}"`);
    expect(dialog.html).toContain(`formaction="/druck/arztbriefe/${letter.path}"`);
    expect(dialog.html).toContain(`formaction="/resources/arztbrief-export/${letter.path}"`);
    // One field per line of the address zone, and no birth date after today.
    expect(dialog.html.match(/name="recipient_address"/g)).toHaveLength(4);
    expect(dialog.html).toMatch(/name="patient_birth_date" min="1900-01-01" max="\d{4}-\d{2}-\d{2}"/);
  });

  it("gives a DIN 5008 PDF with the recipient, the patient line and the sections that say something", async () => {
    const { user, cookie, letter, download, at } = await letterToExport("export-pdf@praxis.example");
    const response = await post(downloadAction, download, cookie, { ...DETAILS, format: "pdf" }, at);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("application/pdf");
    expect(response.headers.get("Content-Disposition")).toBe(
      "attachment; filename=\"Arztbrief-Visite-2026-11-27.pdf\"; filename*=UTF-8''Arztbrief-Visite-2026-11-27.pdf",
    );
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(new TextDecoder().decode(bytes.slice(0, 5))).toBe("%PDF-");
    const text = (await pdfText(bytes)).replace(/\s+/g, " ");
    for (const expected of ["Herrn Dr. med. Jürgen Weiß", "12345 Musterstadt", "Erika Mustermann", "12.08.1964"])
      expect(text).toContain(expected);
    expect(text).toContain("Arztbrief nach Sprechstunde");
    expect(text).toContain("Übelkeit verneint.");
    expect(text).toContain("Lunge frei, Herztöne rein.");
    expect(text).not.toContain("Procedere");
    expect(text).not.toContain("Keine Informationen gefunden");
    expect(text).toMatch(/Seite 1 von 1/);
    // Not kept: nothing of the patient is stored. Audited by format, without content.
    expect(await keptRows(letter.key)).toEqual([]);
    expect(await exportAudit(user.id)).toEqual([
      { action: "letter.export.pdf", outcome: "success", entity_id: letter.key },
    ]);
  });

  it("keeps the details with the letter when asked, and the next export starts from them", async () => {
    const { cookie, letter, url, download, at } = await letterToExport("export-keep@praxis.example");
    const response = await post(downloadAction, download, cookie, { ...DETAILS, keep: "yes", format: "docx" }, at);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe(
      "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    );
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(new TextDecoder().decode(bytes.slice(0, 2))).toBe("PK");
    expect(await keptRows(letter.key)).toEqual([
      {
        recipient_name: "Herrn Dr. med. Jürgen Weiß",
        recipient_address: ["Hauptstraße 5", "12345 Musterstadt"],
        patient_name: "Erika Mustermann",
        patient_birth_date: "1964-08-12",
        subject: "Arztbrief nach Sprechstunde",
        letter_date: "2026-11-27",
      },
    ]);
    const again = await page(url, cookie);
    expect(again.html).toContain('value="Herrn Dr. med. Jürgen Weiß"');
    expect(again.html).toContain('value="Hauptstraße 5"');
    expect(again.html).toContain('value="12345 Musterstadt"');
    expect(again.html).toContain('value="1964-08-12"');
    expect(again.html).toMatch(/name="keep"[^>]*checked/);
  });

  it("shows the text for the practice software to copy, without the empty sections", async () => {
    const { user, cookie, letter, url } = await letterToExport("export-text@praxis.example");
    const shown = await page(url, cookie, { ...DETAILS, format: "text" });
    expect(shown.status).toBe(200);
    expect(shown.html).toContain("data-pvs-text");
    expect(shown.html).toContain("Anamnese\nSeit drei Tagen Husten, kein Fieber. Übelkeit verneint.");
    expect(shown.html).not.toContain("Keine Informationen gefunden");
    // What was typed stays in the form.
    expect(shown.html).toContain('value="Erika Mustermann"');
    expect((await exportAudit(user.id)).map((r) => r.action)).toEqual(["letter.export.text"]);
    expect(await keptRows(letter.key)).toEqual([]);
  });

  it("gives a FHIR document with the PDF inside", async () => {
    const { cookie, download, at } = await letterToExport("export-fhir@praxis.example");
    const response = await post(downloadAction, download, cookie, { ...DETAILS, format: "fhir" }, at);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("application/fhir+json");
    const bundle = await response.json();
    expect(bundle).toMatchObject({ resourceType: "Bundle", type: "document" });
    const resources = bundle.entry.map((e: { resource: { resourceType: string } }) => e.resource);
    const composition = resources[0];
    expect(composition.resourceType).toBe("Composition");
    expect(composition.title).toBe("Arztbrief nach Sprechstunde");
    expect(composition.section.map((s: { title?: string }) => s.title).filter(Boolean)).toEqual(["Anamnese", "Befund"]);
    const reference = resources.find((r: { resourceType: string }) => r.resourceType === "DocumentReference");
    const pdf = Buffer.from(reference.content[0].attachment.data, "base64");
    expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
  });

  it("refuses bad input with a clear message, keeps what was typed and writes nothing", async () => {
    const { user, cookie, letter, url, download, at } = await letterToExport("export-bad@praxis.example");
    // The text shown in the dialog: the refusal there, with what was typed.
    const fiveLines = await page(url, cookie, {
      ...DETAILS,
      recipient_address: ["a", "b", "c", "d", "e"],
      patient_name: "Erika Mustermann",
      keep: "yes",
      format: "text",
    });
    expect(fiveLines.status).toBe(400);
    expect(fiveLines.html).toContain("The address may have at most 4 lines, so that it fits the address field.");
    expect(fiveLines.html).toContain('value="Erika Mustermann"');
    // A file: the download route sends the refusal back to the dialog by name, nothing personal in the address.
    const future = await post(
      downloadAction,
      download,
      cookie,
      { ...DETAILS, patient_birth_date: "2999-01-01", format: "pdf" },
      at,
    );
    expect(future.status).toBe(303);
    const back = future.headers.get("Location")!;
    expect(back).toBe(`${url}?error=birthDate`);
    expect((await page(back, cookie)).html).toContain("Please enter a valid date of birth that is not in the future.");
    const long = await post(
      downloadAction,
      download,
      cookie,
      { ...DETAILS, subject: "x".repeat(201), format: "docx" },
      at,
    );
    expect(long.headers.get("Location")).toBe(`${url}?error=tooLong&field=subject&max=200`);
    expect((await page(long.headers.get("Location")!, cookie)).html).toContain(
      "The field “subject” may be at most 200 characters long.",
    );
    const unknown = await post(downloadAction, download, cookie, { ...DETAILS, format: "exe" }, at);
    expect(unknown.headers.get("Location")).toMatch(/\?error=format&formats=/);
    expect(await keptRows(letter.key)).toEqual([]);
    expect((await exportAudit(user.id)).map((r) => r.outcome)).toEqual(["failure", "failure", "failure"]);
  });

  it("is another user's letter: 404 for the dialog, every export, the print view and the JSON call", async () => {
    expectConsoleError();
    const { letter, url, at } = await letterToExport("export-owner@praxis.example");
    const { cookie: other } = await signedInUser({ email: "export-other@praxis.example" });
    expect((await page(url, other)).status).toBe(404);
    expect(
      (await post(exportAction, url, other, { ...DETAILS, format: "pdf" }, at).catch((r: Response) => r)).status,
    ).toBe(404);
    const print = `/druck/arztbriefe/${letter.path}`;
    expect((await callRoute(printLoader, request(print, { cookie: other }), at).catch((r: Response) => r)).status).toBe(
      404,
    );
    expect((await post(printAction, print, other, DETAILS, at).catch((r: Response) => r)).status).toBe(404);
    expect(await keptRows(letter.key)).toEqual([]);
  });
});

describe("the print view", () => {
  it("lays the letter out after DIN 5008 with the details posted from the dialog, outside the workspace's frame", async () => {
    const { user, cookie, letter } = await letterToExport("export-print@praxis.example");
    const print = `/druck/arztbriefe/${letter.path}`;
    const shown = await page(print, cookie, { ...DETAILS, format: "print" });
    expect(shown.status).toBe(200);
    expect(shown.html).toContain("data-print-letter");
    expect(shown.html).toMatch(/data-recipient="true">Herrn Dr\. med\. Jürgen Weiß\nHauptstraße 5\n12345 Musterstadt</);
    expect(shown.html).toContain("Erika Mustermann, geb. 12.08.1964");
    expect(shown.html).toContain('data-print-section="Anamnese"');
    expect(shown.html).not.toContain('data-print-section="Procedere"');
    expect(shown.html).toContain('href="/resources/letter-print.css?lang=de"');
    expect(shown.html).not.toContain("data-sidebar");
    expect(shown.html).not.toContain("data-topbar");
    // Without details (GET): the letter with today's date and no recipient.
    const plain = await page(print, cookie);
    expect(plain.status).toBe(200);
    expect(plain.html).toContain('data-print-section="Befund"');
    expect((await exportAudit(user.id)).map((r) => r.action)).toEqual(["letter.export.print", "letter.export.print"]);
  });

  it("numbers printed pages in the letter's language", async () => {
    const de = await (await callRoute(pageCss, request("/resources/letter-print.css?lang=de"))).text();
    expect(de).toContain('content: "Seite " counter(page) " von " counter(pages);');
    const en = await (await callRoute(pageCss, request("/resources/letter-print.css?lang=en"))).text();
    expect(en).toContain('content: "Page " counter(page) " of " counter(pages);');
  });
});

describe("the export over the JSON API", () => {
  it("answers the file, keeps nothing unless asked, and refuses bad fields naming them", async () => {
    const { client, userId } = await signIn("anna-berger");
    const letter = await seedLetter(userId, { content: LETTER });
    const path = `/api/arztbrief-export/${letter.path}`;
    const response = await callRoute(
      apiExport,
      client(path, {
        method: "POST",
        json: {
          format: "text",
          recipient: { name: "Praxis Dr. Braun", address_lines: ["Weg 1", "10115 Berlin"] },
          patient: { name: "Max Muster", birth_date: "1980-01-02" },
          subject: "Befund",
          date: "2026-11-28",
        },
      }),
      { "*": letter.path },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
    const text = await response.text();
    expect(text).toContain("Max Muster");
    expect(text).toContain("Befund\nLunge frei, Herztöne rein.");
    expect(text).not.toContain("Keine Informationen gefunden");
    expect(await keptRows(letter.key)).toEqual([]);

    const at = { "*": letter.path };
    const wrong = await withParams(apiExport, client, path, at, {
      method: "POST",
      json: { format: "pdf", recipient: { name: 5 } },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail).toBe("The field “recipient_name” must contain text.");
    const print = await withParams(apiExport, client, path, at, { method: "POST", json: { format: "print" } });
    expect(print.status).toBe(400);
    const kept = await callRoute(
      apiExport,
      client(path, { method: "POST", json: { format: "pdf", subject: "Kontrolle", keep: true } }),
      at,
    );
    expect(kept.status).toBe(200);
    expect(kept.headers.get("Content-Type")).toBe("application/pdf");
    expect((await keptRows(letter.key)).map((r) => r.subject)).toEqual(["Kontrolle"]);
    // Another user's letter is a 404, as a missing one.
    const other = await signIn("jonas-keller");
    expect(
      (await withParams(apiExport, other.client, path, at, { method: "POST", json: { format: "pdf" } })).status,
    ).toBe(404);
  });
});
