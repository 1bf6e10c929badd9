import { describe, expect, it } from "vitest";
import { applySecurityHeaders, isCrossSiteWrite, safeRedirect } from "./security.server";

const app = "http://localhost:3000";

function post(headers: Record<string, string>) {
  return new Request(`${app}/x`, { method: "POST", headers });
}

describe("safeRedirect", () => {
  it.each([
    ["/audio", "/audio"],
    ["/settings?x=1#a", "/settings?x=1#a"],
    ["//evil.example/", "/"],
    ["/\\evil.example", "/"],
    ["https://evil.example/", "/"],
    ["javascript:alert(1)", "/"],
    ["/\tjavascript:alert(1)", "/"],
    ["", "/"],
    // A Location header must be ASCII: anything else is percent-encoded (it used to throw, a 500).
    ["/arztbriefe?suche=Müller\u20ac", "/arztbriefe?suche=M%C3%BCller%E2%82%AC"],
    ["/hilfe#Übersicht", "/hilfe#%C3%9Cbersicht"],
  ])("%s → %s", (input, expected) => {
    expect(safeRedirect(input)).toBe(expected);
  });
});

describe("isCrossSiteWrite", () => {
  it("does not refuse a headerless write for the cookie where the cookie is not the credential (presigned storage)", () => {
    const put = new Request("http://localhost:3000/resources/storage/x", {
      method: "PUT",
      headers: { Cookie: "skribent_sid=abc" },
    });
    expect(isCrossSiteWrite(put, app)).toBe(true);
    expect(isCrossSiteWrite(put, app, { cookieAuthenticated: false })).toBe(false);
  });

  it("rejects a cross-site POST by Fetch-Metadata", () => {
    expect(isCrossSiteWrite(post({ "Sec-Fetch-Site": "cross-site" }), app)).toBe(true);
    expect(isCrossSiteWrite(post({ "Sec-Fetch-Site": "same-site" }), app)).toBe(true);
  });
  it("accepts same-origin and user-initiated requests", () => {
    expect(isCrossSiteWrite(post({ "Sec-Fetch-Site": "same-origin" }), app)).toBe(false);
    expect(isCrossSiteWrite(post({ "Sec-Fetch-Site": "none" }), app)).toBe(false);
  });
  it("falls back to Origin when Fetch-Metadata is missing", () => {
    expect(isCrossSiteWrite(post({ Origin: "https://evil.example" }), app)).toBe(true);
    expect(isCrossSiteWrite(post({ Origin: "null" }), app)).toBe(true);
    expect(isCrossSiteWrite(post({ Origin: app }), app)).toBe(false);
  });
  it("falls back to the Referer when neither Origin nor Fetch-Metadata is sent (issue 22)", () => {
    const cookie = "skribent_sid=abc";
    expect(isCrossSiteWrite(post({ Referer: "https://evil.example/form.html", Cookie: cookie }), app)).toBe(true);
    expect(isCrossSiteWrite(post({ Referer: "http://localhost:3000.evil.example/", Cookie: cookie }), app)).toBe(true);
    expect(isCrossSiteWrite(post({ Referer: "not a url", Cookie: cookie }), app)).toBe(true);
    expect(isCrossSiteWrite(post({ Referer: `${app}/recordings?x=1`, Cookie: cookie }), app)).toBe(false);
    // Origin and Fetch-Metadata, when sent, still decide.
    expect(isCrossSiteWrite(post({ Origin: app, Referer: "https://evil.example/" }), app)).toBe(false);
    expect(isCrossSiteWrite(post({ "Sec-Fetch-Site": "cross-site", Referer: `${app}/` }), app)).toBe(true);
  });
  it("refuses a write with the session cookie and none of the three; without it (curl, bearer) it passes", () => {
    expect(isCrossSiteWrite(post({ Cookie: "skribent_sid=abc" }), app)).toBe(true);
    expect(isCrossSiteWrite(post({ Cookie: "skribent_lang=de; __Host-skribent_sid=abc" }), app)).toBe(true);
    expect(isCrossSiteWrite(post({ Cookie: "skribent_lang=de" }), app)).toBe(false);
    expect(isCrossSiteWrite(post({}), app)).toBe(false);
  });
  it("never blocks reads", () => {
    expect(isCrossSiteWrite(new Request(app, { headers: { "Sec-Fetch-Site": "cross-site" } }), app)).toBe(false);
  });
});

describe("applySecurityHeaders", () => {
  it("sets HSTS only for https outside localhost", () => {
    expect(
      applySecurityHeaders(new Headers(), { appUrl: "https://skribent.example" }).get("Strict-Transport-Security"),
    ).toMatch(/max-age/);
    expect(
      applySecurityHeaders(new Headers(), { appUrl: "https://localhost" }).get("Strict-Transport-Security"),
    ).toBeNull();
    expect(applySecurityHeaders(new Headers(), { appUrl: app }).get("Strict-Transport-Security")).toBeNull();
  });
  it("puts the nonce in the CSP and forbids framing", () => {
    const csp = applySecurityHeaders(new Headers(), { appUrl: app, nonce: "abc" }).get("Content-Security-Policy")!;
    expect(csp).toContain("'nonce-abc'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).toContain("connect-src 'self';");
  });
  it("lets scripts reach only the extra origins it is given (direct-mode live recognition)", () => {
    const csp = applySecurityHeaders(new Headers(), {
      appUrl: app,
      nonce: "abc",
      connectTargets: ["wss://eu.rt.speechmatics.com"],
    }).get("Content-Security-Policy")!;
    expect(csp).toContain("connect-src 'self' wss://eu.rt.speechmatics.com;");
  });
});
