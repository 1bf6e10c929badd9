import {
  LlmError,
  type ChatMessage,
  type LanguageModel,
  type StructuredRequest,
  type TokenUsage,
} from "~/services/llm/types";
import { splitToFit } from "./fit-text";
import type { LetterSection } from "./letter-content";
import { LetterGenerationError } from "./letter-errors";
import {
  MESSAGE_OVERHEAD_TOKENS,
  buildLetterMessages,
  contextBlock,
  letterFinalInstruction,
  letterSystemMessage,
  notesFinalInstruction,
  notesSystemMessage,
  reduceFinalInstruction,
  reduceSystemMessage,
  selectStyleExamples,
  styleExampleBlock,
  templateMessage,
  transcriptBlock,
  transcriptLines,
  type ContextItem,
  type LetterInputs,
} from "./letter-prompt";
import {
  LETTER_SCHEMA_NAME,
  assertClinical,
  buildLetterSchema,
  readLetterAnswer,
  type DocumentType,
} from "./letter-schema";
import {
  NOTES_SCHEMA_NAME,
  REDUCE_SCHEMA_NAME,
  buildNotesSchema,
  contextSourceLabel,
  countNotes,
  groupNotes,
  mergeNotes,
  notesBlock,
  readNotesAnswer,
  trimNotesToFit,
  type SectionNotes,
} from "./long-notes";
import {
  MAX_NOTES_PER_SECTION,
  letterAnswerTokens,
  notesAnswerTokens,
  notesPerSection,
  packTranscript,
  promptTokens,
  assertFits,
  renderUnits,
  styleBudgetTokens,
  transcriptUnits,
} from "./long-transcript";

// Letter generation (issue 6): from a transcript, the template and optional context to the sections of an
// Arztbrief, in one request when the consultation fits the model's context window and by map-reduce when it
// does not (strategy in long-transcript.ts). Pure apart from the model calls: no database, no storage — the
// letter job stores the result and records the usage that `onUsage` reports per request.

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

/** Below this many tokens for a transcript part or for the notes, the window is too small to be useful. */
const MIN_PART_TOKENS = 200;
const MAX_REDUCE_ROUNDS = 3;

class RequestRunner {
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

function tooSmall(what: string): LlmError {
  return new LlmError("permanent", `The language model's context window is too small for ${what}`, {
    userMessageKey: "letters:errors.contextTooSmall",
  });
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
  return mapReduce({ ...options, context, titles, mode, runner, count, schema, answerTokens });
}

function finish(
  runner: RequestRunner,
  result: Pick<GeneratedLetter, "sections" | "documentType" | "strategy">,
): GeneratedLetter {
  return { ...result, usage: { ...runner.usage }, requests: runner.requests, model: runner.modelName };
}

type MapReduceArgs = GenerateLetterOptions & {
  context: ContextItem[];
  titles: string[];
  mode: "create" | "redo";
  runner: RequestRunner;
  count: (text: string) => number;
  schema: ReturnType<typeof buildLetterSchema>;
  answerTokens: number;
};

async function mapReduce(args: MapReduceArgs): Promise<GeneratedLetter> {
  const { model, language, template, titles, runner, count, schema, answerTokens } = args;
  const window = model.contextTokens;
  const templateText = templateMessage(template);
  const sectionCount = titles.length;

  // The final request's fixed part, with the longer of the two clinical document types.
  const finalFixed = promptTokens(
    count,
    [
      {
        role: "system",
        content: letterSystemMessage(language, { from: "notes", documentType: "patient_conversation" }),
      },
      { role: "user", content: templateText },
      { role: "user", content: letterFinalInstruction(sectionCount) },
    ],
    schema,
  );
  const finalAvailable = window - finalFixed - answerTokens;
  if (finalAvailable < MIN_PART_TOKENS) throw tooSmall("this template");

  // Style examples and context documents kept verbatim in the final request, each within its share.
  const styleExamples = selectStyleExamples(
    args.styleExamples,
    count,
    Math.min(Math.floor(finalAvailable * 0.15), styleBudgetTokens(window)),
  );
  const styleMessages = styleExamples.map((example, i) => styleExampleBlock(example, i));
  let contextLeft = Math.floor(finalAvailable * 0.35);
  const verbatim: ContextItem[] = [];
  const mapped: ContextItem[] = [];
  for (const item of args.context) {
    const cost = count(contextBlock(item)) + MESSAGE_OVERHEAD_TOKENS;
    if (cost <= contextLeft) {
      verbatim.push(item);
      contextLeft -= cost;
    } else mapped.push(item);
  }
  const verbatimMessages = verbatim.map((item) => contextBlock(item));
  const notesBudget =
    finalAvailable -
    [...styleMessages, ...verbatimMessages].reduce((sum, text) => sum + count(text) + MESSAGE_OVERHEAD_TOKENS, 0) -
    MESSAGE_OVERHEAD_TOKENS;

  // Map: notes per part of the transcript, then per part of each context document that did not fit.
  const notesAnswer = notesAnswerTokens(sectionCount, window);
  const maxItems = notesPerSection(sectionCount, notesAnswer);
  const notesSchema = buildNotesSchema(sectionCount, maxItems, true);
  const notesSystem = notesSystemMessage(language, maxItems);
  const notesMessages = (block: string): ChatMessage[] => [
    { role: "system", content: notesSystem },
    { role: "user", content: templateText },
    { role: "user", content: block },
    { role: "user", content: notesFinalInstruction(sectionCount) },
  ];
  const notesFixed = promptTokens(count, notesMessages(transcriptBlock("", { index: 999, total: 999 })), notesSchema);
  const capacity = window - notesFixed - notesAnswer;
  if (capacity < MIN_PART_TOKENS) throw tooSmall("reading a long consultation in parts");

  const transcriptLanguage = args.transcript.language_code || language;
  const labelTokens = count(`${transcriptLanguage.startsWith("en") ? "Speaker" : "Sprecher"} 99: `) + 1;
  const units = transcriptUnits(args.transcript, capacity - labelTokens, count);
  const transcriptParts = packTranscript(units, capacity, labelTokens).map((part) =>
    renderUnits(part, transcriptLanguage),
  );
  const fits = (block: string) => promptTokens(count, notesMessages(block), notesSchema) + notesAnswer <= window;
  const transcriptBlocks = fitParts(
    transcriptParts,
    (text, index, total) => transcriptBlock(text, { index, total }),
    fits,
    count,
  );

  const documentTypes: DocumentType[] = [];
  const collected: SectionNotes[] = [];
  for (const block of transcriptBlocks) {
    const value = await runner.call("notes", {
      messages: notesMessages(block),
      schema: notesSchema,
      schemaName: NOTES_SCHEMA_NAME,
      maxTokens: notesAnswer,
      temperature: 0,
    });
    const answer = readNotesAnswer(value, sectionCount, maxItems, true);
    documentTypes.push(answer.documentType!);
    collected.push(answer.notes);
  }
  const documentType = classify(documentTypes, args.mode);

  for (const item of mapped) {
    const pieces = splitToFit(item.text, capacity, count);
    const blocks = fitParts(
      pieces,
      (text, index, total) => contextBlock({ ...item, text }, { index, total }),
      fits,
      count,
    );
    const source = `(${contextSourceLabel(item, language)}) `;
    for (const block of blocks) {
      const value = await runner.call("notes", {
        messages: notesMessages(block),
        schema: notesSchema,
        schemaName: NOTES_SCHEMA_NAME,
        maxTokens: notesAnswer,
        temperature: 0,
      });
      collected.push(
        readNotesAnswer(value, sectionCount, maxItems, true).notes.map((list) => list.map((n) => source + n)),
      );
    }
  }

  // Reduce until the notes fit the final request.
  let notes = mergeNotes(collected, sectionCount);
  const notesTokens = (n: SectionNotes) => count(notesBlock(n, titles));
  for (let round = 0; round < MAX_REDUCE_ROUNDS && notesTokens(notes) > notesBudget; round++) {
    const reduced = await reduceNotes(args, notes, notesAnswer);
    const shrunk = notesTokens(reduced) < notesTokens(notes);
    notes = reduced;
    if (!shrunk) break;
  }
  if (notesTokens(notes) > notesBudget) notes = trimNotesToFit(notes, titles, notesBudget, count);

  const finalMessages: ChatMessage[] = [
    { role: "system", content: letterSystemMessage(language, { from: "notes", documentType }) },
    { role: "user", content: templateText },
    ...verbatimMessages.map((content): ChatMessage => ({ role: "user", content })),
    ...styleMessages.map((content): ChatMessage => ({ role: "user", content })),
    { role: "user", content: notesBlock(notes, titles) },
    { role: "user", content: letterFinalInstruction(sectionCount) },
  ];
  const value = await runner.call("letter", {
    messages: finalMessages,
    schema,
    schemaName: LETTER_SCHEMA_NAME,
    maxTokens: answerTokens,
    temperature: 0.2,
  });
  const { sections } = readLetterAnswer(value, titles, language, { checkDocumentType: false });
  return finish(runner, { sections, documentType, strategy: "map_reduce" });
}

/**
 * Blocks for the parts, each re-checked against the request it will travel in (token counts are not
 * additive, and the "part i/n" label grows with n): a part that does not fit is halved until it does.
 */
function fitParts(
  texts: string[],
  block: (text: string, index: number, total: number) => string,
  fits: (block: string) => boolean,
  count: (text: string) => number,
): string[] {
  const parts = [...texts];
  for (let guard = 0; guard < 10_000; guard++) {
    const total = parts.length;
    const index = parts.findIndex((text, i) => !fits(block(text, i + 1, total)));
    if (index < 0) return parts.map((text, i) => block(text, i + 1, total));
    const text = parts[index]!;
    const halves = splitToFit(text, Math.max(1, Math.floor(count(text) / 2)), count);
    if (halves.length < 2) throw new Error("A transcript part cannot be made to fit the context window");
    parts.splice(index, 1, ...halves);
  }
  throw new Error("Splitting the consultation into parts did not converge");
}

/** Clinical if any transcript part is; the more frequent clinical type names it (ties: conversation). */
function classify(types: DocumentType[], mode: "create" | "redo"): DocumentType {
  const dictation = types.filter((t) => t === "doctor_dictation").length;
  const conversation = types.filter((t) => t === "patient_conversation").length;
  if (dictation + conversation === 0) assertClinical("other", mode);
  return dictation > conversation ? "doctor_dictation" : "patient_conversation";
}

async function reduceNotes(args: MapReduceArgs, notes: SectionNotes, notesAnswer: number): Promise<SectionNotes> {
  const { model, language, template, titles, runner, count } = args;
  const sectionCount = titles.length;
  const templateText = templateMessage(template);
  const empty = (): SectionNotes => titles.map(() => []);
  const messagesFor = (block: string, maxItems: number): ChatMessage[] => [
    { role: "system", content: reduceSystemMessage(language, maxItems) },
    { role: "user", content: templateText },
    { role: "user", content: block },
    { role: "user", content: reduceFinalInstruction(sectionCount) },
  ];
  const widestSchema = buildNotesSchema(sectionCount, MAX_NOTES_PER_SECTION, false);
  const labelled = notesBlock(empty(), titles, { index: 999, total: 999 });
  const fixed = promptTokens(count, messagesFor(labelled, MAX_NOTES_PER_SECTION), widestSchema) - count(labelled);
  // Room for the NOTES block itself, measured as groupNotes measures it (without the part label).
  const room = model.contextTokens - fixed - notesAnswer - (count(labelled) - count(notesBlock(empty(), titles)));
  if (room < MIN_PART_TOKENS) throw tooSmall("condensing the notes of a long consultation");
  const fits = (group: SectionNotes, i: number, total: number) =>
    promptTokens(
      count,
      messagesFor(notesBlock(group, titles, { index: i + 1, total }), MAX_NOTES_PER_SECTION),
      widestSchema,
    ) +
      notesAnswer <=
    model.contextTokens;
  const groups = groupNotes(notes, titles, room, count);
  // Token counts are not exactly additive: a group that does not fit after all is halved.
  for (let i = 0; i < groups.length; i++) {
    while (!fits(groups[i]!, i, groups.length) && countNotes(groups[i]!) > 1) {
      const group = groups[i]!;
      const flat = group.flatMap((list, section) => list.map((note) => ({ section, note })));
      const halves = [flat.slice(0, flat.length >> 1), flat.slice(flat.length >> 1)].map((half) => {
        const g = empty();
        for (const { section, note } of half) g[section]!.push(note);
        return g;
      });
      groups.splice(i, 1, ...halves);
    }
  }
  // Each group may keep as many notes per section as a notes answer holds: a tighter share of the final budget
  // would force one-fact sections to drop facts. When the condensed notes still do not fit, another round
  // (with fewer groups) condenses them further.
  const maxItems = notesPerSection(sectionCount, notesAnswer);
  const schema = buildNotesSchema(sectionCount, maxItems, false);
  const outputs: SectionNotes[] = [];
  for (const [i, group] of groups.entries()) {
    const value = await runner.call("reduce", {
      messages: messagesFor(notesBlock(group, titles, { index: i + 1, total: groups.length }), maxItems),
      schema,
      schemaName: REDUCE_SCHEMA_NAME,
      maxTokens: notesAnswer,
      temperature: 0,
    });
    outputs.push(readNotesAnswer(value, sectionCount, maxItems, false).notes);
  }
  const merged = mergeNotes(outputs, sectionCount);
  // A model that drops every note has not condensed anything; keep what there was (it is cut to fit later).
  return countNotes(merged) > 0 || countNotes(notes) === 0 ? merged : notes;
}
