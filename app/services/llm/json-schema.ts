import type { JsonSchema } from "./types";

// Checking a model's answer against the JSON Schema subset of `types.ts`. Both engines validate every
// structured answer here, whatever the server or grammar promised: Ollama and llama.cpp ignore `strict`,
// json_object/none modes only ask in words, and llama.cpp grammars do not enforce `pattern`.
// Error strings name the place ("$.sections.s1") and the problem, never the value: answers hold patient data
// and these messages end up in logs.

const MAX_ERRORS = 20;

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function matchesType(type: NonNullable<JsonSchema["type"]>, value: unknown): boolean {
  switch (type) {
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "array":
      return Array.isArray(value);
    case "string":
      return typeof value === "string";
    case "boolean":
      return typeof value === "boolean";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "null":
      return value === null;
  }
}

function child(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Lengths in code points, as JSON Schema counts them ("ü" and "😀" are one character each). */
function length(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

const patterns = new Map<string, RegExp | null>();

function compiled(pattern: string): RegExp | null {
  if (!patterns.has(pattern)) {
    let regex: RegExp | null;
    try {
      regex = new RegExp(pattern, "u");
    } catch {
      regex = null;
    }
    patterns.set(pattern, regex);
  }
  return patterns.get(pattern)!;
}

function check(schema: JsonSchema, value: unknown, path: string, errors: string[]) {
  if (errors.length >= MAX_ERRORS) return;
  if (schema.type !== undefined && !matchesType(schema.type, value)) {
    errors.push(`${path}: expected ${schema.type}, got ${typeOf(value)}`);
    return;
  }
  if (schema.const !== undefined && value !== schema.const) errors.push(`${path}: not the required constant`);
  if (schema.enum !== undefined && !schema.enum.some((allowed) => allowed === value))
    errors.push(`${path}: not one of the ${schema.enum.length} allowed values`);

  if (typeof value === "string") {
    const chars = schema.minLength !== undefined || schema.maxLength !== undefined ? length(value) : 0;
    if (schema.minLength !== undefined && chars < schema.minLength)
      errors.push(`${path}: ${chars} characters, at least ${schema.minLength} required`);
    if (schema.maxLength !== undefined && chars > schema.maxLength)
      errors.push(`${path}: ${chars} characters, at most ${schema.maxLength} allowed`);
    if (schema.pattern !== undefined) {
      const regex = compiled(schema.pattern);
      if (!regex) errors.push(`${path}: the schema's pattern is not a valid regular expression`);
      else if (!regex.test(value)) errors.push(`${path}: does not match the pattern ${schema.pattern}`);
    }
  }

  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      errors.push(`${path}: ${value.length} items, at least ${schema.minItems} required`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      errors.push(`${path}: ${value.length} items, at most ${schema.maxItems} allowed`);
    if (schema.items) value.forEach((item, index) => check(schema.items!, item, `${path}[${index}]`, errors));
  }

  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const object = value as Record<string, unknown>;
    const properties = schema.properties ?? {};
    for (const key of schema.required ?? []) {
      if (!Object.hasOwn(object, key)) errors.push(`${child(path, key)}: required property missing`);
    }
    for (const [key, item] of Object.entries(object)) {
      const property = Object.hasOwn(properties, key) ? properties[key] : undefined;
      if (property) check(property, item, child(path, key), errors);
      else if (schema.additionalProperties === false) errors.push(`${child(path, key)}: property not allowed`);
    }
  }
}

/** Every way `value` breaks `schema` (at most 20), as "path: problem"; empty when it conforms. */
export function validateJson(schema: JsonSchema, value: unknown): string[] {
  const errors: string[] = [];
  check(schema, value, "$", errors);
  return errors.slice(0, MAX_ERRORS);
}

export type JsonAnswer = { ok: true; value: unknown } | { ok: false; problem: string };

const FENCED = /^```[A-Za-z]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/;
const THINKING = /^<think>[\s\S]*?<\/think>/;

/**
 * A model's answer as JSON. Tolerated, because it loses nothing: surrounding whitespace, one closed
 * <think>…</think> block in front (reasoning models), and the whole answer wrapped in one ``` fence.
 * Never "repaired": prose around the JSON, a truncated answer or a missing bracket stay invalid, since
 * guessing what a cut-off medical text meant to say is not this module's job.
 */
export function parseJsonAnswer(text: string): JsonAnswer {
  let body = text.trim();
  body = body.replace(THINKING, "").trim();
  const fenced = FENCED.exec(body);
  if (fenced) body = fenced[1]!.trim();
  if (!body) return { ok: false, problem: "the answer is empty" };
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch {
    // JSON.parse's message quotes the text; it is not repeated here (see the top of this file).
    return { ok: false, problem: `the answer is not valid JSON (${length(body)} characters)` };
  }
}

/** parseJsonAnswer, then validateJson: the value, or one line saying what is wrong. */
export function readStructuredAnswer(text: string, schema: JsonSchema): JsonAnswer {
  const parsed = parseJsonAnswer(text);
  if (!parsed.ok) return parsed;
  const errors = validateJson(schema, parsed.value);
  if (errors.length > 0) return { ok: false, problem: `the answer does not match the schema: ${errors.join("; ")}` };
  return parsed;
}
