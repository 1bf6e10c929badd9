import { beforeEach, describe, expect, it } from "vitest";
import { isOperator } from "../web/auth.server";
import { buildConfig, parseEnv, setConfig } from "../config/config.server";
import { emailDomainOf, isOrgAccount, orgClaimOf } from "./organisation.server";

// Who is an admin (the operator's own domain) and who is an organisation account: exact domains of verified
// addresses, decided on the server. Each look-alike below is refused on purpose.

function configure(env: Record<string, string>) {
  setConfig(
    buildConfig(
      parseEnv({
        APP_ENV: "test",
        DATA_DIR: "/tmp/skribent-organisation-test",
        COOKIE_SECRET: "c".repeat(32),
        STORAGE_SIGNING_SECRET: "s".repeat(32),
        OIDC_ISSUER: "https://idp.example",
        OIDC_CLIENT_ID: "c",
        OIDC_CLIENT_SECRET: "s",
        OPERATOR_EMAIL_DOMAIN: "Skribent.example",
        ...env,
      }),
    ),
  );
}

beforeEach(() =>
  configure({ ORG_EMAIL_DOMAINS: " Klinikum-Nord.example ,mvz-sued.example,", OIDC_ORG_CLAIM: "org_account" }),
);

const verified = (email: string | null) => ({ email, emailVerified: true });

describe("the operator check (admin dashboard, SPEC §6)", () => {
  it("admits a verified address in exactly the operator's domain, in any letter case", () => {
    expect(isOperator(verified("admin@skribent.example"))).toBe(true);
    // Domain names are case-insensitive; the configured domain is too.
    expect(isOperator(verified("Admin@SKRIBENT.EXAMPLE"))).toBe(true);
  });

  it.each([
    ["a look-alike with the domain as a prefix", "admin@skribent.example.evil.com"],
    ["a look-alike with the domain as a suffix", "admin@evilskribent.example"],
    ["a subdomain", "user@sub.skribent.example"],
    ["a second @ that hides another domain", "admin@skribent.example@evil.com"],
    ["a quoted local part with an @", '"admin@skribent.example"@evil.com'],
    ["a trailing dot", "admin@skribent.example."],
    ["surrounding space", "admin@skribent.example "],
    ["a dotless ı (Turkish) instead of i", "admin@skrıbent.example"],
    ["a capital İ that lower-cases to i plus a dot", "admin@SKRİBENT.EXAMPLE"],
    ["a Cyrillic а instead of a", "admin@skribent.exаmple"],
    ["no local part", "@skribent.example"],
    ["no domain", "admin@"],
    ["the domain alone", "skribent.example"],
  ])("refuses %s (%s)", (_, email) => {
    expect(isOperator(verified(email))).toBe(false);
  });

  it("refuses an unverified address and no address at all", () => {
    expect(isOperator({ email: "admin@skribent.example", emailVerified: false })).toBe(false);
    expect(isOperator(verified(null))).toBe(false);
  });
});

describe("e-mail domains", () => {
  it("are the lower-cased plain DNS name after the only @", () => {
    expect(emailDomainOf("a.b@Praxis-Berger.Example")).toBe("praxis-berger.example");
    expect(emailDomainOf("a@xn--mnchen-3ya.example")).toBe("xn--mnchen-3ya.example");
    for (const bad of ["a@b@c.example", "a@-bad.example", "a@bad-.example", "a@localhost", "a@ex ample.org", ""])
      expect(emailDomainOf(bad), bad).toBeNull();
    expect(emailDomainOf(null)).toBeNull();
  });
});

describe("organisation accounts (SPEC §3 is_org)", () => {
  it("reads the configured claim as true, false or unknown", () => {
    expect(orgClaimOf({ org_account: true })).toBe(true);
    expect(orgClaimOf({ org_account: "true" })).toBe(true);
    expect(orgClaimOf({ org_account: false })).toBe(false);
    expect(orgClaimOf({ org_account: "false" })).toBe(false);
    expect(orgClaimOf({ org_account: "yes" })).toBeNull();
    expect(orgClaimOf({ other: true })).toBeNull();
    // No claim configured: nothing is read, and no domain list means no organisation by address.
    configure({});
    expect(orgClaimOf({ org_account: true })).toBeNull();
    expect(isOrgAccount({ email: "jonas.keller@klinikum-nord.example", emailVerified: true, orgClaim: null })).toBe(
      false,
    );
  });

  it("is the claim, or a verified address in a configured organisation domain (exactly)", () => {
    const account = (email: string, emailVerified = true, orgClaim: boolean | null = null) =>
      isOrgAccount({ email, emailVerified, orgClaim });
    expect(account("jonas.keller@klinikum-nord.example")).toBe(true);
    expect(account("max@MVZ-SUED.example")).toBe(true);
    expect(account("anna@praxis-berger.example")).toBe(false);
    expect(account("anna@praxis-berger.example", true, true)).toBe(true);
    // Not by an unverified address, nor by a subdomain or look-alike of an organisation's domain.
    expect(account("jonas.keller@klinikum-nord.example", false)).toBe(false);
    expect(account("x@station.klinikum-nord.example")).toBe(false);
    expect(account("x@klinikum-nord.example.evil.com")).toBe(false);
    // A claim of false does not overrule the domain list: either source makes an organisation account.
    expect(account("jonas.keller@klinikum-nord.example", true, false)).toBe(true);
  });
});
