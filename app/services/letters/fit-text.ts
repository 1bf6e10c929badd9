// Text cut to a token budget without losing any of it (in parts that each fit), or, where only a glimpse is
// wanted, by keeping its start and its end. Used for long consultations (long-transcript.ts), refinement and chat.

/** How many tokens a text takes for the model at hand. */
export type CountTokens = (text: string) => number;

/** The longest prefixes of `text` that fit `maxTokens`, by binary search (text without any spaces). */
function splitCharacters(text: string, maxTokens: number, countTokens: CountTokens): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest) {
    let low = 1;
    let high = rest.length;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (countTokens(rest.slice(0, mid)) <= maxTokens) low = mid;
      else high = mid - 1;
    }
    // Never cut a surrogate pair in half.
    let end = low;
    if (end < rest.length && /[\uD800-\uDBFF]/.test(rest[end - 1]!) && end > 1) end--;
    pieces.push(rest.slice(0, end));
    rest = rest.slice(end);
  }
  return pieces;
}

function packPieces(pieces: string[], joiner: string, maxTokens: number, countTokens: CountTokens): string[] {
  const packed: string[] = [];
  let current: string[] = [];
  let used = 0;
  const joinCost = countTokens(joiner) || 1;
  const close = () => {
    if (current.length === 0) return;
    // Token counts are not exactly additive; verify the joined text and hand back what overflows.
    while (current.length > 1 && countTokens(current.join(joiner)) > maxTokens) {
      const last = current.pop()!;
      packed.push(current.join(joiner));
      current = [last];
    }
    packed.push(current.join(joiner));
    current = [];
    used = 0;
  };
  for (const piece of pieces) {
    const cost = countTokens(piece);
    if (current.length > 0 && used + joinCost + cost > maxTokens) close();
    used += (current.length > 0 ? joinCost : 0) + cost;
    current.push(piece);
  }
  close();
  return packed;
}

const SEPARATORS: Array<{ pattern: RegExp; joiner: string }> = [
  { pattern: /\n\s*\n/, joiner: "\n\n" },
  { pattern: /\n/, joiner: "\n" },
  { pattern: /(?<=[.!?…])\s+/, joiner: " " },
  { pattern: /\s+/, joiner: " " },
];

/** Pieces of at most `maxTokens`: cut at paragraphs, then lines, sentence ends, spaces, and characters. */
export function splitToFit(text: string, maxTokens: number, countTokens: CountTokens, level = 0): string[] {
  if (maxTokens < 1) throw new Error("splitToFit needs a positive budget");
  if (countTokens(text) <= maxTokens) return [text];
  for (let i = level; i < SEPARATORS.length; i++) {
    const { pattern, joiner } = SEPARATORS[i]!;
    const parts = text.split(pattern).filter((p) => p.trim() !== "");
    if (parts.length < 2) continue;
    const pieces = parts.flatMap((p) => splitToFit(p, maxTokens, countTokens, i + 1));
    return packPieces(pieces, joiner, maxTokens, countTokens);
  }
  return splitCharacters(text, maxTokens, countTokens);
}

/**
 * The start and the end of `text` within `budget` tokens (60% start, 40% end, cut at spaces), with `marker`
 * on a line of its own where the middle was left out. Empty when the budget cannot hold anything useful.
 */
export function headAndTail(text: string, budget: number, countTokens: CountTokens, marker: string): string {
  if (countTokens(text) <= budget) return text;
  const room = budget - countTokens(`\n${marker}\n`);
  if (room < 16) return "";
  // Largest n in [0, max] with fits(n), for a predicate that holds for small n.
  const largest = (max: number, fits: (n: number) => boolean) => {
    let low = 0;
    let high = max;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (fits(mid)) low = mid;
      else high = mid - 1;
    }
    return low;
  };
  let headEnd = largest(text.length, (n) => countTokens(text.slice(0, n)) <= Math.floor(room * 0.6));
  const space = text.lastIndexOf(" ", headEnd);
  if (space > headEnd * 0.8) headEnd = space;
  const head = text.slice(0, headEnd).trimEnd();
  const tailRoom = room - countTokens(head);
  const rest = text.slice(headEnd);
  let tailStart = rest.length - largest(rest.length, (n) => countTokens(rest.slice(rest.length - n)) <= tailRoom);
  const nextSpace = rest.indexOf(" ", tailStart);
  if (nextSpace >= 0 && nextSpace - tailStart < (rest.length - tailStart) * 0.2) tailStart = nextSpace;
  return `${head}\n${marker}\n${rest.slice(tailStart).trimStart()}`;
}
