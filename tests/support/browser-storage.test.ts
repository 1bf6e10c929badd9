import { describe, expect, it } from "vitest";
import { storageProblems } from "./browser-storage";

describe("the end-to-end browser storage guard", () => {
  const key = "audio/0b1e7f0e-1d2c-4c1b-9f5e-3a2b1c0d9e8f/20261122-101500-6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b.wav";

  it("accepts the view preferences and a part-upload's server key", () => {
    expect(
      storageProblems({
        local: [
          ["skribent.audioPanel", "closed"],
          ["skribent.transcriptHighlight", "on"],
          ["skribent.upload.1k3x9z", key],
        ],
        session: [["positions", '{"default":0,"k3j9x1a2":412.5}']],
      }),
    ).toEqual([]);
  });

  it("flags a token, patient text under a known key, an unknown key and anything in sessionStorage", () => {
    expect(
      storageProblems({
        local: [
          ["token", "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln"],
          ["skribent.upload.1k3x9z", "Frau Müller, 54 Jahre, Brustschmerz seit gestern"],
          ["skribent.audioPanel", "open"],
        ],
        session: [
          ["draft", "Anamnese: …"],
          ["positions", '{"default":"Frau Müller"}'],
        ],
      }),
    ).toEqual([
      'sessionStorage holds "draft"',
      'sessionStorage "positions" holds an unexpected value',
      'localStorage holds an unknown key "token"',
      'localStorage "skribent.upload.1k3x9z" holds an unexpected value',
    ]);
  });
});
