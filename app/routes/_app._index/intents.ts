// The Audio page's intents, apart from its zod schema (schema.ts): the buttons of the one page that hydrates
// (the player island, ADR 0006) import them, and a module that builds schemas at load would put zod into the
// island's JavaScript, over issue 9's budget (tests/e2e/js-budget.spec.ts).

/** The intents of the list's buttons and the dialogs (STYLE.md §7). */
export const INTENT = {
  rename: "rename",
  addTag: "add-tag",
  removeTag: "remove-tag",
  uploaded: "uploaded",
  transcribe: "transcribe",
  delete: "delete",
  withdrawConsent: "withdraw-consent",
  reset: "reset",
} as const;

export type AudioIntent = (typeof INTENT)[keyof typeof INTENT];
