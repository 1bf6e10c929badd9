import { buildLetterMessages, selectStyleExamples, transcriptLines } from "./letter-prompt";
import { LETTER_SCHEMA_NAME, assertClinical, buildLetterSchema, readLetterAnswer } from "./letter-schema";
import { letterAnswerTokens, promptTokens, styleBudgetTokens } from "./long-transcript";
import { mapReduce } from "./map-reduce.server";
import { RequestRunner, type GenerateLetterOptions, type GeneratedLetter } from "./request-runner.server";

export type { GenerationPhase, UsageEvent } from "./request-runner.server";

// Letter generation (issue 6): from a transcript, the template and optional context to the sections of an
// Arztbrief, in one request when the consultation fits the model's context window and by map-reduce when it
// does not (map-reduce.server.ts; strategy in long-transcript.ts). Pure apart from the model calls: no
// database, no storage — the letter job stores the result and records the usage that `onUsage` reports per
// request.

export { LetterGenerationError } from "./letter-errors";

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
  // An engine that can name its sources is asked for them (issue 24) in the one-request letter, whose prompt shows
  // the transcript's line ids; a letter written from notes cites nothing: the notes carry no ids.
  const cited = model.citesSources === true;
  const singleSchema = cited ? buildLetterSchema(titles, language, true) : schema;
  const singleAnswerTokens = letterAnswerTokens(titles.length, model.contextTokens, cited);
  const styleExamples = selectStyleExamples(options.styleExamples, count, styleBudgetTokens(model.contextTokens));
  // One request if the whole consultation fits — if need be without the style examples, which are only style.
  const single = [styleExamples, []]
    .map((examples) => buildLetterMessages({ ...options, context, styleExamples: examples }, cited))
    .find((messages) => promptTokens(count, messages, singleSchema) + singleAnswerTokens <= model.contextTokens);

  if (single) {
    const value = await runner.call("letter", {
      messages: single,
      schema: singleSchema,
      schemaName: LETTER_SCHEMA_NAME,
      maxTokens: singleAnswerTokens,
      temperature: 0.2,
    });
    const { documentType, sections, citations } = readLetterAnswer(value, titles, language, { mode });
    return finish(runner, { sections, citations, documentType, strategy: "single" });
  }
  const reduced = await mapReduce({ ...options, context, titles, mode, runner, count, schema, answerTokens });
  return finish(runner, { ...reduced, citations: [] });
}

function finish(
  runner: RequestRunner,
  result: Pick<GeneratedLetter, "sections" | "citations" | "documentType" | "strategy">,
): GeneratedLetter {
  return { ...result, usage: { ...runner.usage }, requests: runner.requests, model: runner.modelName };
}
