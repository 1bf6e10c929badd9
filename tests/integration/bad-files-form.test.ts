import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "~/models/db.server";
import {
  brokenHeaderFiles,
  brokenHeaderType,
  sparseWav,
  wavBomb,
  wrongMagicFiles,
  WRONG_MAGIC_TYPES,
  xingBomb,
  type BadFile,
} from "../support/bad-file-fixtures";
import { audioPage, escaped, formUpload, storedState } from "../support/bad-file-doors";
import { makeTempDir, removeTempDir } from "../support/audio-fixtures";
import { setupTestApp, signedInUser } from "../setup/app";

// Hostile files through the upload form without JavaScript (SPEC §5 "Audio upload"): each is refused with the
// SPEC's message — in the action's answer and in the page the user gets back — and leaves no row and no object.
setupTestApp();
let dir: string;
let user: { id: string; cookie: string };

const unsupported = (type: string) => `File type "${type}" is not supported. Please upload only MP3, or WAV files.`;

beforeAll(async () => {
  dir = await makeTempDir("skribent-bad-form-");
  const signed = await signedInUser({ email: "bad-form@praxis.example" });
  user = { id: signed.user.id, cookie: signed.cookie };
});
afterAll(async () => {
  await removeTempDir(dir);
});

/** Posts the file and expects the refusal `message`, with nothing stored. */
async function expectRefused(file: BadFile | Parameters<typeof formUpload>[1], message: string) {
  const before = await storedState(user.id);
  expect(await formUpload(user.cookie, file)).toEqual({ status: 400, message });
  expect(await storedState(user.id)).toEqual(before);
}

describe("the upload form refuses hostile files", () => {
  it.each(wrongMagicFiles())("a $label file named $name, by its magic bytes", async (file) => {
    await expectRefused(file, unsupported(WRONG_MAGIC_TYPES[file.label]!));
  });

  it.each(brokenHeaderFiles())("a broken header: $label", async (file) => {
    await expectRefused(file, unsupported(brokenHeaderType(file)));
  });

  it("zero bytes", async () => {
    await expectRefused(
      { label: "empty", name: "leer.wav", type: "audio/wav", bytes: Buffer.alloc(0) },
      "Invalid audio data: Empty file",
    );
  });

  it("73,400,321 bytes, streamed from a sparse file", async () => {
    const file = sparseWav(dir, 73_400_321);
    await expectRefused(
      { label: "oversize", name: "gross.wav", type: "audio/wav", stream: fs.createReadStream(file) },
      "File is too large (70.1 MB). Maximum size is 70 MB.",
    );
  }, 60_000);

  it("an MP3 whose Xing header claims 50 million frames: too long, by what the header says", async () => {
    await expectRefused(await xingBomb(dir), "Recording is too long (362:48:42). Maximum length is 4:00:00.");
  });

  it("a WAV whose data chunk claims 4 GiB is kept with its true length of 2 s", async () => {
    const other = await signedInUser({ email: "bad-form-bomb@praxis.example" });
    expect(await formUpload(other.cookie, wavBomb())).toEqual({ status: 302, message: "" });
    const rows = await getDb()
      .selectFrom("recordings")
      .where("owner_id", "=", other.user.id)
      .select(["duration_seconds", "upload_status", "audio_format"])
      .execute();
    expect(rows).toEqual([{ duration_seconds: 2, upload_status: "ready", audio_format: "wav" }]);
    expect((await storedState(other.user.id)).objects).toHaveLength(1);
  });
});

describe("the page after a refused upload", () => {
  it("shows the SPEC message in the error banner, escaped, and lists nothing", async () => {
    const [pdf] = wrongMagicFiles();
    const page = await audioPage(user.cookie, pdf);
    expect(page.status).toBe(400);
    // The banner comes before the upload form; the form's own data-upload-error box is empty.
    const banner = page.html.slice(page.html.indexOf("data-upload-error"), page.html.indexOf("data-upload-form"));
    expect(banner).toContain(escaped(unsupported("application/pdf")));
    expect(page.html).not.toContain("befund.wav");
  });

  it("in the user's language: the German wording for a German page", async () => {
    const before = await storedState(user.id);
    const file: BadFile = { label: "empty", name: "leer.wav", type: "audio/wav", bytes: Buffer.alloc(0) };
    expect(await formUpload(user.cookie, file, "de")).toEqual({
      status: 400,
      message: "Ungültige Audiodaten: Leere Datei",
    });
    expect(await storedState(user.id)).toEqual(before);
  });
});
