// How much classified plaintext a store holds, measured cheaply (no deep walk: a string's
// length, a buffer's bytes, an object's JSON text and the elements it holds: see sizeOfJson)
// and capped. Two sums are kept, because what may be refused visibly must not depend on
// anything the agent cannot see:
//
// - `classifiedBytes`: what the agent's own classify() calls added (values it already has).
//   A classify() that would take it past the limit is refused visibly; the agent can work
//   out that refusal itself, so it tells it nothing.
// - `heldBytes`: everything actually held, computed values included (map results, classified
//   file reads and HTTP answers, whose sizes may depend on a secret). A value that does not
//   fit is not kept and fails out of sight, like a failing map.
//
// A classify() accepted by the first sum but not fitting the second is charged all the same
// (and not kept), so that the first sum, and with it every later visible refusal, never
// depends on computed values.

import type { Capture } from "../../library/protocol.js";
import { EffectFailure } from "../refusals.js";
import { HeapShare } from "../heap-share.js";

export type ClassifyCharge = "held" | "charged" | "refused";

/**
 * What one element of an array or property of an object costs the host parsed, beyond its
 * text: its slot, and the object, number or string it holds (an empty array is 32 bytes in V8,
 * a property of a large object about as much again), with some room for the garbage collector.
 */
const JSON_ITEM_BYTES = 64;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const COMMA = 0x2c;

export class PlaintextBudget {
  private classified = 0;
  private held = 0;
  /** The last value not kept did not fit the server's share for all sessions (not this store's own limit). */
  private sharedFull = false;
  /** Given back: a value computed after the end is not kept (it would take from the share for good). */
  private released = false;

  /**
   * `shared`: what all of a server's sessions may hold together (see heap-share.ts). It only
   * decides whether a value is kept, out of sight: a visible refusal (chargeClassify's
   * "refused") depends on this store's own classify() calls alone.
   */
  constructor(
    readonly limitBytes: number,
    private readonly shared: HeapShare = HeapShare.unbounded(),
  ) {}

  /** The store ended: what it held goes back to the share. */
  release(): void {
    this.shared.give(this.held);
    this.held = 0;
    this.released = true;
  }

  /** About what a value costs the host to hold: UTF-16 strings at 2 bytes a character. */
  static sizeOf(value: unknown): number {
    if (typeof value === "string") return value.length * 2;
    if (ArrayBuffer.isView(value)) return value.byteLength;
    if (value === null || typeof value !== "object") return 8;
    // Values come from JSON frames, so they stringify; what they cost parsed is measured on that text.
    return PlaintextBudget.sizeOfJson(JSON.stringify(value) ?? "");
  }

  /**
   * About what the value a JSON text holds costs the host once parsed: its characters at 2
   * bytes, and each element or property at JSON_ITEM_BYTES (counted by the `[`, `{` and `,`
   * outside strings that start one). Counted on the text alone, so a reply can be measured
   * before it is parsed. A text's length alone (what was counted before) misjudged a structure
   * by some fifty times: a security review's map function answered with "[[],[],…]", 45 MB of
   * text, and tacit took 2.4 GB resident parsing it, which the value's budget never saw.
   */
  static sizeOfJson(text: string): number {
    return text.length * 2 + PlaintextBudget.structureOfJson(text);
  }

  /**
   * What the elements and properties of a JSON text's value cost parsed, beyond its characters (see
   * sizeOfJson). Strings are skipped quote to quote with indexOf, which scans natively: read a
   * character at a time, a map's answer of one 90-million-character string held tacit's main
   * thread (every session of a tacit serve) for some 0.7 s (1.2 s on a loaded machine) before it
   * was even parsed; skipped, some 10 ms. What lies outside strings is still read a character
   * at a time (a text of "[],[],…" is what this measure is for).
   */
  static structureOfJson(text: string): number {
    let items = 0;
    const length = text.length;
    let i = 0;
    while (i < length) {
      const code = text.charCodeAt(i);
      if (code === QUOTE) {
        // The string ends at the first quote after it that an even run of backslashes precedes
        // (each backslash run is counted back once, by the quote that follows it); unended, the
        // rest of the text is in it.
        let end = i;
        for (;;) {
          end = text.indexOf('"', end + 1);
          if (end === -1) return items * JSON_ITEM_BYTES;
          let backslashes = 0;
          while (end - 1 - backslashes > i && text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
          if (backslashes % 2 === 0) break;
        }
        i = end + 1;
        continue;
      }
      if (code === OPEN_BRACKET || code === OPEN_BRACE || code === COMMA) items++;
      i++;
    }
    return items * JSON_ITEM_BYTES;
  }

  /** Bytes this store's own limit still leaves for values (none once released). */
  get roomBytes(): number {
    return this.released ? 0 : Math.max(0, this.limitBytes - this.held);
  }

  /**
   * Takes `bytes` of the share, for as long as a reply of the pure evaluator is being read (see
   * PureEvaluator): false, and nothing taken, if they do not fit. Given back with giveReading.
   */
  takeReading(bytes: number): boolean {
    return this.shared.take(bytes);
  }

  giveReading(bytes: number): void {
    this.shared.give(bytes);
  }

  get classifiedBytes(): number {
    return this.classified;
  }

  chargeClassify(value: unknown): ClassifyCharge {
    const size = PlaintextBudget.sizeOf(value);
    if (this.classified + size > this.limitBytes) return "refused";
    this.classified += size;
    return this.take(size) ? "held" : "charged";
  }

  /** Whether a computed value is kept (and counted). */
  admitComputed(value: unknown): boolean {
    return this.take(PlaintextBudget.sizeOf(value));
  }

  /**
   * Whether a failed value's reason is kept (and counted, as a value is, out of sight): the store
   * keeps it with the value for as long as it lives, up to 2,048 characters of a map function's
   * error and more for others (a path, twice). One that does not fit is kept as a fixed reason.
   */
  admitReason(reason: string): boolean {
    return this.take(reason.length * 2);
  }

  /** Why a value was not kept, for the secure sink. */
  fullReason(): string {
    if (this.sharedFull) {
      return (
        `not kept: the classified values of all this server's sessions and calls together already fill the ` +
        `${Math.round(this.shared.limitBytes / (1024 * 1024))} MiB the host holds for them (a quarter of tacit's heap limit); ` +
        "delete sessions no longer needed, or let the calls under way end"
      );
    }
    return (
      `not kept: the classified values of this evaluation or session already fill the ` +
      `${Math.round(this.limitBytes / (1024 * 1024))} MiB the host holds for them (config "classifiedStoreLimitBytes")`
    );
  }

  private take(size: number): boolean {
    if (this.released) return false;
    if (this.held + size > this.limitBytes) {
      this.sharedFull = false;
      return false;
    }
    if (!this.shared.take(size)) {
      this.sharedFull = true;
      return false;
    }
    this.held += size;
    return true;
  }
}

/**
 * What the map/flatMap requests of all this process's evaluations (a tacit serve's calls and
 * sessions' snippets) may hold together: an eighth of tacit's heap limit. MapRequestBudget's own
 * limit bounds one evaluation, but a server runs maxConcurrentEvaluations of them at once, and a
 * call answered (or a snippet ended) leaves its queued jobs to run for the rest of its time limit
 * (so do as many calls again): at the default 256 MiB and 8 calls, some 4 GiB could wait, the
 * whole of the default heap. A red team's calls to a tacit serve with a 200 MB heap, one after
 * another, each queueing 60 MiB of slow maps with large captures (within its own bound), ended
 * the server (out of memory) at its third, every session with it.
 */
const mapRequestsInAll = HeapShare.ofHeap(8);

/**
 * What each name a map/flatMap function captures costs the host while its job waits, whatever the
 * value (a captured Classified value's plaintext is not copied, but its name and entry are): the
 * property of the parsed captures, its object, and the store's list of them. Uncounted, a job
 * capturing 9,000 small numbers held about 1.8 MB of tacit's heap while it waited and was
 * charged 180 KB (its source and eight bytes a number): ten times what the bound said. Measured
 * at about 190 bytes a name; rounded up.
 */
export const CAPTURED_NAME_BYTES = 256;

/** How to capture less, for the refusals by either bound of map and flatMap requests. */
const HOW_TO_CAPTURE_LESS =
  "classify a large table once and capture the Classified value (it is not sent again), or map once over a whole list instead of once per item";

/**
 * What one evaluation's map/flatMap requests bring into the host: each job waits for the pure
 * evaluator (one job at a time) holding its function's source and plain captures, and the
 * sandbox can send them faster than the evaluator runs them (a function that takes seconds,
 * or simply large captures). A seventh security review mapped a function capturing 1 MiB of
 * text in a loop: tacit held about 1.2 GB after 20 s (and died at a 300 MB heap). Charged at
 * the request, by sizes the agent knows (what it sends), never released within the
 * evaluation: so whether a map is refused depends on nothing it cannot see. The share of all
 * evaluations (mapRequestsInAll) is given back once its jobs can no longer wait (`release`),
 * at a time that depends on nothing a function does either (see evaluate.ts).
 */
export class MapRequestBudget {
  private used = 0;
  private released = false;

  constructor(
    readonly limitBytes: number,
    private readonly shared: HeapShare = mapRequestsInAll,
  ) {}

  charge(what: "map" | "flatMap", source: string, captures: Record<string, Capture>): void {
    let size = PlaintextBudget.sizeOf(source);
    for (const capture of Object.values(captures)) {
      size += CAPTURED_NAME_BYTES;
      if ("plain" in capture) size += PlaintextBudget.sizeOf(capture.plain);
    }
    const mib = (bytes: number): string => (bytes / (1024 * 1024)).toFixed(1);
    if (this.used + size > this.limitBytes) {
      throw new EffectFailure(
        `${what}: refused: its function and captured values (about ${mib(size)} MiB) would take this evaluation's map and flatMap ` +
          `calls past ${mib(this.limitBytes)} MiB (about ${mib(this.used)} MiB so far; config "classifiedStoreLimitBytes"): each ` +
          `call sends the host its function and what it captures, to wait for its turn. Capture less (fewer names, smaller values): ${HOW_TO_CAPTURE_LESS}`,
      );
    }
    // Released, the evaluation is over: nothing of it may take from the share again.
    if (this.released || !this.shared.take(size)) {
      throw new EffectFailure(
        `${what}: refused: its function and captured values (about ${mib(size)} MiB) would take the map and flatMap calls of ` +
          `all the calls and sessions of this tacit together past ${mib(this.shared.limitBytes)} MiB, an eighth of its heap ` +
          `limit (about ${mib(this.shared.takenBytes)} MiB held now; a call's or snippet's are held until its time limit, ` +
          "whatever its maps do): each call sends the host its function and what it captures, to wait for its turn. Let the " +
          `calls under way reach their time limits, or capture less (fewer names, smaller values): ${HOW_TO_CAPTURE_LESS}`,
      );
    }
    this.used += size;
  }

  /** Gives what this evaluation took back to the share of all evaluations, once; later charges are refused. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.shared.give(this.used);
  }
}
