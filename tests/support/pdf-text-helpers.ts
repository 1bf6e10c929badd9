/**
 * Shared helpers for the PDF text test files (pdf-text*.server.test.ts). Not a test file itself.
 */
import { afterEach, beforeAll, expect, vi } from "vitest";

import type { PdfTextDeps, PdfjsLike } from "~/services/pdf/text.server";

export const encoder = new TextEncoder();

/**
 * Unhandled rejections are what would take a worker process down; collect them per test. Call once
 * at the top level of a test file: every test of the file then fails if one was left behind.
 */
export function trapUnhandledRejections() {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeAll(() => {
    process.on("unhandledRejection", onUnhandled);
    return () => process.off("unhandledRejection", onUnhandled);
  });
  afterEach(async () => {
    // One macrotask turn lets Node report rejections left without a handler.
    await new Promise((resolve) => setImmediate(resolve));
    const seen = unhandled.splice(0);
    expect(seen).toEqual([]);
  });
}

/** The real loader, wrapped so a test can see whether pdf.js was reached at all. */
export async function realPdfjs(): Promise<PdfjsLike> {
  const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
  return pdfjs as unknown as PdfjsLike;
}
/** Deps whose pdf.js is the real one, each getDocument task handed to `wrap` to watch or change it. */
export function wrappedRealPdfjs(
  wrap: (task: ReturnType<PdfjsLike["getDocument"]>) => ReturnType<PdfjsLike["getDocument"]>,
): PdfTextDeps {
  return {
    loadPdfjs: async () => {
      const real = await realPdfjs();
      return {
        getDocument(params) {
          return wrap(real.getDocument(params));
        },
      };
    },
  };
}

export function countingDeps() {
  const loadPdfjs = vi.fn(realPdfjs);
  return { deps: { loadPdfjs } satisfies PdfTextDeps, loadPdfjs };
}
