import { LlmError, type LanguageModel, type StructuredRequest, type TokenUsage } from "~/services/llm/types";
import type { LetterSection } from "./letter-content";
import { LetterGenerationError } from "./letter-errors";
import type { ContextItem, LetterInputs } from "./letter-prompt";
import type { buildLetterSchema, CitedItem, DocumentType } from "./letter-schema";
import { assertFits } from "./long-transcript";

// What one letter generation is asked and answers, and the runner that sends its requests one after another:
// every request checked against the context window, counted, its usage reported. Shared by the single request
// (generate.server.ts) and the map-reduce path (map-reduce.server.ts, reduce-notes.server.ts).

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
  /** The statements the model named sources for (engines that cite, one-request letters); the model's word only. */
  citations: CitedItem[];
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

export type MapReduceArgs = GenerateLetterOptions & {
  context: ContextItem[];
  titles: string[];
  mode: "create" | "redo";
  runner: RequestRunner;
  count: (text: string) => number;
  schema: ReturnType<typeof buildLetterSchema>;
  answerTokens: number;
};
