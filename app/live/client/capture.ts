import { PcmChunker } from "./capture-worklet.js";
import { LiveError, type LiveFailure } from "./messages";
import { holdWakeLock } from "./wake-lock";

// The microphone (issue 7 "Capture"): 16 kHz mono 16-bit PCM in 4096-sample buffers for the live endpoint,
// a compressed copy for the recording's audio file, the screen wake lock while it runs, and a level signal
// for dictation's auto-stop.

export const WORKLET_URL = "/live/capture-worklet.js";

/** SPEC §9 "Recorder MIME preference", in order, with the file extension each one gets. */
const RECORDER_TYPES: Array<[string, string]> = [
  ["audio/webm;codecs=opus", "webm"],
  ["audio/mp4", "m4a"],
  ["audio/mpeg", "mp3"],
  ["audio/wav", "wav"],
  ["audio/webm", "webm"],
];

export function chooseRecorderMime(isTypeSupported: (type: string) => boolean) {
  for (const [mimeType, extension] of RECORDER_TYPES) {
    try {
      if (isTypeSupported(mimeType)) return { mimeType, extension };
    } catch {
      /* a browser that throws for an unknown type simply does not support it */
    }
  }
  // None announced: the browser's default container, named like the spec's default.
  return { mimeType: "", extension: "webm" };
}

/** The extension for what the recorder actually produced (it may differ from what was asked for). */
export function extensionFor(mimeType: string) {
  const base = mimeType.split(";")[0].trim();
  return RECORDER_TYPES.find(([type]) => type.split(";")[0] === base)?.[1] ?? "webm";
}

/** Loudness of a buffer in dB relative to full scale (-Infinity for digital silence). */
export function rmsDb(pcm: Int16Array) {
  if (pcm.length === 0) return -Infinity;
  let sum = 0;
  for (let i = 0; i < pcm.length; i++) sum += (pcm[i] / 32768) ** 2;
  return 10 * Math.log10(sum / pcm.length);
}

/**
 * Speech or silence from buffer levels: speech once `needed` buffers in a row (about half a second) are
 * louder than the threshold, so a cough or a door does not count. Noise suppression and auto gain run
 * before this, which keeps room noise well below the threshold.
 */
export class SpeechGate {
  private run = 0;
  constructor(
    private readonly thresholdDb = -45,
    private readonly needed = 2,
  ) {}

  /** Returns true when this buffer completes (or continues) speech. */
  feed(db: number) {
    this.run = db > this.thresholdDb ? this.run + 1 : 0;
    return this.run >= this.needed;
  }
}

/** getUserMedia's errors as SPEC §8 messages. */
export function microphoneFailure(error: unknown): LiveFailure {
  const name = error instanceof Error || error instanceof DOMException ? error.name : "";
  if (["NotAllowedError", "PermissionDeniedError", "SecurityError"].includes(name)) return { key: "micDenied" };
  if (["NotFoundError", "DevicesNotFoundError"].includes(name)) return { key: "micNotFound" };
  if (["OverconstrainedError", "ConstraintNotSatisfiedError", "TypeError"].includes(name))
    return { key: "constraints" };
  if (name === "NotSupportedError") return { key: "unsupported" };
  const message = error instanceof Error || error instanceof DOMException ? error.message || error.name : "";
  return { key: "setupFailed", values: { message: message || String(error) } };
}

export type RecordedAudio = { blob: Blob; mimeType: string; extension: string };

export interface Capture {
  /** How the PCM is produced: the AudioWorklet, or the ScriptProcessorNode where worklets cannot load. */
  readonly mode: "worklet" | "script-processor";
  /** Hands over the last (shorter) buffer, releases the microphone, and returns the compressed copy. */
  stop(): Promise<RecordedAudio | null>;
  /** Releases everything at once; the copy is dropped. */
  abort(): void;
  /** The compressed copy failed or is missing: the server's own copy of the PCM must be used. */
  readonly copyFailed: boolean;
}

export type CaptureOptions = {
  /** Keep a compressed copy (the recording widget); dictation does not. */
  record: boolean;
  onBuffer(pcm: Int16Array): void;
  /** A warning that does not stop the capture (the compressed copy failed). */
  onWarning?(failure: LiveFailure): void;
};

function newContext(): AudioContext {
  try {
    return new AudioContext({ sampleRate: 16000 });
  } catch {
    return new AudioContext();
  }
}

/** Must be called from the click handler: the audio context is created before the first `await`. */
export async function startCapture(options: CaptureOptions): Promise<Capture> {
  let context = newContext();
  let stream: MediaStream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({
      audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true, channelCount: 1 },
    });
  } catch (error) {
    void context.close();
    throw new LiveError(microphoneFailure(error));
  }
  const tracks = stream.getTracks();
  try {
    let source: MediaStreamAudioSourceNode;
    try {
      source = context.createMediaStreamSource(stream);
    } catch {
      // Firefox will not connect a microphone to a context at another rate: use the device's rate and
      // let the worklet resample.
      void context.close();
      context = new AudioContext();
      source = context.createMediaStreamSource(stream);
    }
    if (context.state === "suspended") await context.resume();
    const pipe = await connectPcm(context, source, options.onBuffer);
    const recorder = options.record ? startRecorder(stream, options.onWarning) : null;
    const wake = holdWakeLock();
    const release = () => {
      wake.release();
      source.disconnect();
      pipe.disconnect();
      tracks.forEach((track) => track.stop());
      void context.close().catch(() => undefined);
    };
    return {
      mode: pipe.mode,
      get copyFailed() {
        return !recorder || recorder.failed;
      },
      async stop() {
        await pipe.flush();
        const recorded = recorder ? await recorder.stop() : null;
        release();
        return recorded;
      },
      abort() {
        recorder?.abort();
        release();
      },
    };
  } catch (error) {
    tracks.forEach((track) => track.stop());
    void context.close().catch(() => undefined);
    if (error instanceof LiveError) throw error;
    throw new LiveError({ key: "setupFailed", values: { message: error instanceof Error ? error.message : "" } });
  }
}

type PcmPipe = { mode: Capture["mode"]; flush(): Promise<void>; disconnect(): void };

async function connectPcm(
  context: AudioContext,
  source: MediaStreamAudioSourceNode,
  onBuffer: (pcm: Int16Array) => void,
): Promise<PcmPipe> {
  try {
    if (!context.audioWorklet) throw new Error("no AudioWorklet");
    await context.audioWorklet.addModule(WORKLET_URL);
    const node = new AudioWorkletNode(context, "skribent-capture", {
      numberOfInputs: 1,
      numberOfOutputs: 1,
      outputChannelCount: [1],
      // One channel, mixed down by the browser if the device still delivers two.
      channelCount: 1,
      channelCountMode: "explicit",
      channelInterpretation: "speakers",
    });
    let flushed: (() => void) | null = null;
    node.port.onmessage = (event: MessageEvent) => {
      if (event.data instanceof Int16Array) onBuffer(event.data);
      else if (event.data === "flushed") flushed?.();
    };
    source.connect(node);
    // Its output is silence; connected so that every browser keeps pulling the node.
    node.connect(context.destination);
    return {
      mode: "worklet",
      flush: () =>
        new Promise<void>((resolve) => {
          flushed = resolve;
          node.port.postMessage("flush");
          // A worklet that no longer answers must not hold up the stop.
          setTimeout(resolve, 1000);
        }),
      disconnect: () => {
        node.port.onmessage = null;
        node.disconnect();
      },
    };
  } catch {
    // Worklets missing or blocked: the same conversion on the main thread.
    const chunker = new PcmChunker(context.sampleRate, (pcm: Int16Array) => onBuffer(pcm));
    const node = context.createScriptProcessor(4096, 1, 1);
    node.onaudioprocess = (event) => {
      chunker.push(event.inputBuffer.getChannelData(0));
      event.outputBuffer.getChannelData(0).fill(0);
    };
    source.connect(node);
    node.connect(context.destination);
    return {
      mode: "script-processor",
      flush: async () => chunker.flush(),
      disconnect: () => {
        node.onaudioprocess = null;
        node.disconnect();
      },
    };
  }
}

function startRecorder(stream: MediaStream, onWarning: CaptureOptions["onWarning"]) {
  if (typeof MediaRecorder === "undefined") {
    onWarning?.({ key: "recorderUnsupported" });
    return null;
  }
  const chosen = chooseRecorderMime((type) => MediaRecorder.isTypeSupported(type));
  const chunks: Blob[] = [];
  let recorder: MediaRecorder;
  try {
    recorder = new MediaRecorder(stream, chosen.mimeType ? { mimeType: chosen.mimeType } : undefined);
    recorder.ondataavailable = (event) => {
      if (event.data.size > 0) chunks.push(event.data);
    };
    // Chunks every second: a recorder that fails late still leaves what it had.
    recorder.start(1000);
  } catch (error) {
    onWarning?.({ key: "recordingError", values: { kind: error instanceof Error ? error.name : String(error) } });
    return null;
  }
  const state = { failed: false };
  recorder.onerror = (event) => {
    state.failed = true;
    const kind = (event as Event & { error?: DOMException }).error?.name ?? event.type;
    onWarning?.({ key: "recordingError", values: { kind } });
  };
  return {
    get failed() {
      return state.failed;
    },
    stop: () =>
      new Promise<RecordedAudio | null>((resolve) => {
        let done = false;
        const finish = (ok: boolean) => {
          if (done) return;
          done = true;
          if (!ok) state.failed = true;
          const mimeType = (recorder.mimeType || chosen.mimeType || "audio/webm").split(";")[0];
          const blob = new Blob(chunks, { type: mimeType });
          resolve(state.failed ? null : { blob, mimeType, extension: extensionFor(mimeType) });
        };
        if (recorder.state === "inactive") return finish(true);
        recorder.onstop = () => finish(true);
        // The last chunk normally follows at once; a stuck recorder must not hold up the stop.
        setTimeout(() => finish(false), 3000);
        recorder.stop();
      }),
    abort: () => {
      if (recorder.state !== "inactive") recorder.stop();
    },
  };
}
