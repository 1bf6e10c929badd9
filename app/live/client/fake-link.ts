import type { EndOfStream, NumberedMessage, StartRecognition } from "../protocol";
import type { Link, LinkHandlers, TransportName } from "./link";

// A transport for the unit tests: records what the connection sends, and plays the server's part.

export class FakeLink implements Link {
  starts: StartRecognition[] = [];
  sent: Array<{ seq: number; value: number }> = [];
  ends: EndOfStream[] = [];
  closedWith: number | null = null;
  constructor(
    readonly name: TransportName,
    readonly handlers: LinkHandlers,
  ) {}
  start(message: StartRecognition) {
    this.starts.push(message);
  }
  audio(seq: number, pcm: Int16Array) {
    this.sent.push({ seq, value: pcm[0] });
  }
  end(message: EndOfStream) {
    this.ends.push(message);
  }
  close(code: number) {
    this.closedWith = code;
  }
  started(lastSeqNo: number) {
    this.handlers.message({ message: "RecognitionStarted", id: "run", last_seq_no: lastSeqNo });
  }
  ack(seq: number) {
    this.handlers.message({ message: "AudioAdded", seq_no: seq });
  }
  say(message: NumberedMessage) {
    this.handlers.message(message);
  }
  drop(code = 1006) {
    this.handlers.closed({ code });
  }
}
