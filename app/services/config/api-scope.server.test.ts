import { describe, expect, it } from "vitest";
import { devConfigWith, problemsWith, providerConfigWith } from "../../../tests/support/config-helpers";

// OIDC_API_SCOPE (ADR 0021): a value no token could carry, or a list where one scope is meant, would refuse every
// bearer call once the hospital turned the check on. It stops the start instead, naming the variable and saying what
// is wrong with the value.

const problems = (value: string) => problemsWith("OIDC_API_SCOPE", value);

const EXPECTED =
  "expected the one scope your identity provider puts into access tokens for this API, as it appears in the " +
  "token (e.g. skribent.api)";

describe("OIDC_API_SCOPE", () => {
  it("is unset by default: any access token for the audience opens the API", () => {
    expect(devConfigWith({}).oidc.apiScope).toBeNull();
    // An empty value in a .env file means "not set", as for every variable.
    expect(devConfigWith({ OIDC_API_SCOPE: "" }).oidc.apiScope).toBeNull();
  });

  it("reads one scope as the provider writes it, spaces around it ignored", () => {
    const config = (value: string) => devConfigWith({ OIDC_API_SCOPE: value }).oidc.apiScope;
    expect(config("skribent.api")).toBe("skribent.api");
    expect(config(" skribent.api ")).toBe("skribent.api");
    // The whole scope-token alphabet of RFC 6749 §3.3: URLs, URNs, Entra's access_as_user, punctuation.
    expect(config("api://skribent/access_as_user")).toBe("api://skribent/access_as_user");
    expect(config("urn:example:skribent:api!#$%&'()*+,-./;<=>?@[]^_`{|}~")).toBe(
      "urn:example:skribent:api!#$%&'()*+,-./;<=>?@[]^_`{|}~",
    );
    // The same scope reaches a deployment with its own provider.
    const production = providerConfigWith({ OIDC_API_SCOPE: "skribent.api" });
    expect(production.oidc).toMatchObject({ dev: false, apiScope: "skribent.api" });
  });

  it("stops the start on a list of scopes, naming the variable", () => {
    expect(problems("skribent.api skribent.read")).toBe(
      `OIDC_API_SCOPE: the value ("skribent.api skribent.read") holds a space: name one scope, not a list; ${EXPECTED}`,
    );
    expect(problems("skribent.api\tskribent.read")).toMatch(/^OIDC_API_SCOPE: the value .* holds a space/);
  });

  it("stops the start on a character a scope cannot hold: a quote, a backslash, a control or non-ASCII", () => {
    const refused = (value: string) =>
      `OIDC_API_SCOPE: the value (${JSON.stringify(value)}) has a character a scope cannot hold (a quote, a ` +
      `backslash, a control or non-ASCII character); ${EXPECTED}`;
    for (const value of ['"skribent.api"', "skribent\\api", "skribent.äpi", "skribent\u0000api", "skribent\u007fapi"]) {
      expect(problems(value)).toBe(refused(value));
    }
  });

  it("stops the start on a value of spaces alone rather than checking nothing", () => {
    expect(problems("   ")).toBe(`OIDC_API_SCOPE: the value is empty; ${EXPECTED}`);
  });
});
