import { findDataBlocks } from "../../app/services/letters/data-blocks";
import { chatModel } from "./fake-llm-chat";
import { reply, type FakeChatReply, type FakeChatRequest } from "./fake-openai-chat";

// The named behaviour of the tests' language model for the end-to-end tests and for trying the app by hand
// (scripts/fake-llm-server.mjs): a deterministic "model" that answers each of the app's schemas from the data
// blocks it is sent. The first section of a letter quotes the transcript's first line, the others say "no
// information found"; refinements append " (überarbeitet)" to the text they were given — after the words of an
// instruction's „ergänze „…““, which the model adds as if it had written them; notes requests return
// the transcript's lines as notes of the first section. A transcript containing KEIN-PATIENT is classified as
// "other" (the guard's named fixture). Plain chat (no schema) is the chat's behaviour (fake-llm-chat.ts).

export const NOT_CLINICAL_MARKER = "KEIN-PATIENT";
export const REFINED_SUFFIX = " (überarbeitet)";

type Schema = { type?: string; properties?: Record<string, Schema> };

function keys(schema: Schema | undefined, property: string) {
  return Object.keys(schema?.properties?.[property]?.properties ?? {});
}

/**
 * A section's answer in the shape the request's schema asks (issue 24): its text, or — when the engine is asked for
 * sources — the text as one statement citing `sources`.
 */
export function sectionAnswer(schema: Schema | undefined, key: string, text: string, sources: string[] = []) {
  const cited = schema?.properties?.sections?.properties?.[key]?.type === "array";
  return cited ? (text ? [{ text, sources }] : []) : text;
}

/** A transcript block's line without the id a cited prompt starts it with ("[t0p0] Sprecher 1: …"), and the id. */
export function citableLine(line: string): { text: string; sources: string[] } {
  const match = /^\[([^\]\s]+)\] (.*)$/s.exec(line);
  return match ? { text: match[2]!, sources: [match[1]!] } : { text: line, sources: [] };
}

/** What an instruction asks to add („ergänze „…““), with a leading space; "" when it asks for nothing. */
function added(messages: Array<{ role: string; content: string }>) {
  const words = messages
    .filter((m) => m.role === "user")
    .map((m) => /ergänze „([^“]+)“/i.exec(m.content)?.[1])
    .find(Boolean);
  return words ? ` ${words}` : "";
}

export function letterModel(request: FakeChatRequest): FakeChatReply {
  const name: string | undefined = request.body?.response_format?.json_schema?.name;
  const schema: Schema | undefined = request.body?.response_format?.json_schema?.schema;
  const messages = (request.body?.messages ?? []) as Array<{ role: string; content: string }>;
  const blocks = messages.filter((m) => m.role === "user").flatMap((m) => findDataBlocks(m.content));
  const transcript = blocks
    .filter((b) => b.kind === "TRANSCRIPT")
    .map((b) => b.body)
    .join("\n");
  const documentType = transcript.includes(NOT_CLINICAL_MARKER) ? "other" : "patient_conversation";
  switch (name) {
    case "arztbrief": {
      const notes = blocks.find((b) => b.kind === "NOTES")?.body;
      const first = citableLine((notes ?? transcript).split("\n").find((line) => line.trim()) ?? "");
      const sections = Object.fromEntries(
        keys(schema, "sections").map((key, i) => [
          key,
          sectionAnswer(schema, key, i === 0 ? first.text.replace(/^[-\s]+/, "") : "", first.sources),
        ]),
      );
      return reply.json({ document_type: documentType, sections });
    }
    case "arztbrief_notes": {
      const notes = Object.fromEntries(
        keys(schema, "notes").map((key, i) => [key, i === 0 ? [transcript.slice(0, 200)] : []]),
      );
      return reply.json({ document_type: documentType, notes });
    }
    case "arztbrief_notes_reduce": {
      return reply.json({ notes: Object.fromEntries(keys(schema, "notes").map((key) => [key, []])) });
    }
    case "refined_arztbrief": {
      const letter = blocks.find((b) => b.kind === "LETTER_SECTION" || b.kind === "LETTER")?.body ?? "";
      return reply.json({ refined_text: `${letter}${added(messages)}${REFINED_SUFFIX}` });
    }
    case "refined_arztbrief_sections": {
      const letter = blocks.find((b) => b.kind === "LETTER")?.body ?? "";
      const sectionKeys = keys(schema, "refined_sections");
      // renderSectionsForRefinement: "[s1] Title\ntext", sections separated by a blank line.
      const texts = letter.split(/\n\n(?=\[s\d+\] )/).map((part) => part.split("\n").slice(1).join("\n"));
      return reply.json({
        refined_sections: Object.fromEntries(
          sectionKeys.map((key, i) => [key, `${texts[i] ?? ""}${i === 0 ? added(messages) : ""}${REFINED_SUFFIX}`]),
        ),
      });
    }
    default:
      return chatModel(request);
  }
}
