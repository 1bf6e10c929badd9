import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { action as extractMfiles } from "~/routes/api.extract-mfiles-pdf-context";
import { action as extractPdf } from "~/routes/api.extract-pdf-from-s3";
import { action as pdfUploadUrls } from "~/routes/api.get-pdf-upload-urls";
import { action as storagePut } from "~/routes/resources.storage.$";
import { setConfig } from "~/services/config/config.server";
import { setPatientRecordSource } from "~/services/letters/context-sources.server";
import { getDb } from "~/models/db.server";
import { createDirectoryPatientRecordSource } from "~/services/patient-records/patient-records.server";
import { getStorage } from "~/services/storage/storage.server";
import { germanTextPdf, GERMAN_LINES, multiPagePdf } from "../support/pdf-fixtures";
import { getDevAccessToken } from "../support/oidc-client";
import { callRoute, request, setupTestApp, TEST_CLIENT } from "../setup/app";

// Contract tests for the context rows of SPEC §7: PDFs and patient records.
const app = setupTestApp({ provider: true });
let recordsDir: string;

beforeAll(async () => {
  recordsDir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-records-"));
  fs.mkdirSync(path.join(recordsDir, "P-100"));
  fs.writeFileSync(path.join(recordsDir, "P-100", "befund.pdf"), await germanTextPdf());
  fs.writeFileSync(path.join(recordsDir, "P-100", "notiz.txt"), "not a pdf");
  setPatientRecordSource(createDirectoryPatientRecordSource(recordsDir));
});
afterAll(() => {
  setPatientRecordSource(undefined);
  fs.rmSync(recordsDir, { recursive: true, force: true });
});

async function as(accountId: string) {
  const { access_token } = await getDevAccessToken({
    issuer: app.issuer,
    ...TEST_CLIENT,
    accountId,
    audience: "skribent-api",
  });
  return (pathname: string, json: unknown) =>
    request(pathname, {
      method: "POST",
      headers: { Authorization: `Bearer ${access_token}`, "Content-Type": "application/json" },
      body: JSON.stringify(json),
    });
}

async function putPdf(url: string, bytes: Uint8Array) {
  const key = decodeURIComponent(new URL(url).pathname.replace(/^\/resources\/storage\//, ""));
  return callRoute(
    storagePut,
    new Request(url, { method: "PUT", headers: { "Content-Type": "application/pdf" }, body: new Uint8Array(bytes) }),
    { "*": key },
  );
}

describe("PDF context", () => {
  it("upload URLs, extraction with umlauts, and the PDFs are gone afterwards", async () => {
    const anna = await as("anna-berger");
    const urls = await (
      await callRoute(pdfUploadUrls, anna("/api/get-pdf-upload-urls", { filenames: ["Vorbefund.pdf", "Labor.pdf"] }))
    ).json();
    expect(Object.keys(urls)).toEqual(["upload_urls"]);
    expect(urls.upload_urls).toHaveLength(2);
    expect(Object.keys(urls.upload_urls[0]).sort()).toEqual(["s3_key", "upload_url"]);
    expect((await putPdf(urls.upload_urls[0].upload_url, await germanTextPdf())).status).toBe(200);
    expect((await putPdf(urls.upload_urls[1].upload_url, await multiPagePdf(2))).status).toBe(200);
    const keys = urls.upload_urls.map((u: { s3_key: string }) => u.s3_key);

    // Someone else cannot read them.
    const jonas = await as("jonas-keller");
    const stolen = await callRoute(extractPdf, jonas("/api/extract-pdf-from-s3", { s3_keys: keys }));
    expect(stolen.status).toBe(404);

    const response = await callRoute(extractPdf, anna("/api/extract-pdf-from-s3", { s3_keys: keys }));
    const body = await response.json();
    expect(Object.keys(body).sort()).toEqual(["extracted_text", "pdfs_processed", "success"]);
    expect(body.success).toBe(true);
    expect(body.pdfs_processed).toBe(2);
    expect(body.extracted_text).toContain(GERMAN_LINES[0]);
    expect(body.extracted_text).toContain("Vorbefund.pdf");
    for (const key of keys) expect(await getStorage().head(key)).toBeNull();
    expect(await getDb().selectFrom("context_uploads").select("storage_key").execute()).toEqual([]);
  });

  it("refuses missing or too many file names", async () => {
    const anna = await as("anna-berger");
    expect(await (await callRoute(pdfUploadUrls, anna("/api/get-pdf-upload-urls", { filenames: [] }))).json()).toEqual({
      detail: "File names are required",
    });
    const many = await callRoute(
      pdfUploadUrls,
      anna("/api/get-pdf-upload-urls", { filenames: Array.from({ length: 11 }, (_, i) => `${i}.pdf`) }),
    );
    expect(await many.json()).toEqual({ detail: "At most 10 PDF files at once" });
  });
});

describe("patient records", () => {
  it("are refused while disable_mfiles is 1 (the default)", async () => {
    const anna = await as("anna-berger");
    const response = await callRoute(extractMfiles, anna("/api/extract-mfiles-pdf-context", { patient_id: "P-100" }));
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ detail: "Fetching patient records is switched off for this organisation" });
  });

  it("with the flag at 0: validate the id, extract the PDFs, limit per user", async () => {
    setConfig({
      ...app.config,
      flags: { ...app.config.flags, disableMfiles: false },
      rateLimits: { ...app.config.rateLimits, patientRecordsPerHour: 2 },
    });
    try {
      const anna = await as("anna-berger");
      const empty = await callRoute(extractMfiles, anna("/api/extract-mfiles-pdf-context", { patient_id: "  " }));
      expect(await empty.json()).toEqual({ detail: "Patient ID is required" });
      const bad = await callRoute(extractMfiles, anna("/api/extract-mfiles-pdf-context", { patient_id: "../P-100" }));
      expect(await bad.json()).toEqual({ detail: "Invalid patient ID" });
      const ok = await (
        await callRoute(extractMfiles, anna("/api/extract-mfiles-pdf-context", { patient_id: "P-100" }))
      ).json();
      expect(ok).toMatchObject({ success: true, pdfs_processed: 1 });
      expect(ok.extracted_text).toContain(GERMAN_LINES[0]);
      const none = await (
        await callRoute(extractMfiles, anna("/api/extract-mfiles-pdf-context", { patient_id: "P-999" }))
      ).json();
      expect(none).toEqual({ success: false, extracted_text: "", pdfs_processed: 0 });
      const limited = await callRoute(extractMfiles, anna("/api/extract-mfiles-pdf-context", { patient_id: "P-100" }));
      expect(limited.status).toBe(429);
      // The limit is per user.
      const jonas = await as("jonas-keller");
      expect(
        (await callRoute(extractMfiles, jonas("/api/extract-mfiles-pdf-context", { patient_id: "P-100" }))).status,
      ).toBe(200);
      const audits = await getDb()
        .selectFrom("audit_events")
        .where("action", "=", "patient-record.fetch")
        .select("entity_id")
        .execute();
      expect(audits.length).toBeGreaterThan(0);
      expect(audits.every((a) => a.entity_id === null)).toBe(true);
    } finally {
      setConfig(app.config);
    }
  });
});
