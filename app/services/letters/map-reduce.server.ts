import type { ChatMessage } from "~/services/llm/types";
import { splitToFit } from "./fit-text";
import type { GeneratedLetter, MapReduceArgs } from "./request-runner.server";
import {
  MESSAGE_OVERHEAD_TOKENS,
  contextBlock,
  letterFinalInstruction,
  letterSystemMessage,
  notesFinalInstruction,
  notesSystemMessage,
  selectStyleExamples,
  styleExampleBlock,
  templateMessage,
  transcriptBlock,
  type ContextItem,
} from "./letter-prompt";
import { LETTER_SCHEMA_NAME, assertClinical, readLetterAnswer, type DocumentType } from "./letter-schema";
import {
  NOTES_SCHEMA_NAME,
  buildNotesSchema,
  contextSourceLabel,
  mergeNotes,
  notesBlock,
  readNotesAnswer,
  trimNotesToFit,
  type SectionNotes,
} from "./long-notes";
import {
  MIN_PART_TOKENS,
  notesAnswerTokens,
  notesPerSection,
  packTranscript,
  promptTokens,
  renderUnits,
  styleBudgetTokens,
  tooSmall,
  transcriptUnits,
} from "./long-transcript";
import { reduceNotes } from "./reduce-notes.server";

// A consultation too long for one request, by map-reduce (strategy in long-transcript.ts): notes per part of
// the transcript and of each context document too large to keep verbatim, the guard over the transcript
// parts, condensing the notes until they fit (reduce-notes.server.ts), then the letter from the notes.

const MAX_REDUCE_ROUNDS = 3;

/** The letter from notes; the caller adds the usage of all requests. */
export async function mapReduce(
  args: MapReduceArgs,
): Promise<Pick<GeneratedLetter, "sections" | "documentType" | "strategy">> {
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

  /** The notes the model takes from one block (of the transcript or of a context item). */
  const notesOf = async (block: string) => {
    const value = await runner.call("notes", {
      messages: notesMessages(block),
      schema: notesSchema,
      schemaName: NOTES_SCHEMA_NAME,
      maxTokens: notesAnswer,
      temperature: 0,
    });
    return readNotesAnswer(value, sectionCount, maxItems, true);
  };

  const documentTypes: DocumentType[] = [];
  const collected: SectionNotes[] = [];
  for (const block of transcriptBlocks) {
    const answer = await notesOf(block);
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
      collected.push((await notesOf(block)).notes.map((list) => list.map((n) => source + n)));
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
  return { sections, documentType, strategy: "map_reduce" };
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
