import { createHash } from "node:crypto";
import { splitSentences } from "~/services/evidence/sentences";
import type { CitedItem } from "./letter-schema";

// A model's citations as the letter keeps them (issue 24, migration 0022): per wording of a sentence — its
// normalised text, hashed — the segment ids the model named when it wrote it. A statement the model cited may hold
// several sentences as the checker splits them; each gets the statement's sources. The wording, not a position,
// carries the citation, so it follows the sentence through the doctor's edits of other sentences and lapses when the
// doctor rewrites it — as the evidence's own links do.

/** A sentence's wording as versions, citations and confirmations compare it: case, spacing and form folded. */
export function wordingKey(text: string) {
  return text.normalize("NFC").toLowerCase().replace(/\s+/g, " ").trim();
}

export function wordingHash(text: string) {
  return createHash("sha256").update(wordingKey(text)).digest("hex").slice(0, 32);
}

export function citedWordings(citations: CitedItem[]): Array<{ wordingHash: string; segmentIds: string[] }> {
  const byHash = new Map<string, string[]>();
  for (const item of citations) {
    // An id of another shape is kept as the model gave it (bounded): the checker shows it as a source that does not
    // exist, which is what it is.
    const ids = [...new Set(item.sources.map((id) => id.slice(0, 40)))];
    if (ids.length === 0) continue;
    for (const sentence of splitSentences(item.text)) byHash.set(wordingHash(sentence.text), ids);
  }
  return [...byHash].map(([wordingHash, segmentIds]) => ({ wordingHash, segmentIds }));
}
