/**
 * Shared fixtures for the M-Files adapter test files (patient-records-mfiles*.server.test.ts): the
 * fake server's vault and user, the documents every test starts with, and small helpers. Not a test
 * file itself.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { afterEach, beforeEach, expect } from "vitest";

import { startFakeMFilesServer, type FakeMFilesServer } from "./fake-mfiles-server";

import {
  PatientRecordError,
  createPatientRecordSource,
  type PatientRecordSource,
  type PatientRecordsConfig,
} from "~/services/patient-records/patient-records.server";

export const VAULT = "{C840BE1A-5B47-4AC0-8EF7-835C166C8E24}";
export const PATIENT_PROPERTY = 1150;
export const USER = "svc-skribent";
export const PASSWORD = "correct horse battery staple";

export function pdf(label: string, padTo = 0): Buffer {
  const text = Buffer.from(`%PDF-1.7\n% ${label}\n%%EOF\n`);
  return padTo > text.length ? Buffer.concat([text, Buffer.alloc(padTo - text.length, 0x20)]) : text;
}

export async function rejection(promise: Promise<unknown>): Promise<PatientRecordError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PatientRecordError);
  return error as PatientRecordError;
}

/** A second host that must never be contacted. */
export async function startBystander(): Promise<{ url: string; hits: number; close(): Promise<void> }> {
  const state = { url: "", hits: 0, close: async () => {} };
  const server: Server = createServer((_req, res) => {
    state.hits++;
    res.end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((error) => (error ? reject(error) : resolve()));
    });
  return state;
}

export type MFilesOverrides = Partial<Extract<PatientRecordsConfig, { kind: "mfiles" }>>;

/** The adapter pointed at the fake server at `url`, with the test vault, user and a 5 s time-out. */
export function mfilesSource(url: string, overrides: MFilesOverrides = {}): PatientRecordSource {
  return createPatientRecordSource({
    kind: "mfiles",
    baseUrl: url,
    vaultGuid: VAULT,
    username: USER,
    password: PASSWORD,
    patientIdPropertyId: PATIENT_PROPERTY,
    timeoutMs: 5_000,
    ...overrides,
  });
}

export type SeededIds = Record<string, { id: number; fileIds: number[] }>;

/**
 * The documents every adapter test starts with: two PDFs of patient P-1, and beside them what must not
 * come back (a .docx, HTML and a cut-off file named .pdf, a deleted object, another object type,
 * another patient, the same value in another property). Returns their ids by key.
 */
export function addPatientDocuments(server: FakeMFilesServer): SeededIds {
  let ids: SeededIds = {};
  const at = (day: number) => new Date(Date.UTC(2024, 0, day));
  const add = (key: string, input: Parameters<FakeMFilesServer["addObject"]>[0]) => {
    const ref = server.addObject(input);
    ids = { ...ids, [key]: { id: ref.id, fileIds: ref.fileIds } };
  };
  add("befund", {
    title: "Befund",
    properties: { [PATIENT_PROPERTY]: "P-1", 0: "Befund" },
    files: [{ name: "Befund", extension: "pdf", content: pdf("P-1 befund") }],
    lastModified: at(3),
  });
  add("labor", {
    title: "Labor",
    properties: { [PATIENT_PROPERTY]: "P-1" },
    files: [{ name: "Labor 01/2024", extension: "PDF", content: pdf("P-1 labor") }],
    lastModified: at(2),
  });
  add("docx", {
    title: "Notizen",
    properties: { [PATIENT_PROPERTY]: "P-1" },
    files: [{ name: "Notizen", extension: "docx", content: "PK\u0003\u0004 not a pdf" }],
    lastModified: at(4),
  });
  add("disguised", {
    title: "Scan",
    properties: { [PATIENT_PROPERTY]: "P-1" },
    files: [{ name: "Scan", extension: "pdf", content: "<html>login page</html>" }],
    lastModified: at(5),
  });
  add("truncated", {
    title: "Abgebrochen",
    properties: { [PATIENT_PROPERTY]: "P-1" },
    files: [{ name: "Truncated", extension: "pdf", content: "%PD" }],
    lastModified: at(1),
  });
  add("deleted", {
    title: "Gelöscht",
    properties: { [PATIENT_PROPERTY]: "P-1" },
    files: [{ name: "Deleted", extension: "pdf", content: pdf("P-1 deleted") }],
    deleted: true,
  });
  add("otherType", {
    type: 9,
    title: "Not a document",
    properties: { [PATIENT_PROPERTY]: "P-1" },
    files: [{ name: "Other", extension: "pdf", content: pdf("P-1 other type") }],
  });
  add("otherPatient", {
    title: "Fremder Befund",
    properties: { [PATIENT_PROPERTY]: "P-2" },
    files: [{ name: "Fremd", extension: "pdf", content: pdf("P-2 befund") }],
  });
  add("otherProperty", {
    title: "Same value, other property",
    properties: { 1151: "P-1" },
    files: [{ name: "Wrong property", extension: "pdf", content: pdf("other property") }],
  });
  return ids;
}

/** What an adapter test works with: the fake server, its accounts and the seeded documents. */
export type MFilesWorld = {
  /** A test may close it and start another in its place. */
  server: FakeMFilesServer;
  /** The fake server's accounts, live: a test may change a password. */
  users: Array<{ username: string; password: string }>;
  ids: SeededIds;
  /** The adapter pointed at the current fake server. */
  source(overrides?: MFilesOverrides): PatientRecordSource;
  /** The file-content requests the fake server has seen. */
  contentRequests(): FakeMFilesServer["requests"];
};

/**
 * For a describe block: before each test a fresh fake server with the test user and the documents of
 * `addPatientDocuments`; after it, the server closed.
 */
export function fakeMFilesForEachTest(): MFilesWorld {
  const world = {
    source: (overrides: MFilesOverrides = {}) => mfilesSource(world.server.url, overrides),
    contentRequests: () => world.server.requests.filter((r) => r.path.endsWith("/content")),
  } as MFilesWorld;
  beforeEach(async () => {
    world.users = [{ username: USER, password: PASSWORD }];
    world.server = await startFakeMFilesServer({ vaultGuid: VAULT, users: world.users });
    world.ids = addPatientDocuments(world.server);
  });
  afterEach(async () => {
    await world.server.close();
  });
  return world;
}
