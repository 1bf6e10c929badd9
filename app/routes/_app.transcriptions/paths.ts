// The transcript viewer's address: the transcript key without its leading "transcripts/" (as SPEC §7 does).
// Apart from the route module, so the letter editor can link to a transcript without importing its page.

export function viewerPath(transcriptKey: string) {
  return `/transcriptions/${transcriptKey.replace(/^transcripts\//, "")}`;
}
