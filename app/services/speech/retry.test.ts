import { describe, expect, it } from "vitest";
import { redactApiKey } from "./retry";

// What a vendor's error says reaches the clinician's message and the log: never with the API key in it.
describe("redactApiKey", () => {
  it("cuts every copy of the key out and shortens long messages", () => {
    const key = "sk-test-1234567890";
    expect(redactApiKey(`Incorrect API key provided: ${key}. Key ${key} is invalid`, key)).toBe(
      "Incorrect API key provided: ***. Key *** is invalid",
    );
    expect(redactApiKey("x".repeat(400), key)).toBe(`${"x".repeat(300)}…`);
  });

  it("leaves a message alone without a key, or with one too short to cut safely", () => {
    expect(redactApiKey("Service unavailable", undefined)).toBe("Service unavailable");
    expect(redactApiKey("a b c", "a")).toBe("a b c");
  });
});
