// The engines a bench's app talks to: the tests' protocol-faithful Speechmatics batch fake and an
// OpenAI-compatible chat API that answers as the tests' letter model (tests/support/fake-llm-letters.ts), bundled
// from their TypeScript source.
import { loadFakeSpeechmatics, loadTestSupport } from "../scripts/fake-speech-bundle.mjs";

/**
 * Bundles the fakes into `supportDir` and starts them on free ports. `env` is what the app needs to use them
 * (transcription started by the bench, not by the upload); each fake has its own `close()`.
 */
export async function startEngineFakes(supportDir) {
  const [{ startFakeSpeechmatics }, { startFakeOpenAiChatServer }, { letterModel }] = await Promise.all([
    loadFakeSpeechmatics(supportDir),
    loadTestSupport("fake-openai-chat", supportDir),
    loadTestSupport("fake-llm-letters", supportDir),
  ]);
  const speech = await startFakeSpeechmatics({ port: 0, host: "127.0.0.1" });
  const llm = await startFakeOpenAiChatServer({ apiKey: "test-key", responder: letterModel });
  return {
    speech,
    llm,
    env: {
      SPEECH_ENGINE: "speechmatics",
      SPEECHMATICS_API_KEY: "test-key",
      SPEECHMATICS_BATCH_URL: speech.url,
      LLM_ENGINE: "openai",
      LLM_OPENAI_URL: llm.url,
      LLM_OPENAI_API_KEY: "test-key",
      AUTO_START_TRANSCRIPTION: "false",
    },
  };
}
