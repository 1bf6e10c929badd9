// Demo accounts of the built-in development identity provider. Plain data with no
// server imports, so the README, seeds and tests can read it without starting anything.

export type DemoAccount = {
  id: string;
  email: string;
  emailVerified: boolean;
  givenName: string;
  familyName: string;
  name: string;
  locale: "de" | "en";
  role: "clinician" | "admin" | "unverified";
  /** Whether the account has a second factor to show when a client asks for DEV_ACR.multiFactor. */
  secondFactor: boolean;
};

/**
 * The authentication context classes (`acr`) the development provider signs in with: the password alone, or with
 * the second factor a client asked for through `acr_values` (OIDC_ACR_VALUES, ADR 0019). Names of this provider's
 * own, as every provider has its own; URNs so they are not taken for another provider's.
 */
export const DEV_ACR = {
  password: "urn:skribent:dev-oidc:acr:password",
  multiFactor: "urn:skribent:dev-oidc:acr:mfa",
} as const;

/** The operator's own e-mail domain in development; accounts on it see the admin dashboard. */
export const OPERATOR_DEMO_DOMAIN = "skribent.example";

export const demoAccounts: DemoAccount[] = [
  {
    // Hausärztliche Praxis (general practice).
    id: "anna-berger",
    email: "anna.berger@praxis-berger.example",
    emailVerified: true,
    givenName: "Anna",
    familyName: "Berger",
    name: "Dr. med. Anna Berger",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    id: "jonas-keller",
    email: "jonas.keller@klinikum-nord.example",
    emailVerified: true,
    givenName: "Jonas",
    familyName: "Keller",
    name: "Dr. med. Jonas Keller",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    id: "emily-clarke",
    email: "emily.clarke@stmarys.example",
    emailVerified: true,
    givenName: "Emily",
    familyName: "Clarke",
    name: "Dr Emily Clarke",
    locale: "en",
    role: "clinician",
    secondFactor: true,
  },
  {
    // Two more clinicians, so that demonstrations (and the live-recording end-to-end tests) can fill a
    // workspace without touching the others'.
    id: "max-hoffmann",
    email: "max.hoffmann@mvz-sued.example",
    emailVerified: true,
    givenName: "Max",
    familyName: "Hoffmann",
    name: "Dr. med. Max Hoffmann",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    id: "sara-yilmaz",
    email: "sara.yilmaz@klinikum-nord.example",
    emailVerified: true,
    givenName: "Sara",
    familyName: "Yilmaz",
    name: "Dr. med. Sara Yilmaz",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    // The chat's end-to-end tests use this workspace alone.
    id: "lena-wagner",
    email: "lena.wagner@praxis-wagner.example",
    emailVerified: true,
    givenName: "Lena",
    familyName: "Wagner",
    name: "Dr. med. Lena Wagner",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    // The account-deletion end-to-end tests delete this workspace (and sign in to a fresh one); the JS budget
    // spec uploads a recording into it.
    id: "tim-schroeder",
    email: "tim.schroeder@praxis-schroeder.example",
    emailVerified: true,
    givenName: "Tim",
    familyName: "Schröder",
    name: "Dr. med. Tim Schröder",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    // The accessibility end-to-end tests use this workspace alone.
    id: "eva-richter",
    email: "eva.richter@praxis-richter.example",
    emailVerified: true,
    givenName: "Eva",
    familyName: "Richter",
    name: "Dr. med. Eva Richter",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    // The letter check's end-to-end tests use these two workspaces alone, one per Playwright project.
    id: "clara-schmidt",
    email: "clara.schmidt@praxis-schmidt.example",
    emailVerified: true,
    givenName: "Clara",
    familyName: "Schmidt",
    name: "Dr. med. Clara Schmidt",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    id: "felix-braun",
    email: "felix.braun@klinikum-nord.example",
    emailVerified: true,
    givenName: "Felix",
    familyName: "Braun",
    name: "Dr. med. Felix Braun",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    // The transcript review's end-to-end tests use these two workspaces alone, one per Playwright project.
    id: "hanna-vogt",
    email: "hanna.vogt@praxis-vogt.example",
    emailVerified: true,
    givenName: "Hanna",
    familyName: "Vogt",
    name: "Dr. med. Hanna Vogt",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    id: "tobias-lang",
    email: "tobias.lang@klinikum-nord.example",
    emailVerified: true,
    givenName: "Tobias",
    familyName: "Lang",
    name: "Dr. med. Tobias Lang",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    // Settings › "Mein Vokabular" end to end (tests/e2e/vocabulary.spec.ts): one workspace per Playwright project.
    id: "lena-krause",
    email: "lena.krause@praxis-krause.example",
    emailVerified: true,
    givenName: "Lena",
    familyName: "Krause",
    name: "Dr. med. Lena Krause",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    id: "moritz-schulz",
    email: "moritz.schulz@klinikum-nord.example",
    emailVerified: true,
    givenName: "Moritz",
    familyName: "Schulz",
    name: "Dr. med. Moritz Schulz",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    // Regenerating a letter from the corrected transcript end to end (tests/e2e/letter-regenerate.spec.ts): one
    // workspace per Playwright project.
    id: "greta-hahn",
    email: "greta.hahn@praxis-hahn.example",
    emailVerified: true,
    givenName: "Greta",
    familyName: "Hahn",
    name: "Dr. med. Greta Hahn",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    id: "jan-wolf",
    email: "jan.wolf@klinikum-nord.example",
    emailVerified: true,
    givenName: "Jan",
    familyName: "Wolf",
    name: "Dr. med. Jan Wolf",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    // A letter leaving Skribent end to end (tests/e2e/letter-export.spec.ts): one workspace per Playwright project.
    id: "nora-becker",
    email: "nora.becker@praxis-becker.example",
    emailVerified: true,
    givenName: "Nora",
    familyName: "Becker",
    name: "Dr. med. Nora Becker",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    id: "ole-sommer",
    email: "ole.sommer@hausarzt-sommer.example",
    emailVerified: true,
    givenName: "Ole",
    familyName: "Sommer",
    name: "Dr. med. Ole Sommer",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    // The letterhead settings end to end (tests/e2e/letterhead.spec.ts): one workspace per Playwright project.
    id: "ida-kraus",
    email: "ida.kraus@praxis-kraus.example",
    emailVerified: true,
    givenName: "Ida",
    familyName: "Kraus",
    name: "Dr. med. Ida Kraus",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    id: "erik-jansen",
    email: "erik.jansen@praxis-jansen.example",
    emailVerified: true,
    givenName: "Erik",
    familyName: "Jansen",
    name: "Dr. med. Erik Jansen",
    locale: "de",
    role: "clinician",
    secondFactor: true,
  },
  {
    id: "ops-admin",
    email: `admin@${OPERATOR_DEMO_DOMAIN}`,
    emailVerified: true,
    givenName: "Ops",
    familyName: "Admin",
    name: "Ops Admin",
    locale: "de",
    role: "admin",
    secondFactor: true,
  },
  {
    // Signs in with the password only, even when a second factor is asked for: with OIDC_ACR_VALUES set to
    // DEV_ACR.multiFactor this account is refused (ADR 0019).
    id: "paul-neumann",
    email: "paul.neumann@mvz-west.example",
    emailVerified: true,
    givenName: "Paul",
    familyName: "Neumann",
    name: "Dr. med. Paul Neumann",
    locale: "de",
    role: "clinician",
    secondFactor: false,
  },
  {
    // Choosing this account ends sign-in with the "verify your e-mail" error.
    id: "lena-vogel",
    email: "lena.vogel@praxis-vogel.example",
    emailVerified: false,
    givenName: "Lena",
    familyName: "Vogel",
    name: "Lena Vogel",
    locale: "de",
    role: "unverified",
    secondFactor: false,
  },
];

export function findDemoAccount(id: string): DemoAccount | undefined {
  return demoAccounts.find((account) => account.id === id);
}
