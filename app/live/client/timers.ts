/** Named one-shot timers: arming a name replaces its earlier timer; a timer forgets itself when it fires. */
export class Timers<Name extends string> {
  private handles: Partial<Record<Name, ReturnType<typeof setTimeout>>> = {};

  arm(name: Name, fn: () => void, ms: number) {
    this.clear(name);
    this.handles[name] = setTimeout(() => {
      delete this.handles[name];
      fn();
    }, ms);
  }

  has(name: Name) {
    return this.handles[name] !== undefined;
  }

  clear(name: Name) {
    clearTimeout(this.handles[name]);
    delete this.handles[name];
  }

  clearAll() {
    for (const name of Object.keys(this.handles) as Name[]) this.clear(name);
  }
}
