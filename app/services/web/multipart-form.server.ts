// Remix's multipart parser (@web3-storage/multipart-parser) splits a part's Content-Disposition at every ";" and
// "=", so a file named "Befund; Müller.wav" or "<img src=x>.pdf" — names a browser sends as they are — makes it throw
// a plain Error. That is the file's name, not a server fault: the form doors answer 400 with a message instead.

/** True for the parser's errors about a part's headers. */
export function isMalformedMultipart(error: unknown) {
  return error instanceof Error && /^malformed (content-disposition|multipart-form) header/.test(error.message);
}
