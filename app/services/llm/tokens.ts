import type { ChatMessage } from "./types";

// A token estimate for when the real tokenizer is not at hand (remote servers; the local engine before its
// model is loaded). It must err on the high side: it decides whether a request fits the context window.
// Rule: ASCII letters and whitespace count a third of a token each; every other character — digits,
// punctuation, symbols, umlauts and other non-ASCII letters — counts a whole token. Tokenizers split digits
// singly (Qwen, Llama 3) or in threes, and break rare words with umlauts into pieces. Measured on German
// clinical text with OpenAI's cl100k_base and o200k_base tokenizers (estimated vs real): prose of 331
// characters 119 vs 92/69, vital signs 129 → 82 vs 74/71, long compounds 130 → 46 vs 44/35, JSON 143 → 78 vs 50/43.
// No estimate is a bound for every tokenizer: callers keep a margin, and servers still refuse what does not fit.
// Each chat message adds MESSAGE_OVERHEAD_TOKENS for the role and template framing (the letter planner in
// `letters/letter-prompt.ts` counts the same 8).

export const MESSAGE_OVERHEAD_TOKENS = 8;

export function estimateTokens(text: string): number {
  let light = 0;
  let heavy = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // Low surrogates are the second half of a character already counted.
    if (code >= 0xdc00 && code <= 0xdfff) continue;
    const isLetter = (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
    const isSpace = code === 32 || code === 9 || code === 10 || code === 13;
    if (isLetter || isSpace) light++;
    else heavy++;
  }
  return heavy + Math.ceil(light / 3);
}

/** The estimate for a whole prompt: each message's text plus its framing. */
export function estimateMessagesTokens(messages: ChatMessage[], count: (text: string) => number = estimateTokens) {
  return messages.reduce((sum, message) => sum + count(message.content) + MESSAGE_OVERHEAD_TOKENS, 0);
}
