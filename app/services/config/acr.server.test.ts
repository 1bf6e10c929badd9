import { describe, expect, it } from "vitest";
import { devConfigWith, problemsWith, providerConfigWith } from "../../../tests/support/config-helpers";

// OIDC_ACR_VALUES (ADR 0019): a value the provider could never send back, or a list with a hole in it, would refuse
// every sign-in of a hospital that just wanted its second factor checked. It stops the start instead, saying which
// entry is wrong and how the list is written.

const problems = (value: string) => problemsWith("OIDC_ACR_VALUES", value);

describe("OIDC_ACR_VALUES", () => {
  it("is unset by default: nothing is asked for or checked", () => {
    expect(devConfigWith({}).oidc.acrValues).toBeNull();
    // An empty value in a .env file means "not set", as for every variable.
    expect(devConfigWith({ OIDC_ACR_VALUES: "" }).oidc.acrValues).toBeNull();
  });

  it("reads the accepted values in order, spaces around them ignored, each once", () => {
    const config = (value: string) => devConfigWith({ OIDC_ACR_VALUES: value }).oidc.acrValues;
    expect(config("mfa")).toEqual(["mfa"]);
    expect(config(" urn:example:phr , http://schemas.openid.net/pape/policies/2007/06/multi-factor,2, phr")).toEqual([
      "urn:example:phr",
      "http://schemas.openid.net/pape/policies/2007/06/multi-factor",
      "2",
      "phr",
    ]);
    expect(config("mfa,2,mfa")).toEqual(["mfa", "2"]);
    // The same list reaches a deployment with its own provider.
    const production = providerConfigWith({ OIDC_ACR_VALUES: "gold" });
    expect(production.oidc).toMatchObject({ dev: false, acrValues: ["gold"] });
  });

  it("stops the start on a value the authorization request could not carry, naming the entry", () => {
    expect(problems("multi factor")).toBe(
      'OIDC_ACR_VALUES: the value ("multi factor") has a space or a character not allowed; expected the acr values ' +
        "your identity provider names, separated by commas (e.g. mfa or " +
        "http://schemas.openid.net/pape/policies/2007/06/multi-factor)",
    );
    expect(problems('mfa,"gold"')).toMatch(/^OIDC_ACR_VALUES: value 2 of 2 \("\\"gold\\""\) has a space/);
    expect(problems("mfa,silver\\gold")).toMatch(/^OIDC_ACR_VALUES: value 2 of 2 /);
    expect(problems("mfa,stufe-ä")).toMatch(/^OIDC_ACR_VALUES: value 2 of 2 /);
    expect(problems("mfa\tphr")).toMatch(/^OIDC_ACR_VALUES: the value /);
  });

  it("stops the start on an empty entry, a stray comma, rather than a shorter list", () => {
    expect(problems("mfa,")).toMatch(/^OIDC_ACR_VALUES: value 2 of 2 is empty; expected the acr values/);
    expect(problems(",mfa")).toMatch(/^OIDC_ACR_VALUES: value 1 of 2 is empty/);
    expect(problems(" , ")).toBe(
      [
        "OIDC_ACR_VALUES: value 1 of 2 is empty; expected the acr values your identity provider names, separated by " +
          "commas (e.g. mfa or http://schemas.openid.net/pape/policies/2007/06/multi-factor)",
        "OIDC_ACR_VALUES: value 2 of 2 is empty; expected the acr values your identity provider names, separated by " +
          "commas (e.g. mfa or http://schemas.openid.net/pape/policies/2007/06/multi-factor)",
      ].join("\n"),
    );
  });
});
