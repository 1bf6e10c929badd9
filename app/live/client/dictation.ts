import { DICTATION_SILENCE_STOP_MS, type LiveLanguage } from "../protocol";
import { createSession, discardSession } from "./api";
import { rmsDb, SpeechGate, startCapture } from "./capture";
import { defaultLinks } from "./links";
import { describe, messageFrom } from "./messages";
import { LiveSession, readEnvironment, type ConnectionState } from "./session";
import { textOf } from "./transcript";

// Entry of public/live/dictation.js (ADR 0013): the voice-input button of the letter editor's refinement
// panel (SPEC §2) and of the chat. Partial results show live under the field, finals are appended to the
// instruction (within its maxLength, 500 by default), the field is disabled while dictating, and dictation stops
// by itself after 60 s without speech (SPEC §9). app/pe/voice.js loads this on the button's first click.

function init(button: HTMLButtonElement) {
  const scope = button.closest("form") ?? document;
  const field = scope.querySelector<HTMLTextAreaElement>("[data-instruction]");
  const partial = scope.querySelector<HTMLElement>("[data-dictation-partial]");
  const errorBox = scope.querySelector<HTMLElement>("[data-dictation-error]");
  // A copy that arrives after letter.js gave up on it (and loaded another) must not wire the button twice.
  if (!field || button.hasAttribute("data-live-ready")) return;
  button.setAttribute("data-live-ready", "");
  const msg = (key: string) => messageFrom(button, key);
  const gate = new SpeechGate();
  let silence: ReturnType<typeof setTimeout> | undefined;

  function showPartial(text: string) {
    if (!partial) return;
    partial.textContent = text;
    partial.hidden = !text;
  }

  // Speech heard (loud enough for long enough, or words recognised): the 60 s start again.
  function heard() {
    clearTimeout(silence);
    if (session.state === "connected") silence = setTimeout(() => void stop(), DICTATION_SILENCE_STOP_MS);
  }

  function append(text: string) {
    if (!field) return;
    const max = field.maxLength > 0 ? field.maxLength : 500;
    const current = field.value;
    const room = max - current.length;
    if (room > 0) {
      const separator = current && !/\s$/.test(current) ? " " : "";
      field.value = current + (separator + text).slice(0, room);
      // letter.js counts the characters and enables Update on this event.
      field.dispatchEvent(new Event("input", { bubbles: true }));
    }
    // A full field takes no more words: stop rather than drop them unseen.
    if (field.value.length >= max) void stop();
  }

  // A dictation's audio is needed only for its words: the server's copy goes once it is over.
  function leave() {
    const id = session.info?.id;
    session.info = null;
    if (id) discardSession(id).catch(() => undefined);
  }

  const session = new LiveSession(
    "dictation",
    {
      state(state) {
        const active = state === "connecting" || state === "connected" || state === "disconnecting";
        button.setAttribute("data-state", state);
        button.setAttribute("aria-pressed", String(state === "connected"));
        button.textContent = msg(`label-${state}`);
        button.disabled = state === "disconnecting";
        field.disabled = active;
        if (state === "connected") heard();
        if (!active) {
          clearTimeout(silence);
          showPartial("");
        }
      },
      result(message) {
        if (message.message !== "AddPartialTranscript" && message.message !== "AddTranscript") return;
        const text = textOf(message);
        if (text) heard();
        if (message.message === "AddPartialTranscript") return showPartial(text);
        showPartial("");
        if (text) append(text);
      },
      failed(failure) {
        if (errorBox) {
          errorBox.textContent = describe(button, failure);
          errorBox.hidden = false;
        }
        setTimeout(leave);
      },
      buffer(pcm) {
        if (gate.feed(rmsDb(pcm))) heard();
      },
    },
    { startCapture, links: defaultLinks, environment: readEnvironment },
  );

  function start() {
    if (errorBox) errorBox.hidden = true;
    const language: LiveLanguage = button.getAttribute("data-language") === "en" ? "en" : "de";
    void session.start(language, () => createSession("dictation", language));
  }

  async function stop() {
    if (session.state !== "connected" && session.state !== "connecting") return;
    await session.stop();
    // The stop may also have ended in error (reported by `failed`).
    if ((session.state as ConnectionState) === "disconnected") {
      leave();
      field?.focus();
    }
  }

  button.addEventListener("click", () => {
    if (session.state === "connected" || session.state === "connecting") void stop();
    else start();
  });
  button.removeAttribute("aria-busy");
  // letter.js loaded this on a click: that click meant "start".
  if (button.hasAttribute("data-start-on-load")) {
    button.removeAttribute("data-start-on-load");
    start();
  }
}

document.querySelectorAll<HTMLButtonElement>("button[data-voice-input]").forEach(init);
