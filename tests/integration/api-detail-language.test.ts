import { beforeAll, describe, expect, it } from "vitest";
import { loader as filesLoader } from "~/routes/api.files";
import { action as uploadUrlAction } from "~/routes/api.get-upload-url";
import { DETAIL_LANGUAGE_HEADER } from "~/services/web/api.server";
import { apiClientFor, type ApiClient } from "../support/api-client";
import { callRoute, setupTestApp } from "../setup/app";

// A refusal's `detail` is the SPEC's English for API clients, and the page's language for the app's own upload
// script, which asks with X-Skribent-Language: a German clinician reads why a file was refused in German.
const app = setupTestApp({ provider: true });
let anna: ApiClient;

beforeAll(async () => {
  anna = await apiClientFor(app.issuer, "anna-berger");
  await callRoute(filesLoader, anna("/api/files"));
});

async function refusal(language?: string) {
  const response = await callRoute(
    uploadUrlAction,
    anna("/api/get-upload-url", {
      method: "POST",
      headers: language === undefined ? {} : { [DETAIL_LANGUAGE_HEADER]: language },
      json: { file_name: "befund.pdf", file_type: "application/pdf", language_code: "de" },
    }),
  );
  return { status: response.status, body: await response.json() };
}

describe("the language of an API refusal", () => {
  it("is English unless the caller names a language of the app", async () => {
    const english = {
      status: 400,
      body: { detail: "Unsupported file type: application/pdf. Please upload MP3 or WAV files." },
    };
    expect(await refusal()).toEqual(english);
    expect(await refusal("fr")).toEqual(english);
    expect(await refusal("en")).toEqual(english);
    expect(await refusal("de")).toEqual({
      status: 400,
      body: { detail: "Nicht unterstützter Dateityp: application/pdf. Bitte laden Sie MP3- oder WAV-Dateien hoch." },
    });
  });
});
