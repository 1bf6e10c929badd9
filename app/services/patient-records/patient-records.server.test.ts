import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import {
  DEFAULT_MAX_BYTES_PER_DOCUMENT,
  DEFAULT_MAX_DOCUMENTS,
  PATIENT_ID_PATTERN,
  PatientRecordError,
  assertPatientId,
  createPatientRecordSource,
  type PatientRecordSource,
} from "./patient-records.server";

function pdf(label: string): Buffer {
  return Buffer.from(`%PDF-1.4\n% ${label}\n1 0 obj << >> endobj\n%%EOF\n`);
}

async function rejection(promise: Promise<unknown>): Promise<PatientRecordError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PatientRecordError);
  return error as PatientRecordError;
}

describe("assertPatientId", () => {
  it("trims and accepts letters, digits and hyphens up to 32 characters", () => {
    expect(assertPatientId("  P-000123 ")).toBe("P-000123");
    expect(assertPatientId("4711")).toBe("4711");
    expect(assertPatientId("P-1\n")).toBe("P-1");
    expect(assertPatientId("a".repeat(32))).toBe("a".repeat(32));
  });

  it.each([
    ["", "Patient ID is required"],
    ["   ", "Patient ID is required"],
    [undefined, "Patient ID is required"],
    [null, "Patient ID is required"],
    ["../x", "Invalid patient ID"],
    ["..", "Invalid patient ID"],
    ["a/b", "Invalid patient ID"],
    ["a\\b", "Invalid patient ID"],
    ["-P1", "Invalid patient ID"],
    ["P 1", "Invalid patient ID"],
    ["P.1", "Invalid patient ID"],
    ["Müller", "Invalid patient ID"],
    ["a".repeat(33), "Invalid patient ID"],
    [42, "Invalid patient ID"],
  ])("%j → %s", (value, expected) => {
    let error: unknown;
    try {
      assertPatientId(value);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PatientRecordError);
    expect((error as PatientRecordError).code).toBe("invalid_patient_id");
    expect((error as PatientRecordError).message).toBe(expected);
  });

  it("exports the strict pattern", () => {
    expect(PATIENT_ID_PATTERN.test("P-1")).toBe(true);
    expect(PATIENT_ID_PATTERN.test("P_1")).toBe(false);
  });
});

describe("directory patient records", () => {
  let tmp: string;
  let root: string;
  let source: PatientRecordSource;

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), "skribent-patients-"));
    root = path.join(tmp, "records");
    const outside = path.join(tmp, "outside");
    await fs.mkdir(outside, { recursive: true });
    await fs.writeFile(path.join(outside, "secret.pdf"), pdf("outside"));

    const p1 = path.join(root, "P-1");
    await fs.mkdir(path.join(p1, "folder.pdf"), { recursive: true }); // a directory named like a PDF
    await fs.writeFile(path.join(p1, "a-befund.pdf"), pdf("befund"));
    await fs.writeFile(path.join(p1, "b-labor.PDF"), pdf("labor"));
    await fs.writeFile(path.join(p1, "notes.txt"), pdf("text file with PDF bytes"));
    await fs.writeFile(path.join(p1, "fake.pdf"), "<html>not a pdf</html>");
    await fs.writeFile(path.join(p1, "short.pdf"), "%PD");
    await fs.writeFile(path.join(p1, ".hidden.pdf"), pdf("hidden"));
    await fs.symlink(path.join(outside, "secret.pdf"), path.join(p1, "link-out.pdf"));
    // A link that stays inside the records directory is fine.
    await fs.mkdir(path.join(root, "P-3"));
    await fs.writeFile(path.join(root, "P-3", "shared.pdf"), pdf("shared"));
    await fs.symlink(path.join(root, "P-3", "shared.pdf"), path.join(p1, "c-shared.pdf"));
    // A patient directory that is a link to somewhere else, holding a link back to another patient's file.
    await fs.symlink(outside, path.join(root, "P-2"));
    await fs.symlink(path.join(root, "P-3", "shared.pdf"), path.join(outside, "back-in.pdf"));
    // A sibling directory whose name starts with the root's name must not count as inside.
    await fs.mkdir(path.join(tmp, "records-evil", "x"), { recursive: true });
    await fs.writeFile(path.join(tmp, "records-evil", "x", "evil.pdf"), pdf("evil"));
    await fs.symlink(path.join(tmp, "records-evil", "x"), path.join(root, "P-4"));

    // Size and count limits (a sparse file costs no disk).
    const big = path.join(root, "P-5");
    await fs.mkdir(big);
    await fs.writeFile(path.join(big, "huge.pdf"), pdf("huge"));
    await fs.truncate(path.join(big, "huge.pdf"), DEFAULT_MAX_BYTES_PER_DOCUMENT + 1);
    const mixed = path.join(root, "P-6");
    await fs.mkdir(mixed);
    await fs.writeFile(path.join(mixed, "a-huge.pdf"), pdf("huge"));
    await fs.truncate(path.join(mixed, "a-huge.pdf"), DEFAULT_MAX_BYTES_PER_DOCUMENT + 1);
    await fs.writeFile(path.join(mixed, "b-small.pdf"), pdf("small"));
    await fs.writeFile(path.join(mixed, "c-exact.pdf"), pdf("exact"));
    await fs.truncate(path.join(mixed, "c-exact.pdf"), DEFAULT_MAX_BYTES_PER_DOCUMENT);
    const many = path.join(root, "P-7");
    await fs.mkdir(many);
    for (let i = 0; i < DEFAULT_MAX_DOCUMENTS + 3; i++) {
      await fs.writeFile(path.join(many, `doc-${String(i).padStart(2, "0")}.pdf`), pdf(`doc ${i}`));
    }

    source = createPatientRecordSource({ kind: "directory", directory: root });
  });

  afterAll(async () => {
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it("returns the patient's real PDFs by name and ignores everything else", async () => {
    const documents = await source.fetchDocuments("P-1");
    expect(source.kind).toBe("directory");
    expect(documents.map((d) => d.name)).toEqual(["a-befund.pdf", "b-labor.PDF", "c-shared.pdf"]);
    expect(Buffer.from(documents[0].data)).toEqual(pdf("befund"));
    expect(Buffer.from(documents[1].data)).toEqual(pdf("labor"));
    expect(Buffer.from(documents[2].data)).toEqual(pdf("shared"));
  });

  it("returns [] for an unknown patient", async () => {
    expect(await source.fetchDocuments("P-999")).toEqual([]);
  });

  it("does not follow symlinks that leave the directory", async () => {
    const names = (await source.fetchDocuments("P-1")).map((d) => d.name);
    expect(names).not.toContain("link-out.pdf");
    expect(await source.fetchDocuments("P-2")).toEqual([]);
    expect(await source.fetchDocuments("P-4")).toEqual([]);
  });

  it.each([
    ["../x", "Invalid patient ID"],
    ["a/b", "Invalid patient ID"],
    ["..", "Invalid patient ID"],
    ["", "Patient ID is required"],
    ["  ", "Patient ID is required"],
    ["P".repeat(33), "Invalid patient ID"],
  ])("rejects %j with %s before touching the file system", async (id, message) => {
    const error = await rejection(source.fetchDocuments(id));
    expect(error.code).toBe("invalid_patient_id");
    expect(error.message).toBe(message);
  });

  it("skips a PDF over the size limit and fails with too_large when nothing else is left", async () => {
    expect((await source.fetchDocuments("P-6")).map((d) => d.name)).toEqual(["b-small.pdf", "c-exact.pdf"]);
    expect((await rejection(source.fetchDocuments("P-5"))).code).toBe("too_large");
  });

  it("returns at most the default number of documents", async () => {
    const documents = await source.fetchDocuments("P-7");
    expect(documents).toHaveLength(DEFAULT_MAX_DOCUMENTS);
    expect(documents[0].name).toBe("doc-00.pdf");
  });

  it("honours an aborted signal", async () => {
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    await expect(source.fetchDocuments("P-1", { signal: controller.signal })).rejects.toThrow("stop");
  });

  it("checks the directory", async () => {
    expect(await source.check()).toEqual({ status: "healthy" });
    const missing = createPatientRecordSource({ kind: "directory", directory: path.join(tmp, "nope") });
    expect((await missing.check()).status).toBe("not_configured");
    expect(await missing.fetchDocuments("P-1")).toEqual([]);
    const file = createPatientRecordSource({ kind: "directory", directory: path.join(tmp, "outside", "secret.pdf") });
    expect((await file.check()).status).toBe("error");
  });
});
