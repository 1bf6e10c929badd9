import { LlmError, type StructuredResult, type TokenUsage } from "./types";

// How both engines get a structured answer: up to `structuredAttempts` tries (a later one a little warmer),
// each answer read against the schema, the tokens of every try added up, and after the last an invalid_output
// error (SPEC §7's 'Structured output processing failed') that says why the last answer did not do.

const STRUCTURED_ATTEMPTS = 3;
/** The least temperature of a try after the first, so it does not repeat the same answer. */
export const RETRY_TEMPERATURE = 0.4;
const USER_INVALID_OUTPUT = "letters:errors.structuredOutputFailed";

/** How many tries a structured answer gets: the configured number, at least one; 3 by default. */
export function structuredAttempts(configured: number | undefined): number {
  return Math.max(1, configured ?? STRUCTURED_ATTEMPTS);
}

/** One try: its tokens, and the answer read against the schema or why it does not do. */
export type AttemptOutcome = { usage: TokenUsage } & ({ value: unknown } | { problem: string });

/** Tries `attempt` 1..`attempts` until one yields a value; `who` and `model` name the engine in the result and error. */
export async function untilValidAnswer<T>(
  who: { name: string; model: string; attempts: number },
  attempt: (n: number) => Promise<AttemptOutcome>,
): Promise<StructuredResult<T>> {
  const usage: TokenUsage = { promptTokens: 0, completionTokens: 0 };
  let problem = "";
  for (let n = 1; n <= who.attempts; n++) {
    const outcome = await attempt(n);
    usage.promptTokens += outcome.usage.promptTokens;
    usage.completionTokens += outcome.usage.completionTokens;
    if ("value" in outcome) return { value: outcome.value as T, usage, model: who.model };
    problem = outcome.problem;
  }
  throw new LlmError(
    "invalid_output",
    `${who.name}: no valid structured answer in ${who.attempts} attempts (${problem})`,
    {
      userMessageKey: USER_INVALID_OUTPUT,
    },
  );
}
