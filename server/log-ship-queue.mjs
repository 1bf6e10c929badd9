// What the log shipper (server/log-ship.mjs, ADR 0023) sends: each entry as an RFC 5424 message in an RFC 5425 frame,
// and the queue of frames waiting for the collector, in the order they are to be sent, bounded in entries and in
// bytes. When it is over either bound the oldest frames go and are counted, so that the collector can be told how
// many it lost; the app never waits for room.

/** Severity (RFC 5424 §6.2.1) of each level; facility local0 (16). */
const SEVERITY = { error: 3, warn: 4, info: 6, debug: 7 };
const LOCAL0 = 16;

/**
 * One entry as an RFC 5425 frame: `MSGLEN SP <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG`, MSG the entry's
 * line as UTF-8 (without a BOM).
 * @param {{ level: string, line: string, time: Date, hostname: string, pid: number }} entry
 */
export function syslogFrame({ level, line, time, hostname, pid }) {
  const pri = LOCAL0 * 8 + (SEVERITY[/** @type {keyof typeof SEVERITY} */ (level)] ?? SEVERITY.info);
  const message = Buffer.from(`<${pri}>1 ${time.toISOString()} ${hostname} skribent ${pid} - - ${line}`, "utf8");
  return Buffer.concat([Buffer.from(`${message.length} `, "ascii"), message]);
}

/** HOSTNAME is 1–255 printable US-ASCII characters (RFC 5424 §6.2.4). */
export function syslogHostname(name) {
  return name.replace(/[^\x21-\x7e]/g, "-").slice(0, 255) || "-";
}

/**
 * @param {{ maxEntries: number, maxBytes: number }} limits
 */
export function createFrameQueue({ maxEntries, maxBytes }) {
  /** @type {Buffer[]} */
  const frames = [];
  let bytes = 0;
  let dropped = 0;
  let resent = 0;

  function trim() {
    while (frames.length > maxEntries || bytes > maxBytes) {
      bytes -= /** @type {Buffer} */ (frames.shift()).length;
      dropped += 1;
    }
  }

  return {
    get length() {
      return frames.length;
    },
    /** Frames dropped since `takeDropped` was last called. */
    get dropped() {
      return dropped;
    },
    /** How many frames were put back so far, to be sent again. */
    get resent() {
      return resent;
    },
    /** A new frame, sent after all the others; the oldest go when the queue is full. @param {Buffer} frame */
    push(frame) {
      frames.push(frame);
      bytes += frame.length;
      trim();
    },
    /** A frame sent before all the others, whatever the bounds (the dropped-entries notice). @param {Buffer} frame */
    unshift(frame) {
      frames.unshift(frame);
      bytes += frame.length;
    },
    /**
     * Frames taken but not delivered, back in front of the others and in their order, to be sent again. The bounds
     * hold as for `push`: when the queue is over one, the oldest (these first) go and are counted.
     * @param {Buffer[]} taken
     */
    putBack(taken) {
      frames.unshift(...taken);
      for (const frame of taken) bytes += frame.length;
      resent += taken.length;
      trim();
    },
    /** The next frame to send, or undefined. */
    shift() {
      const frame = frames.shift();
      if (frame) bytes -= frame.length;
      return frame;
    },
    /** How many were dropped since the last call; the count starts again at 0. */
    takeDropped() {
      const count = dropped;
      dropped = 0;
      return count;
    },
  };
}
