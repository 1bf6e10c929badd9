import { describe, expect, it } from "vitest";
import {
  checkAdditionalContext,
  checkDisplayName,
  checkNewTag,
  normaliseTags,
  sanitiseFileName,
} from "./recording-rules";

describe("names and tags (SPEC §5)", () => {
  it("display names: Reading A, German names allowed", () => {
    expect(checkDisplayName("  Müller, Kontrolle  ")).toEqual({ ok: true, value: "Müller, Kontrolle" });
    expect(checkDisplayName("   ")).toEqual({ ok: false, message: "recordings:errors.textEmpty" });
    expect(checkDisplayName("x".repeat(101))).toEqual({ ok: false, message: "recordings:errors.textTooLong" });
    expect(checkDisplayName("x".repeat(100)).ok).toBe(true);
  });

  it("tags from the API: JSON string or array, invalid ones dropped, at most five", () => {
    expect(normaliseTags('["Kardio", "kardio", " ", 7, "' + "t".repeat(51) + '", "Nachsorge"]')).toEqual({
      ok: true,
      value: ["Kardio", "Nachsorge"],
    });
    expect(normaliseTags("not json")).toEqual({ ok: false, message: "recordings:errors.tagsNotArray" });
    expect(normaliseTags({ a: 1 })).toEqual({ ok: false, message: "recordings:errors.tagsNotArray" });
    expect(normaliseTags(["a", "b", "c", "d", "e", "f"])).toEqual({
      ok: false,
      message: "recordings:errors.tooManyTags",
    });
  });

  it("a tag added in the widget: Reading C", () => {
    expect(checkNewTag(" ", [])).toEqual({ ok: false, message: "recordings:errors.tagRequired" });
    expect(checkNewTag("t".repeat(51), [])).toEqual({ ok: false, message: "recordings:errors.tagTooLong" });
    expect(checkNewTag("KARDIO", ["Kardio"])).toEqual({ ok: false, message: "recordings:errors.tagDuplicate" });
    expect(checkNewTag("neu", ["a", "b", "c", "d", "e"])).toEqual({
      ok: false,
      message: "recordings:errors.tooManyTags",
    });
    expect(checkNewTag(" Überweisung ", [])).toEqual({ ok: true, value: "Überweisung" });
  });

  it("file names and context", () => {
    expect(sanitiseFileName("C:\\Users\\dr\\Gespräch\u0007 1.mp3")).toBe("Gespräch 1.mp3");
    expect(sanitiseFileName("../../etc/passwd")).toBe("passwd");
    expect(sanitiseFileName("")).toBe("audio");
    expect(checkAdditionalContext("x".repeat(10_001))).toEqual({
      ok: false,
      message: "recordings:errors.contextTooLong",
    });
    expect(checkAdditionalContext("  Befund  ")).toEqual({ ok: true, value: "Befund" });
  });
});
