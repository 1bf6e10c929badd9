import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { addPatientDocuments, PATIENT_PROPERTY } from "../tests/support/mfiles-helpers";
import { createLocalSignedUrl } from "~/services/storage/local-signing.server";
import { WORDS } from "../tests/support/access-matrix-fixture";
import type { FakeMFilesServer } from "../tests/support/fake-mfiles-server";
import { APP_VOCABULARY, CONTENT_PHRASES, CONTENT_WORDS, PATIENT_ID_PATTERN } from "../tests/support/log-canaries";
import { buildRules, loadCanaries, scanLines, SESSION_COOKIE } from "./log-hygiene.mjs";

// The log hygiene check (issue 9) must fail on each kind of secret and on users' content, and stay quiet on what
// the app rightly logs. The secrets are made the way the app makes them where that is cheap (a signed JWT, an S3
// presigned URL, a local signed URL, the M-Files fixture's patient ids).

const rules = buildRules({ phrases: CONTENT_PHRASES, words: CONTENT_WORDS, patientId: PATIENT_ID_PATTERN });
const source = "vitest pglite tests/integration/example.test.ts console.warn";
const line = (text: string) => `${source}\t${text}`;

/** The patient ids the M-Files fixture's vault is seeded with. */
function fixturePatientIds() {
  const ids = new Set<string>();
  const vault = {
    addObject(input: { properties?: Record<number, unknown> }) {
      const id = input.properties?.[PATIENT_PROPERTY];
      if (typeof id === "string") ids.add(id);
      return { type: 0, id: ids.size, version: 1, fileIds: [] };
    },
  };
  addPatientDocuments(vault as unknown as FakeMFilesServer);
  return [...ids];
}

const bad: Array<[string, string, string]> = [];
const clean = [
  "GET /api/recordings/2f0c6f9e-7f57-4a57-9b55-1c3f5a8f4e21/status 200 57 - 3.456 ms",
  "PUT /resources/storage/users/2f0c6f9e-7f57-4a57-9b55-1c3f5a8f4e21/audio/k7Qm2x9vT1.wav 200 - - 12.040 ms",
  "[transcription] job 8d7c1b2a-0f3e-4c5d-9e6f-7a8b9c0d1e2f attempt 2 failed: engine_timeout",
  "[boot] development sign-in provider at http://127.0.0.1:3101 (demo accounts, see README)",
  "[server] http://localhost:3100",
  "[auth] sign-in failed: bearer token rejected (JWTExpired)",
  `Set-Cookie: ${SESSION_COOKIE}=; Path=/; Max-Age=0`,
  "[patient-records] records_unavailable",
  "[llm] request with temperature=0.2 and max_tokens=800",
  `[settings] templates: section "${[...APP_VOCABULARY][0]}" saved`,
  "fake Speechmatics batch API at http://127.0.0.1:3105/eu1/v2 (key: test-key)",
  "[letters] job 51 attempt 1 failed: HTTP-500 from the model",
];

beforeAll(async () => {
  const jwt = await new SignJWT({ sub: "anna" })
    .setProtectedHeader({ alg: "HS256" })
    .setIssuedAt()
    .sign(new TextEncoder().encode("x".repeat(32)));
  const s3 = new S3Client({
    region: "eu-central-1",
    endpoint: "http://127.0.0.1:9",
    forcePathStyle: true,
    credentials: { accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" },
  });
  const s3Url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: "skribent", Key: "users/a/audio/b.wav" }), {
    expiresIn: 60,
  });
  const localUrl = createLocalSignedUrl({
    secret: "y".repeat(40),
    baseUrl: "http://localhost:3100",
    method: "PUT",
    key: "users/a/audio/b.wav",
    expiresInSeconds: 60,
    contentType: "audio/wav",
  });
  bad.push(
    ["JWT", `[auth] id token ${jwt} refused`, jwt],
    ["Bearer token", "[api] calling with Bearer sk-test-8f3a9c2b7d", "sk-test-8f3a9c2b7d"],
    ["Authorization header", 'headers {"authorization":"Basic c3ZjOnNlY3JldA=="}', "c3ZjOnNlY3JldA=="],
    ["Authorization header", "[mfiles] X-Authentication: Zm9vYmFyYmF6", "Zm9vYmFyYmF6"],
    ["session cookie", `Cookie: ${SESSION_COOKIE}=Zm9vYmFy.c2lnbmF0dXJl; lang=de`, "Zm9vYmFy.c2lnbmF0dXJl"],
    ["signed URL (S3)", `[storage] upload to ${s3Url} failed`, new URL(s3Url).searchParams.get("X-Amz-Signature")!],
    ["signed URL (local store)", `PUT ${localUrl.replace("http://localhost:3100", "")} 200`, localUrl.split("sig=")[1]],
    ["jwt= in a query", "[live] connecting to wss://eu2.rt.speechmatics.com/v2?jwt=k3y-0f-th3-s3ss10n", "k3y-0f-th3"],
    ["content", `[chat] the answer failed for "${WORDS.chat}"`, WORDS.chat],
    ["content", `[letters] bad reply: {"Anamnese":"${WORDS.letter}"}`, WORDS.letter],
    ["content", '[transcription] unreadable: {"alternatives":[{"content":"Kopfschmerzen"}]}', "Kopfschmerzen"],
    ["content", "[live-save] save failed: Seit drei Tagen habe ich starke Kopfschmerzen.", "Seit drei Tagen"],
    ...fixturePatientIds().map((id): [string, string, string] => ["patient id", `[patient-records] ${id}: none`, id]),
  );
});

describe("the log hygiene scan", () => {
  it("flags each kind of secret and content, masked, and none of the clean lines", () => {
    expect(fixturePatientIds()).toEqual(["P-1", "P-2"]);
    const lines = [...clean, ...bad.map(([, text]) => text)].map(line);
    const findings = scanLines(lines, rules);
    expect(findings.map((finding) => finding.line)).toEqual(bad.map((_, i) => clean.length + i + 1));
    findings.forEach((finding, i) => {
      const [rule, , secret] = bad[i];
      expect(finding.rules).toContain(rule);
      expect(finding.source).toBe(source);
      expect(finding.masked).toContain("***");
      expect(finding.masked).not.toContain(secret);
    });
  });

  it("reads a JSON entry (LOG_FORMAT=json) as its strings say, escapes and all", () => {
    const entry = (msg: string) =>
      JSON.stringify({ time: "2026-11-26T18:04:05.678Z", level: "warn", request_id: "5f0c2a9e", msg });
    const asciiOnly = (text: string) =>
      text.replace(/[^\x20-\x7e]|[A-Za-z]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    const hidden = entry(`[chat] the answer failed for ${WORDS.chat}`).replace(WORDS.chat, asciiOnly(WORDS.chat));
    expect(hidden).not.toContain(WORDS.chat);
    const request = JSON.stringify({
      level: "info",
      method: "GET",
      path: "/api/files",
      status: 200,
      msg: "GET /api/files 200",
    });
    const findings = scanLines([line(request), line(hidden), line(entry("[boot] ready"))], rules);
    expect(findings.map((finding) => [finding.line, finding.rules])).toEqual([[2, ["content"]]]);
    expect(findings[0].masked).not.toContain(WORDS.chat);
  });

  it("builds its canaries from the fixtures, also when bundled for plain Node", async () => {
    expect(CONTENT_PHRASES).toEqual(expect.arrayContaining(Object.values(WORDS)));
    expect(CONTENT_WORDS).toEqual(expect.arrayContaining(["Kopfschmerzen", "schwindelt"]));
    const bundled = await loadCanaries();
    expect(bundled.phrases).toEqual(CONTENT_PHRASES);
    expect(bundled.words).toEqual(CONTENT_WORDS);
    expect(bundled.patientId.source).toBe(PATIENT_ID_PATTERN.source);
  });

  it("knows the app's own names: the session cookie, and the words of its templates and help", () => {
    // The scan's name for the cookie is the one the app sets (web/security.server.ts names it, session.server.ts sets it).
    const security = fs.readFileSync(path.resolve("app/services/web/security.server.ts"), "utf8");
    expect(security).toContain(`export const SESSION_COOKIE = "${SESSION_COOKIE}";`);
    const session = fs.readFileSync(path.resolve("app/services/web/session.server.ts"), "utf8");
    expect(session).toContain("siteCookie(SESSION_COOKIE,");
    const texts = ["app/data", "public/locales"]
      .flatMap((dir) =>
        fs.readdirSync(path.resolve(dir), { recursive: true, encoding: "utf8" }).map((f) => path.join(dir, f)),
      )
      .filter((file) => file.endsWith(".json"))
      .map((file) => fs.readFileSync(path.resolve(file), "utf8"))
      .join("\n");
    const asWord = (word: string) => new RegExp(`(?<![\\p{L}\\p{N}_])${word}(?![\\p{L}\\p{N}_])`, "iu");
    // A transcript word the app itself says would make a false alarm; a listed word it no longer says, a blind spot.
    expect(CONTENT_WORDS.filter((word) => asWord(word).test(texts))).toEqual([]);
    expect([...APP_VOCABULARY].filter((word) => !asWord(word).test(texts))).toEqual([]);
  });

  it("fails the run from the command line, and passes a clean log", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-log-hygiene-"));
    try {
      const log = path.join(dir, "app-logs.txt");
      fs.writeFileSync(log, `${clean.map(line).join("\n")}\n`);
      const passed = await promisify(execFile)("node", ["scripts/log-hygiene.mjs", log]);
      expect(passed.stdout).toContain(`${clean.length} lines`);
      fs.appendFileSync(log, `${line(`Cookie: ${SESSION_COOKIE}=Zm9vYmFy.c2ln`)}\n`);
      const failed = await promisify(execFile)("node", ["scripts/log-hygiene.mjs", log]).then(
        () => null,
        (error: { code: number; stdout: string }) => error,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stdout).toContain(`${log}:${clean.length + 1} [session cookie]`);
      expect(failed?.stdout).not.toContain("Zm9vYmFy.c2ln");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
