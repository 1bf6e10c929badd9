import { describe, expect, it } from "vitest";
import { getFixedTFor } from "../web/i18n.server";
import {
  EMPTY_FILE_MESSAGE,
  localiseAudioMessage,
  notAudioTypeMessage,
  tooLargeMessage,
  tooLongMessage,
  unsupportedTypeMessage,
} from "./messages.server";

describe("audio check messages in both languages", () => {
  const messages = [
    EMPTY_FILE_MESSAGE,
    tooLargeMessage(73_400_321),
    unsupportedTypeMessage("application/pdf"),
    notAudioTypeMessage("text/html"),
    tooLongMessage(3.03, 2),
  ];

  it("translate back to exactly the SPEC's English text", async () => {
    const en = await getFixedTFor("en", ["recordings"]);
    for (const message of messages) {
      const { key, values } = localiseAudioMessage(message);
      expect(key).not.toBe("recordings:errors.audioRejected");
      expect(en(key, values)).toBe(message);
    }
  });

  it("read as German on German screens, with the same values", async () => {
    const de = await getFixedTFor("de", ["recordings"]);
    const { key, values } = localiseAudioMessage(tooLargeMessage(73_400_321));
    expect(de(key, values)).toBe("Die Datei ist zu groß (70.1 MB). Die maximale Größe ist 70 MB.");
    const other = localiseAudioMessage("something else");
    expect(de(other.key, other.values)).toBe("something else");
  });
});
