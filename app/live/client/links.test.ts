import { afterEach, describe, expect, it, vi } from "vitest";
import { defaultLinks } from "./links";

// ASVS 4.4.1: the live door's WebSocket uses TLS whenever the page does — the scheme follows the page's, so an https
// page never opens a plain ws: socket (which the shipped balancer refuses anyway: deploy/nginx/skribent.conf).

const handlers = { message: vi.fn(), closed: vi.fn() };

/** The URLs WebSockets were opened with, on a page at `href`. */
function openedOn(href: string) {
  const opened: string[] = [];
  vi.stubGlobal("location", new URL(href));
  vi.stubGlobal(
    "WebSocket",
    class {
      static OPEN = 1;
      static CONNECTING = 0;
      readyState = 0;
      constructor(url: string) {
        opened.push(url);
      }
      close() {}
    },
  );
  defaultLinks("websocket", "session/1", handlers);
  return opened;
}

afterEach(() => vi.unstubAllGlobals());

describe("the live door's WebSocket link", () => {
  it("opens wss: on an https page and ws: only on a plain http one, on the page's own host", () => {
    expect(openedOn("https://skribent.example.org/?record=1")).toEqual([
      "wss://skribent.example.org/live/ws?session=session%2F1",
    ]);
    expect(openedOn("http://localhost:3000/")).toEqual(["ws://localhost:3000/live/ws?session=session%2F1"]);
  });
});
