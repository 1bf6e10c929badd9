/** SPEC §9: the screen stays on while recording; the lock is lost when the tab hides and taken again. */
export function holdWakeLock() {
  type Sentinel = { release(): Promise<void> };
  const wakeLock = (navigator as Navigator & { wakeLock?: { request(type: "screen"): Promise<Sentinel> } }).wakeLock;
  let sentinel: Sentinel | null = null;
  let active = true;
  const acquire = () => {
    if (!wakeLock || document.visibilityState !== "visible") return;
    wakeLock.request("screen").then(
      (lock) => {
        if (active) sentinel = lock;
        else void lock.release();
      },
      () => undefined, // refused by policy or battery saver: recording goes on
    );
  };
  const onVisibility = () => {
    if (active && document.visibilityState === "visible") acquire();
  };
  document.addEventListener("visibilitychange", onVisibility);
  acquire();
  return {
    release() {
      active = false;
      document.removeEventListener("visibilitychange", onVisibility);
      void sentinel?.release().catch(() => undefined);
      sentinel = null;
    },
  };
}
