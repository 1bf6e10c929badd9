// Answers the app made whole — a page rendered into one buffer (entry.server.tsx), a JSON answer (api.server.ts) — keep
// their bytes here, so that server/app.mjs sends them with one write instead of reading them back through the
// Response's web stream chunk by chunk (Remix's Express adapter does that for every answer; for a 14-byte JSON answer
// it was a sixth of the work). Any other answer (a file, an event stream, a redirect) is sent as before.

const bodies = new WeakMap<Response, Buffer>();

/** A Response with a body that is all there already, and its length. */
export function wholeAnswer(body: Buffer | string, init: ResponseInit & { headers: Headers }) {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  init.headers.set("Content-Length", String(bytes.length));
  const response = new Response(new Uint8Array(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.length), init);
  bodies.set(response, bytes);
  return response;
}

/** The bytes of an answer made by wholeAnswer; undefined for any other (server/app.mjs, by the build's entry). */
export function knownBody(response: Response) {
  return bodies.get(response);
}
