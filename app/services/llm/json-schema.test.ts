import { describe, expect, it } from "vitest";

import { parseJsonAnswer, readStructuredAnswer, validateJson } from "./json-schema";
import type { JsonSchema } from "./types";

// The validator for the JSON Schema subset both engines enforce, and the tolerant-but-never-repairing parser.

const LETTER: JsonSchema = {
  type: "object",
  properties: {
    document_type: { type: "string", enum: ["patient_conversation", "doctor_dictation", "other"] },
    sections: {
      type: "object",
      properties: { s1: { type: "string" }, "zweite Sektion": { type: "string", maxLength: 5 } },
      required: ["s1", "zweite Sektion"],
      additionalProperties: false,
    },
  },
  required: ["document_type", "sections"],
  additionalProperties: false,
};

describe("validateJson", () => {
  it("accepts a conforming value", () => {
    expect(validateJson(LETTER, { document_type: "other", sections: { s1: "a", "zweite Sektion": "b" } })).toEqual([]);
  });

  it("names every problem with its path", () => {
    expect(validateJson(LETTER, { document_type: "letter", sections: { s1: 3, extra: "x" }, more: true })).toEqual([
      "$.document_type: not one of the 3 allowed values",
      '$.sections["zweite Sektion"]: required property missing',
      "$.sections.s1: expected string, got integer",
      "$.sections.extra: property not allowed",
      "$.more: property not allowed",
    ]);
  });

  it("checks types, including integer against number and null", () => {
    expect(validateJson({ type: "integer" }, 1.5)).toEqual(["$: expected integer, got number"]);
    expect(validateJson({ type: "number" }, 2)).toEqual([]);
    expect(validateJson({ type: "number" }, "2")).toEqual(["$: expected number, got string"]);
    expect(validateJson({ type: "null" }, null)).toEqual([]);
    expect(validateJson({ type: "object" }, [])).toEqual(["$: expected object, got array"]);
    expect(validateJson({ type: "array" }, null)).toEqual(["$: expected array, got null"]);
    expect(validateJson({ type: "boolean" }, 0)).toEqual(["$: expected boolean, got integer"]);
  });

  it("counts string lengths in characters, not UTF-16 units", () => {
    expect(validateJson({ type: "string", maxLength: 2 }, "😀ü")).toEqual([]);
    expect(validateJson({ type: "string", maxLength: 2 }, "abc")).toEqual(["$: 3 characters, at most 2 allowed"]);
    expect(validateJson({ type: "string", minLength: 1 }, "")).toEqual(["$: 0 characters, at least 1 required"]);
  });

  it("checks patterns (which llama.cpp grammars do not enforce) without quoting the value", () => {
    const icd: JsonSchema = { type: "string", pattern: "^[A-Z][0-9]{2}(\\.[0-9]{1,2})?$" };
    expect(validateJson(icd, "G43.1")).toEqual([]);
    const errors = validateJson(icd, "Migräne");
    expect(errors).toEqual(["$: does not match the pattern ^[A-Z][0-9]{2}(\\.[0-9]{1,2})?$"]);
    expect(errors.join()).not.toContain("Migräne");
    expect(validateJson({ type: "string", pattern: "(" }, "x")).toEqual([
      "$: the schema's pattern is not a valid regular expression",
    ]);
  });

  it("checks arrays: bounds and every item", () => {
    const schema: JsonSchema = { type: "array", items: { type: "string", enum: ["a", "b"] }, minItems: 1, maxItems: 2 };
    expect(validateJson(schema, ["a"])).toEqual([]);
    expect(validateJson(schema, [])).toEqual(["$: 0 items, at least 1 required"]);
    expect(validateJson(schema, ["a", "b", "c"])).toEqual([
      "$: 3 items, at most 2 allowed",
      "$[2]: not one of the 2 allowed values",
    ]);
  });

  it("checks const and enums of other types", () => {
    expect(validateJson({ const: "v1" }, "v1")).toEqual([]);
    expect(validateJson({ const: "v1" }, "v2")).toEqual(["$: not the required constant"]);
    expect(validateJson({ enum: [1, true] }, true)).toEqual([]);
    expect(validateJson({ enum: [1, true] }, "1")).toEqual(["$: not one of the 2 allowed values"]);
  });

  it("allows unknown properties unless additionalProperties is false, and validates known ones wherever", () => {
    expect(validateJson({ type: "object", properties: { a: { type: "string" } } }, { b: 1 })).toEqual([]);
    expect(validateJson({ type: "object", properties: { a: { type: "string" } } }, { a: 1 })).toEqual([
      "$.a: expected string, got integer",
    ]);
  });

  it("stops at 20 problems", () => {
    const schema: JsonSchema = { type: "array", items: { type: "string" } };
    expect(
      validateJson(
        schema,
        Array.from({ length: 50 }, () => 1),
      ),
    ).toHaveLength(20);
  });
});

describe("parseJsonAnswer", () => {
  it("parses plain JSON with surrounding whitespace", () => {
    expect(parseJsonAnswer('  \n{"a": 1}\n ')).toEqual({ ok: true, value: { a: 1 } });
  });

  it("takes the JSON out of one fence around the whole answer", () => {
    expect(parseJsonAnswer('```json\n{"a": 1}\n```')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseJsonAnswer("```\n[1, 2]\n```")).toEqual({ ok: true, value: [1, 2] });
  });

  it("drops a closed reasoning block in front", () => {
    expect(parseJsonAnswer('<think>The user wants JSON.</think>\n{"a": 1}')).toEqual({ ok: true, value: { a: 1 } });
  });

  it.each([
    ["prose around the JSON", 'Here it is: {"a": 1}'],
    ["a truncated answer", '{"a": "Kopfschmerzen seit'],
    ["a fence that does not close", '```json\n{"a": 1}'],
    ["an unclosed reasoning block", '<think>{"a": 1}'],
    ["two values", '{"a": 1}{"a": 2}'],
    ["a trailing comma", '{"a": 1,}'],
  ])("never repairs %s", (_label, text) => {
    expect(parseJsonAnswer(text).ok).toBe(false);
  });

  it("says what is wrong without quoting the answer", () => {
    expect(parseJsonAnswer("")).toEqual({ ok: false, problem: "the answer is empty" });
    const result = parseJsonAnswer("Der Patient Müller hat");
    expect(result).toEqual({ ok: false, problem: "the answer is not valid JSON (22 characters)" });
  });
});

describe("readStructuredAnswer", () => {
  it("parses and validates in one step", () => {
    expect(readStructuredAnswer('{"document_type": "other", "sections": {}}', LETTER)).toEqual({
      ok: false,
      problem:
        "the answer does not match the schema: " +
        '$.sections.s1: required property missing; $.sections["zweite Sektion"]: required property missing',
    });
    expect(readStructuredAnswer("[]", { type: "array" })).toEqual({ ok: true, value: [] });
  });
});
