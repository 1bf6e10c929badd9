import { describe, expect, it } from "vitest";
import { getStorage, setStorage } from "~/services/storage/storage.server";
import { expectConsoleError } from "../setup/console";
import { sessionFor } from "../support/admin-pages";
import { seedTranscribedRecording } from "../support/letter-fixtures";
import { serve } from "../support/remix-document";
import { APP_URL, request, setupTestApp } from "../setup/app";

// ASVS 5.0 16.3.4: an unexpected failure is logged (entry.server.tsx handleError), with what an operator needs —
// method, path, the error and its stack — and nothing a visitor can fill the log with: Remix's own answers to an
// unknown address or a method a route does not take are not failures (a scan sent hundreds, each a stack trace).
setupTestApp();

describe("the error log", () => {
  it("stays empty for unknown addresses and for a method a page does not take", async () => {
    const logged = expectConsoleError();
    for (const path of ["/no-such-page", "/wp-login.php", "/.env", "/arztbriefe-alt/1"])
      expect((await serve(request(path))).status, path).toBe(404);
    const post = request("/help", {
      method: "POST",
      headers: {
        Origin: APP_URL,
        "Sec-Fetch-Site": "same-origin",
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "x=1",
    });
    expect((await serve(post)).status).toBe(405);
    expect(logged).not.toHaveBeenCalled();
  });

  it("gets one entry for a page that failed: method, path, the error with its stack — not the query", async () => {
    const { user, cookie } = await sessionFor("fehlerprotokoll@praxis.example");
    const { transcriptKey } = await seedTranscribedRecording({
      ownerId: user.id,
      lines: [{ speaker: "S1", text: "Befund von Frau Beispiel" }],
      fileName: "beispiel.wav",
    });
    const real = getStorage();
    setStorage(
      new Proxy(real, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver);
          return typeof value === "function" ? () => Promise.reject(new Error("storage is down")) : value;
        },
      }),
    );
    const logged = expectConsoleError();
    try {
      const path = `/transcriptions/${transcriptKey.replace(/^transcripts\//, "")}`;
      const response = await serve(request(`${path}?suche=Frau%20Beispiel`, { cookie }));
      expect(response.status).toBe(500);
      expect(logged).toHaveBeenCalledTimes(1);
      const [prefix, error] = logged.mock.calls[0] as [string, string];
      expect(prefix).toBe(`[error] GET ${path}:`);
      expect(error).toMatch(/^Error: storage is down\n\s+at /);
      expect(`${prefix} ${error}`).not.toContain("Beispiel");
    } finally {
      setStorage(real);
    }
  });
});
