import { describe, expect, test } from "vitest";

import { sniffAudioType } from "./sniff.server";
import { bytes } from "../../../tests/support/media-probe-helpers";

describe("sniffAudioType", () => {
  test.each([
    ["WAV", bytes("RIFF", 0x24, 0, 0, 0, "WAVEfmt "), "wav"],
    ["ID3v2.3 tag", bytes("ID3", 3, 0, 0, 0, 0, 0x02, 0x01), "mp3"],
    ["ID3v2.4 tag", bytes("ID3", 4, 0, 0, 0, 0, 0, 0x23), "mp3"],
    ["MPEG-1 layer III frame", bytes(0xff, 0xfb, 0x90, 0x64), "mp3"],
    ["MPEG-2 layer III frame", bytes(0xff, 0xf3, 0x88, 0xc0), "mp3"],
    ["MPEG-2.5 layer III frame", bytes(0xff, 0xe3, 0x18, 0xc4), "mp3"],
    ["PDF", bytes("%PDF-1.7\n"), null],
    ["HTML doctype", bytes("<!DOCTYPE html><html>"), null],
    ["HTML tag", bytes("<html><body>"), null],
    ["zip", bytes("PK", 3, 4, 20, 0), null],
    ["text", bytes("hello world, this is not audio"), null],
    ["RIFF that is AVI", bytes("RIFF", 0, 0, 0, 0, "AVI LIST"), null],
    ["AAC/ADTS (layer 00)", bytes(0xff, 0xf1, 0x50, 0x80), null],
    ["MPEG layer II", bytes(0xff, 0xfd, 0x90, 0x64), null],
    ["reserved MPEG version", bytes(0xff, 0xeb, 0x90, 0x64), null],
    ["bad bitrate index", bytes(0xff, 0xfb, 0xf0, 0x64), null],
    ["reserved sample rate", bytes(0xff, 0xfb, 0x9c, 0x64), null],
    ["lone 0xFF", bytes(0xff, 0x00, 0x00, 0x00), null],
    ["header cut short", bytes(0xff, 0xfb, 0x90), null],
    ["ID3 with impossible version", bytes("ID3", 9, 0, 0, 0, 0, 0, 0), null],
    ["ID3 with a non-syncsafe size", bytes("ID3", 3, 0, 0, 0x80, 0, 0, 0), null],
    ["audio behind leading junk", bytes(0, 0, 0xff, 0xfb, 0x90, 0x64), null],
    ["nothing", bytes(), null],
  ])("%s", (_name, head, expected) => {
    expect(sniffAudioType(head)).toBe(expected);
  });
});
