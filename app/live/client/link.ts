import type { EndOfStream, NumberedMessage, StartRecognition } from "../protocol";
import type { LiveFailure } from "./messages";

// What a transport offers the live connection (transport.ts); links.ts has the WebSocket and HTTP ones.

export type TransportName = "websocket" | "http" | "direct";

/**
 * Direct mode (ADR 0013): the provider's realtime URL and the StartRecognition the server composed (its settings
 * and vocabulary). The browser opens that socket itself with a short-lived key; Skribent sees no audio.
 */
export type DirectTarget = { url: string; start: Record<string, unknown> };

/** `failure` marks a close no other transport would fix (refused sign-in, unknown session). */
export type LinkClosed = { code: number; reason?: string; failure?: LiveFailure };

export interface LinkHandlers {
  message(message: NumberedMessage): void;
  closed(info: LinkClosed): void;
}

/** One attempt over one transport. Handlers may be called only after the method that caused them returns. */
export interface Link {
  start(message: StartRecognition): void;
  /** Buffers arrive in order; `seq` lets the HTTP link number its POSTs (the WebSocket's order is enough). */
  audio(seq: number, pcm: Int16Array): void;
  end(message: EndOfStream): void;
  close(code: number): void;
}

export type LinkFactory = (
  name: TransportName,
  sessionId: string,
  handlers: LinkHandlers,
  direct?: DirectTarget,
) => Link;

/** A server message from a text frame or event; anything else (a stray frame, broken JSON) is null. */
export function parse(text: string): NumberedMessage | null {
  try {
    const value = JSON.parse(text);
    return value && typeof value.message === "string" ? value : null;
  } catch {
    return null;
  }
}
