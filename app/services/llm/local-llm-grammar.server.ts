import type { GbnfJsonSchema } from "node-llama-cpp";

import type { JsonSchema } from "./types";

// Structured answers of the embedded model: the JSON schema as a llama.cpp grammar (local-llm.server.ts).

/** The JsonSchema subset in node-llama-cpp's grammar dialect; `pattern` has no counterpart and is left out. */
export function grammarSchema(schema: JsonSchema): GbnfJsonSchema {
  const description = schema.description ? { description: schema.description } : {};
  if (schema.const !== undefined) return { const: schema.const, ...description };
  if (schema.enum !== undefined) return { enum: schema.enum, ...description };
  const type = schema.type ?? (schema.properties ? "object" : schema.items ? "array" : undefined);
  switch (type) {
    case "object":
      return {
        type: "object",
        properties: Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, grammarSchema(v)])),
        ...(schema.required ? { required: schema.required } : {}),
        // Unlisted properties are never generated (valid whether or not the schema allows them).
        additionalProperties: false,
        ...description,
      };
    case "array":
      return {
        type: "array",
        ...(schema.items ? { items: grammarSchema(schema.items) } : {}),
        ...(schema.minItems !== undefined ? { minItems: schema.minItems } : {}),
        ...(schema.maxItems !== undefined ? { maxItems: schema.maxItems } : {}),
        ...description,
      };
    case "string":
      return {
        type: "string",
        ...(schema.minLength !== undefined ? { minLength: schema.minLength } : {}),
        ...(schema.maxLength !== undefined ? { maxLength: schema.maxLength } : {}),
        ...description,
      };
    case undefined:
      return { type: ["string", "number", "boolean", "null"], ...description };
    default:
      return { type, ...description };
  }
}
