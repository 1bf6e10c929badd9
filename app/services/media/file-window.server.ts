import { open } from "node:fs/promises";

// Random reads of byte ranges of an uploaded file through one cached window, so the parsers can look at a
// header, a chunk or the next frame without holding the file (up to 70 MB) and without a system call per look.

const WINDOW_BYTES = 1 << 20;

export type FileWindow = {
  readonly size: number;
  /**
   * The bytes at [offset, offset + length), fewer at the end of the file. The answer is never changed
   * afterwards: a later read fills a new buffer rather than overwriting this one.
   */
  read(offset: number, length: number): Promise<Buffer>;
  close(): Promise<void>;
};

export async function openFileWindow(path: string): Promise<FileWindow> {
  const handle = await open(path, "r");
  let size: number;
  try {
    size = (await handle.stat()).size;
  } catch (error) {
    await handle.close();
    throw error;
  }
  let window = Buffer.alloc(0);
  let windowStart = 0;

  async function fill(offset: number, length: number) {
    const wanted = Math.max(0, Math.min(Math.max(length, WINDOW_BYTES), size - offset));
    const buffer = Buffer.allocUnsafe(wanted);
    let done = 0;
    while (done < wanted) {
      const { bytesRead } = await handle.read(buffer, done, wanted - done, offset + done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    window = buffer.subarray(0, done);
    windowStart = offset;
  }

  return {
    size,
    async read(offset, length) {
      if (offset < 0 || length < 0 || offset >= size) return Buffer.alloc(0);
      const end = Math.min(offset + length, size);
      if (offset < windowStart || end > windowStart + window.length) await fill(offset, end - offset);
      return window.subarray(offset - windowStart, end - windowStart);
    },
    close: () => handle.close(),
  };
}
