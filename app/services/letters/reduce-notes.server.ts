import type { ChatMessage } from "~/services/llm/types";
import { reduceFinalInstruction, reduceSystemMessage, templateMessage } from "./letter-prompt";
import {
  REDUCE_SCHEMA_NAME,
  buildNotesSchema,
  countNotes,
  groupNotes,
  mergeNotes,
  notesBlock,
  readNotesAnswer,
  type SectionNotes,
} from "./long-notes";
import { MAX_NOTES_PER_SECTION, MIN_PART_TOKENS, notesPerSection, promptTokens, tooSmall } from "./long-transcript";
import type { MapReduceArgs } from "./request-runner.server";

// Condensing the notes of a long consultation when they do not fit the final request (step 5 of the strategy
// in long-transcript.ts): groups of notes that fit one request each, condensed by the model.

export async function reduceNotes(
  args: MapReduceArgs,
  notes: SectionNotes,
  notesAnswer: number,
): Promise<SectionNotes> {
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
