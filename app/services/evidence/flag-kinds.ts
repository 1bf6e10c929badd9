import type { FlagKind } from "./strict-checks";

// The kinds of flag a doctor can confirm, as a list the doors validate against (the editor's form, the JSON API):
// the checker's FlagKind, spelt out once.
export const FLAG_KINDS = [
  "unsupported",
  "number",
  "dose",
  "date",
  "side",
  "negation",
  "citation",
] as const satisfies FlagKind[];
