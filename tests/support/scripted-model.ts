import type {
  ChatRequest,
  ChatResult,
  JsonSchema,
  LanguageModel,
  LlmHealth,
  StructuredRequest,
  StructuredResult,
} from "~/services/llm/types";
import { findDataBlocks } from "~/services/letters/data-blocks";

// A LanguageModel for tests of the letter core: answers come from a `responder` function, every request is
// recorded, tokens are counted with a simple deterministic rule (⌈characters / 4⌉), and a request whose
// prompt plus maxTokens exceeds `contextTokens` is refused with a plain Error — which no letter code catches,
// so a planning mistake fails the test. The prompt is counted as a real server would see it: every message,
// a little framing per message, and the JSON schema. Answers are returned unvalidated, so that the letter
// code's own checks of a model's answer are what the tests exercise.

export type RecordedRequest = StructuredRequest & { promptTokens: number };
export type Responder = (request: RecordedRequest, index: number) => unknown;

export function countChars4(text: string): number {
  return Math.ceil(text.length / 4);
}

export class ScriptedModel implements LanguageModel {
  readonly name = "local" as const;
  readonly requests: RecordedRequest[] = [];
  /** Requests refused for not fitting the window (they also threw). */
  readonly oversized: RecordedRequest[] = [];

  constructor(
    private readonly responder: Responder,
    readonly contextTokens = 16_000,
    private readonly modelName = "scripted-model",
  ) {}

  countTokens(text: string): number {
    return countChars4(text);
  }

  promptTokensOf(request: Pick<StructuredRequest, "messages" | "schema">): number {
    const messages = request.messages.reduce((sum, m) => sum + countChars4(m.content) + 4, 0);
    return messages + countChars4(JSON.stringify(request.schema));
  }

  async generateStructured<T = unknown>(request: StructuredRequest): Promise<StructuredResult<T>> {
    request.signal?.throwIfAborted();
    const recorded: RecordedRequest = { ...request, promptTokens: this.promptTokensOf(request) };
    if (recorded.promptTokens + request.maxTokens > this.contextTokens) {
      this.oversized.push(recorded);
      throw new Error(
        `ScriptedModel: request exceeds the context window (${recorded.promptTokens} + ${request.maxTokens} > ${this.contextTokens})`,
      );
    }
    this.requests.push(recorded);
    const value = await this.responder(recorded, this.requests.length - 1);
    const completionTokens = countChars4(JSON.stringify(value) ?? "");
    if (completionTokens > request.maxTokens)
      throw new Error(`ScriptedModel: answer of ${completionTokens} tokens exceeds maxTokens ${request.maxTokens}`);
    return {
      value: value as T,
      usage: { promptTokens: recorded.promptTokens, completionTokens },
      model: this.modelName,
    };
  }

  async chat(_request: ChatRequest): Promise<ChatResult> {
    throw new Error("ScriptedModel: chat is not scripted");
  }

  async check(): Promise<LlmHealth> {
    return { status: "healthy" };
  }
}

// ---- A faithful extractive responder ----

/** A sentence matching `pattern` belongs to the section at `section` (0-based, template order). */
export type ExtractionRule = { pattern: RegExp; section: number };

function sentences(text: string): string[] {
  return text
    .split(/\n|(?<=[.!?])\s+/)
    .map((s) => s.replace(/^(Sprecher|Speaker) \d+:\s*/, "").trim())
    .filter(Boolean);
}

function sectionCountOf(schema: JsonSchema, path: string[]): number {
  let node: JsonSchema | undefined = schema;
  for (const key of path) node = node?.properties?.[key];
  return Object.keys(node?.properties ?? {}).length;
}

/** A long sentence (text without punctuation) is quoted around the match, as a model would summarise it. */
function quote(sentence: string, pattern: RegExp): string {
  if (sentence.length <= 200) return sentence;
  const at = sentence.search(pattern);
  return sentence.slice(Math.max(0, at - 80), at + 120).trim();
}

function extract(text: string, rules: ExtractionRule[], sectionCount: number, maxItems = Infinity): string[][] {
  const notes: string[][] = Array.from({ length: sectionCount }, () => []);
  for (const sentence of sentences(text))
    for (const rule of rules)
      if (rule.section < sectionCount && rule.pattern.test(sentence) && notes[rule.section]!.length < maxItems)
        notes[rule.section]!.push(quote(sentence, rule.pattern));
  return notes;
}

/** Parses a NOTES block ("s1 (Title):" then "- note" lines) into notes per section. */
export function parseNotesBlock(body: string, sectionCount: number): string[][] {
  const notes: string[][] = Array.from({ length: sectionCount }, () => []);
  let current = -1;
  for (const line of body.split("\n")) {
    const header = /^s(\d+) \(.*\):$/.exec(line);
    if (header) current = Number(header[1]) - 1;
    else if (line.startsWith("- ") && line !== "- (none)" && current >= 0) notes[current]!.push(line.slice(2));
  }
  return notes;
}

function keyed<T>(lists: T[]): Record<string, T> {
  return Object.fromEntries(lists.map((value, i) => [`s${i + 1}`, value]));
}

/**
 * Behaves like a model that copies only what the data says: sentences of the consultation that match a rule
 * become notes (or section text) of the rule's section; the final letter is written from the NOTES block;
 * condensing keeps notes up to the schema's bound. Data blocks are read with the production parser, so a
 * fact outside its block is never seen. Refinement answers apply `refine` to the LETTER text.
 */
export function extractiveResponder(
  rules: ExtractionRule[],
  options: { documentType?: string; refine?: (text: string, instruction: string) => string } = {},
): Responder {
  const documentType = options.documentType ?? "patient_conversation";
  return (request) => {
    const blocks = request.messages.filter((m) => m.role === "user").flatMap((m) => findDataBlocks(m.content));
    const instruction = request.messages[request.messages.length - 1]!.content;
    switch (request.schemaName) {
      case "arztbrief": {
        const count = sectionCountOf(request.schema, ["sections"]);
        const notesBlock = blocks.find((b) => b.kind === "NOTES");
        const found = notesBlock
          ? parseNotesBlock(notesBlock.body, count)
          : extract(
              blocks
                .filter((b) => b.kind !== "STYLE_EXAMPLE")
                .map((b) => b.body)
                .join("\n"),
              rules,
              count,
            );
        return { document_type: documentType, sections: keyed(found.map((list) => list.join(" "))) };
      }
      case "arztbrief_notes": {
        const count = sectionCountOf(request.schema, ["notes"]);
        const maxItems = request.schema.properties!.notes!.properties!.s1!.maxItems ?? Infinity;
        const block = blocks[0]!;
        return {
          document_type: block.kind === "TRANSCRIPT" ? documentType : "other",
          notes: keyed(extract(block.body, rules, count, maxItems)),
        };
      }
      case "arztbrief_notes_reduce": {
        const count = sectionCountOf(request.schema, ["notes"]);
        const maxItems = request.schema.properties!.notes!.properties!.s1!.maxItems ?? Infinity;
        const notes = parseNotesBlock(blocks.find((b) => b.kind === "NOTES")!.body, count);
        return { notes: keyed(notes.map((list) => list.slice(0, maxItems))) };
      }
      case "refined_arztbrief": {
        const letter = blocks.find((b) => b.kind === "LETTER" || b.kind === "LETTER_SECTION")!;
        return { refined_text: (options.refine ?? ((t) => t))(letter.body, instruction) };
      }
      case "refined_arztbrief_sections": {
        const letter = blocks.find((b) => b.kind === "LETTER")!;
        const texts = letter.body.split(/\n\n(?=\[s\d+\] )/).map((part) => part.split("\n").slice(1).join("\n"));
        return { refined_sections: keyed(texts.map((t) => (options.refine ?? ((x) => x))(t, instruction))) };
      }
      default:
        throw new Error(`extractiveResponder: unknown schema ${request.schemaName}`);
    }
  };
}
