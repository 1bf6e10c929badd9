// The end-to-end storage guard's rule (tests/e2e/support.ts), kept here so a unit test proves it can fail.

/**
 * What the app may keep in the browser's storage (ARCHITECTURE.md, browser storage): two view preferences and,
 * per file being uploaded in parts, the upload's server-made key under a hash of the file's name; in sessionStorage
 * only Remix's scroll positions on a hydrated page (location keys to pixels). Nothing else: no token, no cookie
 * value, no patient text.
 */
export const ALLOWED_STORAGE: [RegExp, RegExp][] = [
  [/^skribent\.audioPanel$/, /^(open|closed)$/],
  [/^skribent\.transcriptHighlight$/, /^(on|off)$/],
  [/^skribent\.upload\.[0-9a-z]{1,7}$/, /^audio\/[0-9a-f-]{36}\/\d{8}-\d{6}-[0-9a-f-]{36}\.(wav|mp3)$/],
];

const ALLOWED_SESSION: [RegExp, RegExp][] = [[/^positions$/, /^\{("[\w-]+":-?\d+(\.\d+)?,?)*\}$/]];

export function storageProblems(stored: { local: [string, string][]; session: [string, string][] }) {
  const problems: string[] = [];
  for (const [key, value] of stored.session) {
    const rule = ALLOWED_SESSION.find(([name]) => name.test(key));
    if (!rule) problems.push(`sessionStorage holds "${key}"`);
    else if (!rule[1].test(value)) problems.push(`sessionStorage "${key}" holds an unexpected value`);
  }
  for (const [key, value] of stored.local) {
    const rule = ALLOWED_STORAGE.find(([name]) => name.test(key));
    if (!rule) problems.push(`localStorage holds an unknown key "${key}"`);
    else if (!rule[1].test(value)) problems.push(`localStorage "${key}" holds an unexpected value`);
  }
  return problems;
}
