// The named inputs and outputs of the tests' chat model (fake-llm-chat.ts), in a module of their own so that the
// end-to-end specs import them without the app's modules.

/** Every answer starts with this, then quotes the question. */
export const CHAT_ANSWER_PREFIX = "Antwort auf: ";
/** Then, for each PDF whose text reached the model: this, its name, ": " and the first line of its text. */
export const CHAT_CONTEXT_PREFIX = " | PDF ";
/** A question containing this gets a server error (500; after the engine's retries, the apology). */
export const CHAT_FAILURE_MARKER = "FEHLER-TEST";
/** A question containing this is answered after CHAT_SLOW_MS ("thinking", and a second send meanwhile). */
export const CHAT_SLOW_MARKER = "LANGSAM-TEST";
export const CHAT_SLOW_MS = 4_000;
