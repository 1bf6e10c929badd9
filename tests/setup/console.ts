import { afterEach, beforeEach, vi, type MockInstance } from "vitest";

// An unexpected console.error fails the test (STYLE.md §14). A test that expects
// one calls `expectConsoleError()` which hands back the spy and clears the trap.
let spy: MockInstance<typeof console.error> | undefined;
let expected = false;

beforeEach(() => {
  expected = false;
  spy = vi.spyOn(console, "error");
});

afterEach(() => {
  const calls = spy?.mock.calls ?? [];
  spy?.mockRestore();
  if (!expected && calls.length > 0) {
    throw new Error(`Unexpected console.error:\n${calls.map((c) => c.map(String).join(" ")).join("\n")}`);
  }
});

export function expectConsoleError() {
  expected = true;
  spy?.mockImplementation(() => {});
  return spy!;
}
