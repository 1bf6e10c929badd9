import {
  LIVE_BUFFER_SAMPLES,
  LIVE_SAMPLE_RATE,
  LIVE_SETTINGS,
  type LiveLanguage,
  type TranscriptMessage,
  TRANSCRIBE_LATER,
} from "../protocol";
import { createSession, discardSession, getSession, resumeSession, saveSession, type SavePayload } from "./api";
import { startCapture, type RecordedAudio } from "./capture";
import { onSessionTimeline, saveDirect, wavCopy } from "./direct-save";
import { defaultLinks } from "./links";
import { describe, messageFrom, type LiveFailure } from "./messages";
import {
  consentMissing,
  consentOf,
  onConfirmedClick,
  saveRecording,
  watchContextCounter,
  watchTemplateLanguage,
} from "./recorder-form";
import { LiveSession, readEnvironment, widgetState } from "./session";
import { formatDuration, segmentsOf, type Segment } from "./transcript";
import { appendSegment as appendTo } from "./transcript-view";

// Entry of public/live/recorder.js (ADR 0013): drives the live recording widget that
// app/routes/_app._index/record-panel.tsx renders, through its data attributes. Loaded by app/pe/record.js.

const SECONDS_PER_BUFFER = LIVE_BUFFER_SAMPLES / LIVE_SAMPLE_RATE;

function init(root: HTMLElement) {
  const $ = <T extends Element = HTMLElement>(selector: string) => root.querySelector<T>(selector);
  const button = (name: string) => $<HTMLButtonElement>(`[data-live-action="${name}"]`)!;
  const msg = (key: string, values?: Record<string, string | number>) => messageFrom(root, key, values);
  const transcript = $("[data-live-transcript]")!;
  const language = $<HTMLSelectElement>("select[name=language]")!;
  const resumeId = root.getAttribute("data-resume-id");
  // Direct mode (ADR 0013): the browser talks to Speechmatics itself, so this page holds the session — its
  // finals and its audio — until it is saved.
  const direct = root.getAttribute("data-live-mode") === "direct";

  const page = {
    segments: transcript.querySelectorAll("[data-speaker]").length,
    saving: false,
    failure: null as LiveFailure | null,
    saveFailure: null as string | null,
    /** Buffers captured for this session (one stands for what a session found after a reload holds). */
    heard: resumeId ? 1 : 0,
    heardAtRunStart: 0,
    /** Set while the first run of a session this page created is the only one: its copy is then whole. */
    wholeCopy: false,
    recorded: null as RecordedAudio | null,
    /** The engine could not recognise yet (its model was downloading): saved without text, transcribed later. */
    later: root.hasAttribute("data-resume-later"),
    /** The session was found on the server after a reload: continue asks it where it stands. */
    fromReload: Boolean(resumeId),
    seconds: Number(root.getAttribute("data-resume-seconds") ?? 0),
    runStart: 0,
    runConnected: false,
    /** Direct mode: the finals on the session's time line, the captured audio, and when the session began. */
    finals: [] as TranscriptMessage[],
    pcm: [] as Int16Array[],
    startedAt: new Date(),
  };

  const session = new LiveSession(
    "recording",
    {
      state(state) {
        if (state === "connected") page.failure = null;
        render();
      },
      transport(name) {
        page.runConnected = true;
        root.setAttribute("data-transport", name);
        if (session.captureMode) root.setAttribute("data-capture", session.captureMode);
      },
      result(message) {
        if (message.message === "AddTranscript") {
          // Each provider session starts at 0: a continued run's times move by what the session held before.
          const final = direct ? onSessionTimeline(message, page.runStart) : message;
          if (direct) page.finals.push(final);
          segmentsOf(final).forEach(appendSegment);
        } else if (message.message === "Warning" && message.type === TRANSCRIBE_LATER) {
          page.later = true;
          render();
        } else if (message.message === "Warning") console.warn(`Live transcription: ${message.reason}`);
      },
      failed(failure) {
        page.failure = failure;
        page.wholeCopy = false;
        render();
      },
      buffer(pcm, total) {
        page.heard++;
        if (direct) page.pcm.push(pcm);
        // Relayed and connected, `total` counts the session's buffers on the server; otherwise only this run's.
        const seconds = (page.runConnected && !direct ? 0 : page.runStart) + total * SECONDS_PER_BUFFER;
        page.seconds = Math.max(page.seconds, seconds);
        showElapsed();
      },
      warning(failure) {
        console.warn(describe(root, failure));
      },
    },
    { startCapture, links: defaultLinks, environment: readEnvironment },
  );
  if (resumeId) session.info = { id: resumeId, maxDelay: LIVE_SETTINGS.recording.maxDelay, lastN: 0 };

  function showElapsed() {
    const elapsed = $("[data-live-elapsed]");
    if (elapsed) elapsed.textContent = formatDuration(page.seconds);
  }

  function appendSegment(segment: Segment) {
    appendTo(transcript, segment, msg);
    page.segments++;
    render();
  }

  function clearTranscript() {
    transcript.replaceChildren();
    page.segments = 0;
  }

  function show(element: Element | null, visible: boolean) {
    if (element) (element as HTMLElement).hidden = !visible;
  }

  function render() {
    const open = session.info !== null;
    const state = widgetState(session.state, {
      segments: open ? page.segments : 0,
      saving: page.saving,
      later: open && page.later,
    });
    root.setAttribute("data-state", state);
    $("[data-live-label]")!.textContent = msg(`label-${state}`);
    show(button("start"), state === "ready");
    show(button("stop"), state === "connecting" || state === "listening" || state === "stopping");
    button("stop").disabled = state === "stopping";
    show(
      $("[data-live-paused]"),
      state === "paused" || state === "saving" || (state === "error" && open && page.heard > 0),
    );
    for (const name of ["continue", "save", "discard"]) button(name).disabled = state === "saving";
    show($("[data-live-later]"), open && page.later);
    show($("[data-live-error]"), page.failure !== null);
    if (page.failure) $("[data-live-error-text]")!.textContent = describe(root, page.failure);
    show($("[data-live-save-error]"), page.saveFailure !== null);
    $("[data-live-save-error-text]")!.textContent = page.saveFailure ?? "";
    // A session has one language; the options are the save's and stay open until it is sent.
    type Field = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
    root.querySelectorAll<Field>("[data-live-options] :is(select, input, textarea)").forEach((field) => {
      // The language and the consent belong to the session: fixed once it is open.
      const fixed = field === language || field.name === "consentKind" || field.name === "consentGivenBy";
      if (fixed) field.disabled = open || state !== "ready";
      else field.disabled = state === "saving";
    });
    show($("[data-live-transcript-empty]"), page.segments === 0);
  }

  function begin(open: () => ReturnType<typeof createSession>) {
    page.failure = null;
    page.saveFailure = null;
    page.runStart = page.seconds;
    page.runConnected = false;
    page.heardAtRunStart = page.heard;
    session.reset();
    void session.start(language.value === "en" ? "en" : "de", open);
  }

  function start() {
    session.forget();
    clearTranscript();
    page.later = false;
    page.finals = [];
    page.pcm = [];
    page.startedAt = new Date();
    page.heard = 0;
    page.seconds = 0;
    page.wholeCopy = true;
    page.recorded = null;
    page.fromReload = false;
    const lang: LiveLanguage = language.value === "en" ? "en" : "de";
    // The operator requires the patient's consent before any audio (issue 22): asked here, checked by the server.
    if (consentMissing(root)) {
      page.failure = { key: "consentRequired" };
      root.querySelector<HTMLSelectElement>("select[name=consentKind]")?.focus();
      return render();
    }
    begin(() => createSession("recording", lang, consentOf(root)));
  }

  function resume() {
    const info = session.info;
    if (!info) return start();
    page.wholeCopy = false;
    page.recorded = null;
    begin(async () => {
      if (!page.fromReload) return info;
      // The server knows the session's language and its last message; the page only guessed the language.
      const found = await resumeSession("recording", info.id);
      if (found.language) language.value = found.language;
      page.fromReload = false;
      return found;
    });
  }

  async function stop() {
    const recorded = await session.stop();
    if (session.state !== "disconnected" || !session.info) return render();
    if (recorded && page.wholeCopy && !session.copyFailed) page.recorded = recorded;
    else page.wholeCopy = false;
    if (page.heard === page.heardAtRunStart) page.failure = { key: "noAudio" };
    if (direct) {
      // Nothing recognised: no paused session to offer (SPEC §4).
      if (page.finals.every((final) => !segmentsOf(final).length)) {
        session.forget();
        page.failure = page.failure ?? { key: "noContent" };
      }
    } else await refresh(session.info.id);
    render();
  }

  // The server's transcript is the one that counts (it is what gets saved): after a stop it replaces what
  // arrived live, which may lack finals that came while the results stream was switching, and it groups the
  // words by speaker turn.
  async function refresh(id: string) {
    try {
      const view = await getSession(id);
      clearTranscript();
      view.transcript.forEach((s) => appendSegment({ speaker: s.speaker, text: s.text }));
      page.later = page.later || view.transcribe_later === true;
      if (view.transcript.length === 0 && !page.later) {
        // Nothing recognised: no paused session to offer (SPEC §4). Left behind on the server only if the
        // engine may still be working on it (its EndOfTranscript did not come in time).
        session.forget();
        page.failure = page.failure ?? { key: "noContent" };
        if (session.complete) await discardSession(id).catch(() => undefined);
      }
    } catch {
      /* the server is out of reach for the moment: keep what arrived live */
    }
  }

  async function discard() {
    const id = session.info?.id;
    session.forget();
    clearTranscript();
    page.finals = [];
    page.pcm = [];
    page.failure = page.saveFailure = null;
    page.later = false;
    page.heard = 0;
    page.seconds = 0;
    showElapsed();
    render();
    if (id) await discardSession(id).catch((error) => console.warn("Live session not discarded", error));
  }

  async function save() {
    const info = session.info;
    if (!info) return;
    if (page.segments === 0 && !page.later) {
      page.saveFailure = msg("noContent");
      return render();
    }
    page.saving = true;
    page.saveFailure = null;
    render();
    const whole = page.wholeCopy && !session.copyFailed ? page.recorded : null;
    // Direct mode: the server has no audio of its own, so a session of several runs sends what the page heard.
    const copy = direct && !whole && page.pcm.length ? wavCopy(page.pcm, LIVE_SAMPLE_RATE) : whole;
    const save = direct
      ? (form: SavePayload) =>
          saveDirect(
            {
              finals: page.finals,
              language: language.value === "en" ? "en" : "de",
              startedAt: page.startedAt,
              endedAt: new Date(),
              seconds: page.seconds,
            },
            form,
          )
      : (form: SavePayload) => saveSession(info.id, form, page.seconds);
    const problem = await saveRecording(root, save, copy, msg);
    // Saved: the page is on its way to the audio list and stays "saving" until it leaves.
    if (problem === null) return;
    page.saving = false;
    page.saveFailure = problem;
    render();
  }

  button("start").addEventListener("click", start);
  button("stop").addEventListener("click", () => void stop());
  button("continue").addEventListener("click", resume);
  // What was recorded is gone after a discard: the first click asks, a second one within 5 s discards.
  onConfirmedClick(button("discard"), () => void discard());
  button("save").addEventListener("click", () => void save());
  button("dismiss").addEventListener("click", () => {
    page.saveFailure = null;
    render();
  });
  // record.js's reload fallback is for a client that never loaded; this one did.
  button("retry").onclick = null;
  button("retry").addEventListener("click", () => {
    if (session.info && page.heard > 0) resume();
    else start();
  });
  // Direct mode keeps the session only in this page: leaving it unsaved loses it, so the browser asks first.
  window.addEventListener("beforeunload", (event) => {
    if (!direct || page.saving || page.segments === 0 || session.info === null) return;
    event.preventDefault();
    event.returnValue = "";
  });
  watchContextCounter(root);
  watchTemplateLanguage(root, language, msg);
  button("start").disabled = false;
  showElapsed();
  render();
}

document.querySelectorAll<HTMLElement>("[data-live-recorder]").forEach(init);
