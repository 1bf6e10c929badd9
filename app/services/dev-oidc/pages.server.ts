import type { DemoAccount } from "./accounts";

// The development provider's own pages. Plain HTML forms without any script, so
// sign-in and sign-out work in a browser with JavaScript switched off.

export type PageLanguage = "de" | "en";

const dictionary = {
  de: {
    signInTitle: "Anmelden – Skribent Entwicklungs-Login",
    signInHeading: "Bei Skribent anmelden",
    signInIntro:
      "Dies ist der eingebaute Anmeldedienst für die Entwicklung. Wählen Sie ein Demo-Konto – ein Passwort ist nicht nötig.",
    signInFor: "Anmeldung für",
    accountsLabel: "Demo-Konten",
    role: {
      clinician: "Ärztin/Arzt",
      admin: "Betreiber-Administration",
      unverified: "E-Mail-Adresse nicht bestätigt",
    },
    noSecondFactor: "kein zweiter Faktor",
    logoutTitle: "Abmelden – Skribent Entwicklungs-Login",
    logoutHeading: "Vom Entwicklungs-Login abmelden?",
    logoutButton: "Abmelden",
    loggedOutTitle: "Abgemeldet – Skribent Entwicklungs-Login",
    loggedOutHeading: "Sie sind abgemeldet",
    loggedOutText: "Sie wurden beim Entwicklungs-Login abgemeldet. Sie können dieses Fenster schließen.",
    errorTitle: "Fehler – Skribent Entwicklungs-Login",
    errorHeading: "Das hat nicht geklappt",
    errorText: "Die Anmeldung konnte nicht fortgesetzt werden. Starten Sie sie in der Anwendung neu.",
  },
  en: {
    signInTitle: "Sign in – Skribent development login",
    signInHeading: "Sign in to Skribent",
    signInIntro: "This is the built-in sign-in service for development. Choose a demo account – no password is needed.",
    signInFor: "Signing in to",
    accountsLabel: "Demo accounts",
    role: {
      clinician: "Clinician",
      admin: "Operator admin",
      unverified: "E-mail address not verified",
    },
    noSecondFactor: "no second factor",
    logoutTitle: "Sign out – Skribent development login",
    logoutHeading: "Sign out of the development login?",
    logoutButton: "Sign out",
    loggedOutTitle: "Signed out – Skribent development login",
    loggedOutHeading: "You are signed out",
    loggedOutText: "You have been signed out of the development login. You can close this window.",
    errorTitle: "Error – Skribent development login",
    errorHeading: "That did not work",
    errorText: "Sign-in could not continue. Please start it again from the application.",
  },
} as const;

export function escapeHtml(value: unknown): string {
  return String(value ?? "")
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

function languageOfTag(tag: string): PageLanguage | undefined {
  const primary = tag.trim().toLowerCase().split(/[-_]/)[0];
  return primary === "en" || primary === "de" ? primary : undefined;
}

/** `ui_locales` is a space-separated preference list (OIDC Core §3.1.2.1); the first supported tag wins. */
export function languageFromUiLocales(uiLocales: unknown): PageLanguage | undefined {
  if (typeof uiLocales !== "string") return undefined;
  for (const tag of uiLocales.split(/\s+/)) {
    const language = languageOfTag(tag);
    if (language) return language;
  }
  return undefined;
}

export function languageFromAcceptLanguage(header: string | undefined): PageLanguage | undefined {
  if (!header) return undefined;
  const ranked = header
    .split(",")
    .map((part, index) => {
      const [tag = "", ...params] = part.split(";");
      const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
      const weight = q ? Number(q.slice(2)) : 1;
      return { language: languageOfTag(tag), weight: Number.isFinite(weight) ? weight : 0, index };
    })
    .filter((entry) => entry.language && entry.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  return ranked[0]?.language;
}

function layout(lang: PageLanguage, title: string, body: string): string {
  // Inline styles only: the closed development network has no font or CSS CDN.
  return `<!DOCTYPE html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f6f8;color:#1f2933;margin:0;padding:2rem 1rem}
main{max-width:32rem;margin:0 auto;background:#fff;border-radius:.5rem;padding:1.5rem;box-shadow:0 1px 3px rgba(0,0,0,.15)}
h1{font-size:1.4rem;margin:0 0 .75rem}
p{line-height:1.5}
ul{list-style:none;margin:0;padding:0}
li{margin:.5rem 0}
button{font:inherit;width:100%;text-align:left;padding:.75rem 1rem;border:1px solid #9aa5b1;border-radius:.375rem;background:#fff;cursor:pointer}
button:hover,button:focus{border-color:#1d4ed8;outline:2px solid #1d4ed8;outline-offset:1px}
.name{display:block;font-weight:600}
.email,.role{display:block;font-size:.9rem;color:#52606d}
.primary{text-align:center;background:#1d4ed8;color:#fff;border-color:#1d4ed8;font-weight:600}
.note{font-size:.9rem;color:#52606d}
</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

export function renderAccountListPage(args: {
  lang: PageLanguage;
  action: string;
  accounts: readonly DemoAccount[];
  clientName?: string;
}): string {
  const t = dictionary[args.lang];
  const items = args.accounts
    .map(
      (account) => `<li><button type="submit" name="accountId" value="${escapeHtml(account.id)}">
<span class="name">${escapeHtml(account.name)}</span>
<span class="email">${escapeHtml(account.email)}</span>
<span class="role">${escapeHtml(t.role[account.role])}${account.secondFactor ? "" : ` · ${escapeHtml(t.noSecondFactor)}`}</span>
</button></li>`,
    )
    .join("\n");
  const forClient = args.clientName
    ? `<p class="note">${escapeHtml(t.signInFor)}: ${escapeHtml(args.clientName)}</p>`
    : "";
  return layout(
    args.lang,
    t.signInTitle,
    `<h1>${escapeHtml(t.signInHeading)}</h1>
<p>${escapeHtml(t.signInIntro)}</p>
${forClient}
<form method="post" action="${escapeHtml(args.action)}">
<ul aria-label="${escapeHtml(t.accountsLabel)}">
${items}
</ul>
</form>`,
  );
}

/**
 * `form` is oidc-provider's own `<form id="op.logoutForm">` with the hidden xsrf input;
 * the button goes inside it so the page does not depend on the `form=` attribute.
 */
export function renderLogoutPage(args: { lang: PageLanguage; form: string }): string {
  const t = dictionary[args.lang];
  const button = `<button class="primary" type="submit" name="logout" value="yes" autofocus>${escapeHtml(t.logoutButton)}</button>`;
  const closing = args.form.lastIndexOf("</form>");
  const form =
    closing === -1
      ? `${args.form}\n${button.replace("<button ", '<button form="op.logoutForm" ')}`
      : `${args.form.slice(0, closing)}${button}${args.form.slice(closing)}`;
  return layout(args.lang, t.logoutTitle, `<h1>${escapeHtml(t.logoutHeading)}</h1>\n${form}`);
}

export function renderPostLogoutPage(args: { lang: PageLanguage }): string {
  const t = dictionary[args.lang];
  return layout(
    args.lang,
    t.loggedOutTitle,
    `<h1>${escapeHtml(t.loggedOutHeading)}</h1>\n<p>${escapeHtml(t.loggedOutText)}</p>`,
  );
}

export function renderErrorPage(args: { lang: PageLanguage; error: string; description?: string }): string {
  const t = dictionary[args.lang];
  const description = args.description ? `: ${escapeHtml(args.description)}` : "";
  return layout(
    args.lang,
    t.errorTitle,
    `<h1>${escapeHtml(t.errorHeading)}</h1>
<p>${escapeHtml(t.errorText)}</p>
<p class="note"><code>${escapeHtml(args.error)}</code>${description}</p>`,
  );
}
