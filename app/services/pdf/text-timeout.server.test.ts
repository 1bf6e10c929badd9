import { afterEach, describe, expect, it, vi } from "vitest";

import { multiPagePdf } from "../../../tests/support/pdf-fixtures";

import { extractPdfText, type PdfLoadingTaskLike, type PdfTextDeps } from "./text.server";
import { encoder, trapUnhandledRejections, wrappedRealPdfjs } from "../../../tests/support/pdf-text-helpers";

trapUnhandledRejections();

describe("extractPdfText", () => {
  describe("time limit", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    function hangingDeps(hangAt: "load" | "page") {
      let rejectLoad: ((reason: unknown) => void) | undefined;
      const destroy = vi.fn(async () => {
        // Like pdf.js: destroying rejects the pending load, after the race is decided.
        rejectLoad?.(new Error("Worker was destroyed"));
      });
      const task: PdfLoadingTaskLike = {
        promise:
          hangAt === "load"
            ? new Promise((_, reject) => (rejectLoad = reject))
            : Promise.resolve({
                numPages: 1,
                getPage: async () => ({
                  getTextContent: () => new Promise((_, reject) => (rejectLoad = reject)),
                  cleanup: () => true,
                }),
              }),
        destroy,
      };
      const deps: PdfTextDeps = { loadPdfjs: async () => ({ getDocument: () => task }) };
      return { deps, destroy };
    }

    it.each(["load", "page"] as const)("gives timeout and destroys the task when pdf.js hangs (%s)", async (hangAt) => {
      vi.useFakeTimers();
      const { deps, destroy } = hangingDeps(hangAt);
      // The fake pdf.js never looks at the bytes.
      const pending = extractPdfText(encoder.encode("%PDF-1.7\n"), { timeoutMs: 5_000 }, deps);
      await vi.advanceTimersByTimeAsync(4_999);
      expect(destroy).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      expect(await pending).toEqual({
        ok: false,
        failure: { code: "timeout", message: "Reading the PDF took longer than 5 seconds." },
      });
      expect(destroy).toHaveBeenCalledTimes(1);
    });

    it("stops a real pdf.js parse cleanly, and the next document still reads", async () => {
      const data = await multiPagePdf(3);
      let started!: () => void;
      const getDocumentCalled = new Promise<void>((resolve) => (started = resolve));
      const deps = wrappedRealPdfjs((task) => {
        started();
        return task;
      });
      // Only setTimeout is faked: pdf.js keeps working, the limit fires when the test says so.
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      const log = vi.spyOn(console, "log");
      try {
        const pending = extractPdfText(data, { timeoutMs: 60_000 }, deps);
        // The limit's timer is set in the same synchronous step as getDocument; reading three
        // pages needs several event-loop turns, so the parse is still running here.
        await getDocumentCalled;
        vi.advanceTimersByTime(60_000);
        expect(await pending).toMatchObject({ ok: false, failure: { code: "timeout" } });
        vi.useRealTimers();
        expect(await extractPdfText(data)).toMatchObject({ ok: true, pages: 3 });
        expect(log).not.toHaveBeenCalled();
      } finally {
        log.mockRestore();
      }
    });
  });
});
