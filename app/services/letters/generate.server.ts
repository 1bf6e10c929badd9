import { LlmError, type LanguageModel, type StructuredRequest, type TokenUsage } from "~/services/llm/types";
import type { LetterSection } from "./letter-content";
import { LetterGenerationError } from "./letter-errors";
import { buildLetterMessages, selectStyleExamples, transcriptLines, type LetterInputs } from "./letter-prompt";
import {
  LETTER_SCHEMA_NAME,
  assertClinical,
  buildLetterSchema,
  readLetterAnswer,
  type DocumentType,
} from "./letter-schema";
import { assertFits, letterAnswerTokens, promptTokens, styleBudgetTokens } from "./long-transcript";
import { mapReduce } from "./map-reduce.server";

// Letter generation (issue 6): from a transcript, the template and optional context to the sections of an
// Arztbrief, in one request when the consultation fits the model's context window and by map-reduce when it
// does not (map-reduce.server.ts; strategy in long-transcript.ts). Pure apart from the model calls: no
// database, no storage — the letter job stores the result and records the usage that `onUsage` reports per
// request.

export { LetterGenerationError } from "./letter-errors";

export type GenerationPhase = "letter" | "notes" | "reduce";
export type UsageEvent = { phase: GenerationPhase; usage: TokenUsage; model: string };

export type GenerateLetterOptions = LetterInputs & {
  model: LanguageModel;
  signal?: AbortSignal;
  /** "redo" (another template for an existing letter) reports the guard as SPEC's "template switch failed". */
  mode?: "create" | "redo";
  onUsage?: (event: UsageEvent) => void;
};

export type GeneratedLetter = {
  sections: LetterSection[];
  documentType: DocumentType;
  /** Summed over all requests. */
  usage: TokenUsage;
  requests: number;
  strategy: "single" | "map_reduce";
  model: string;
};

export class RequestRunner {
  requests = 0;
  usage: TokenUsage = { promptTokens: 0, completionTokens: 0 };
  modelName = "";

  constructor(
    private readonly model: LanguageModel,
    private readonly signal: AbortSignal | undefined,
    private readonly onUsage: ((event: UsageEvent) => void) | undefined,
  ) {}

  async call(phase: GenerationPhase, request: Omit<StructuredRequest, "signal">): Promise<unknown> {
    this.signal?.throwIfAborted();
    assertFits(this.model, request);
    this.requests++;
    try {
      const result = await this.model.generateStructured({ ...request, signal: this.signal });
      this.usage.promptTokens += result.usage.promptTokens;
      this.usage.completionTokens += result.usage.completionTokens;
      this.modelName = result.model;
      this.onUsage?.({ phase, usage: result.usage, model: result.model });
      return result.value;
    } catch (error) {
      if (error instanceof LlmError && error.kind === "invalid_output")
        throw new LetterGenerationError("structure_error", { detail: `${phase} answer`, cause: error });
      throw error;
    }
  }
}

export async function generateLetter(options: GenerateLetterOptions): Promise<GeneratedLetter> {
  const { model, language, template, signal } = options;
  const titles = template.elements.map((e) => e.name.trim());
  if (titles.length === 0) throw new Error("The template has no sections");
  const mode = options.mode ?? "create";
  const count = (text: string) => model.countTokens(text);
  const runner = new RequestRunner(model, signal, options.onUsage);
  const context = options.context.filter((item) => item.text.trim() !== "");
  signal?.throwIfAborted();

  // No words at all: there is no consultation to document, and no request can change that.
  if (transcriptLines(options.transcript).length === 0) assertClinical("other", mode);

  const schema = buildLetterSchema(titles, language);
  const answerTokens = letterAnswerTokens(titles.length, model.contextTokens);
  const styleExamples = selectStyleExamples(options.styleExamples, count, styleBudgetTokens(model.contextTokens));
  // One request if the whole consultation fits — if need be without the style examples, which are only style.
  const single = [styleExamples, []]
    .map((examples) => buildLetterMessages({ ...options, context, styleExamples: examples }))
    .find((messages) => promptTokens(count, messages, schema) + answerTokens <= model.contextTokens);

  if (single) {
    const value = await runner.call("letter", {
      messages: single,
      schema,
      schemaName: LETTER_SCHEMA_NAME,
      maxTokens: answerTokens,
      temperature: 0.2,
    });
    const { documentType, sections } = readLetterAnswer(value, titles, language, { mode });
    return finish(runner, { sections, documentType, strategy: "single" });
  }
  return finish(runner, await mapReduce({ ...options, context, titles, mode, runner, count, schema, answerTokens }));
}

function finish(
  runner: RequestRunner,
  result: Pick<GeneratedLetter, "sections" | "documentType" | "strategy">,
): GeneratedLetter {
  return { ...result, usage: { ...runner.usage }, requests: runner.requests, model: runner.modelName };
}
