import { describe, expect, it } from "vitest";
import { readNotices, CHANGE_CHANNEL } from "./db-notices.server";

// The embedded database's answers are read for notices on their way to the client (pgliteNotices): whatever the
// chunks, every notice on the channel is heard once and nothing else is taken for one.

function message(type: string, body: Buffer) {
  const head = Buffer.alloc(5);
  head.write(type, 0, "latin1");
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

function notification(channel: string, payload: string) {
  const pid = Buffer.alloc(4);
  pid.writeInt32BE(42);
  return message("A", Buffer.concat([pid, Buffer.from(`${channel}\0${payload}\0`)]));
}

const answer = Buffer.concat([
  message("1", Buffer.alloc(0)), // ParseComplete: an empty body
  message("D", Buffer.from("\0\x01\0\0\0\x05A\0\0\0\0")), // a data row that holds the letter A and zeros
  notification(CHANGE_CHANNEL, "hash-of-a-session"),
  notification("someone_else", "not ours"),
  notification(CHANGE_CHANNEL, "user:0b7c…-ü"),
  message("C", Buffer.from("DELETE 1\0")),
  message("Z", Buffer.from("I")),
]);

function heardIn(chunks: Buffer[]) {
  const heard: string[] = [];
  const read = readNotices((payload) => heard.push(payload));
  for (const chunk of chunks) read(chunk);
  return heard;
}

describe("readNotices", () => {
  it("hears the channel's notices in one chunk", () => {
    expect(heardIn([answer])).toEqual(["hash-of-a-session", "user:0b7c…-ü"]);
  });

  it("hears the same when the answer is cut at every possible place, or byte by byte", () => {
    for (let cut = 1; cut < answer.length; cut++)
      expect(heardIn([answer.subarray(0, cut), answer.subarray(cut)])).toEqual(["hash-of-a-session", "user:0b7c…-ü"]);
    expect(heardIn([...answer].map((byte) => Buffer.from([byte])))).toEqual(["hash-of-a-session", "user:0b7c…-ü"]);
  });

  it("hears nothing in an answer without notices", () => {
    expect(heardIn([message("C", Buffer.from("SELECT 1\0")), message("Z", Buffer.from("I"))])).toEqual([]);
  });
});
