import type { UIMatch } from "@remix-run/react";

// Route handles declare what a page needs in the browser (ADR 0006):
// `island: true` hydrates the whole page; otherwise `scripts` names plain,
// nonce'd progressive-enhancement scripts from app/pe/, served minified from public/pe/ (≤ 5 KiB gzip per page,
// measured by tests/e2e/js-budget.spec.ts). Pages must work without them.
export type RouteHandle = {
  i18n?: string[];
  island?: boolean;
  scripts?: string[];
  /** A modal route that shows the workspace's toast inside its dialog: the page shows none behind it. */
  ownsToast?: boolean;
};

export function ProgressiveScripts({ matches, nonce }: { matches: UIMatch[]; nonce: string }) {
  const scripts = new Set<string>();
  for (const match of matches) {
    for (const name of (match.handle as RouteHandle | undefined)?.scripts ?? []) scripts.add(name);
  }
  return (
    <>
      {[...scripts].map((name) => (
        <script key={name} src={`/pe/${name}.js`} nonce={nonce} defer />
      ))}
    </>
  );
}
