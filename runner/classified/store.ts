// The classified store: the only place classified plaintext lives. The sandbox holds opaque
// handles; a handle is unguessable and means something only in the evaluation that made it.
// map/flatMap results are computed in the background by the pure evaluator, so a call
// returns at once and a failing function looks, to agent code, like any other.
//
// The plaintext it holds is capped (see PlaintextBudget): a store lives as long as its
// evaluation or session and never forgets a value, so without a cap a loop of classify()
// grows the host until it dies — the whole server, under `tacit serve`.

import { HeapShare } from "../heap-share.js";
import type { Capture, PureJob } from "../../library/protocol.js";
import { randomToken } from "../random-token.js";
import { EffectFailure, PolicyDenial } from "../refusals.js";
import type { PureEvaluator, PureResult } from "./pure-evaluator.js";
import { PlaintextBudget } from "./budget.js";

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** What one Classified value costs the host whatever its size (measured at about 300 bytes; rounded up). */
const VALUE_BYTES = 320;

/**
 * What all the stores of this process (a tacit serve's sessions and calls) keep of values
 * together, at VALUE_BYTES each: an eighth of tacit's heap limit. CLASSIFIED_VALUES_KEPT bounds
 * one store, and a server keeps up to maxSessions (100) of them: a security review made 100,000
 * values of classify("") in each of its sessions, which no plaintext budget sees (they hold
 * nothing), and a tacit serve with a 250 MB heap died in its eleventh session, every session
 * with it (at the default heap, 100 sessions come to some 3 GB). Like the store's own bound, a
 * count the agent knows, so its refusal may be visible.
 */
const valuesInAll = HeapShare.ofHeap(8);

/**
 * What a failed value holds once its own reason does not fit the budget: one reason for them
 * all. Uncounted, the reasons of failed values took what the budget kept for values: a security
 * review failed 100,000 maps a session with a function throwing a 4,000-character error (each
 * value kept 2,048 characters of it), tacit serve growing by about 250 MB a session, without a
 * bound but the 100,000 values a session keeps, times its sessions (3.8 GB resident after
 * fifteen, at a 4 GiB heap). Counted, they fill the budget as values do, out of sight.
 */
const REASON_NOT_KEPT: PureResult = Object.freeze({
  ok: false,
  reason:
    "the value failed, and why was not kept: the classified values (and the reasons of those that failed) of this evaluation " +
    "or session, or of all the server's sessions and calls together, already fill what the host keeps for them",
});

/**
 * When a map/flatMap result is settled for a request the script times: this long after the call
 * that asked for it, after the values it is computed from are settled, or after the pure
 * evaluator first started, whichever is later (time a person is asked not counted). A request
 * that sends the value (a secret header, a classified body) waits for exactly that moment, and
 * sends what the evaluator had answered by then; without an answer by then, it goes without the
 * value, as with one that could not be computed (sent empty, noted in the secure output). A
 * classified chat asks the model with it then too, and a classified read after a classified
 * write is settled the same way after the value written. How long a function takes depends on
 * the plaintext it is given, and the request waited for it: a thirty-sixth security review
 * timed requests with a secret header (Date.now() around httpGet) and read a token a character
 * per request, with a function that looped a few milliseconds per unit of a character's code,
 * and turned the exit status into a bit of the secret with one that never ended for some
 * plaintexts (the request waited for it past the time limit). Long enough for the
 * evaluator to compute what a script asks of it (a job takes a few milliseconds; its start,
 * 250-360 ms on a loaded machine, is not counted), short enough that a request after each of a
 * loop's maps is not held long; a function that needs longer gives a request nothing to send.
 */
export const MAP_SETTLE_MS = 500;

/**
 * A value, the moment it is settled for what the agent can time (`due`: for a map result, the
 * schedule above; for any other value, when it is known, a time that depends on no function of
 * the agent's), and the value once known.
 */
interface StoredValue {
  value: Promise<PureResult>;
  due: Promise<void>;
  known: PureResult | null;
}

export class ClassifiedStore {
  private readonly values = new Map<string, StoredValue>();
  private readonly budget: PlaintextBudget;
  /** Failed values whose reason is counted already (a map of a failed value fails with that same value). */
  private readonly countedFailures = new WeakSet<PureResult>();

  constructor(
    private readonly evaluator: PureEvaluator,
    /** Told about every value that could not be computed (the secure sink, if any). */
    private readonly onFailure: (reason: string) => void,
    /** How much plaintext the store may hold (config classifiedStoreLimitBytes). */
    limitBytes: number,
    /**
     * How many values the store may hold (config classifiedValuesLimit): each costs the host about
     * 300 bytes beyond its plaintext (its handle, its entry, its result), which the plaintext budget
     * does not see, and a store never forgets a value. A seventh security review called classify("")
     * in a loop in each snippet of a session: 160,000 values per 8 s snippet, tacit serve growing by
     * about 55 MB each snippet, without end. How many values there are is known to the agent (one
     * per call that made one), so this refusal, unlike the budget's, may be visible.
     */
    private readonly valuesLimit: number,
    /** What it holds together with other stores (a server's sessions; see heap-share.ts). */
    shared?: HeapShare,
  ) {
    this.budget = new PlaintextBudget(limitBytes, shared);
    evaluator.readRepliesWithin(this.budget);
  }

  /** Notes, in the secure output, what became of a value out of the script's sight (sent empty, say). */
  note(reason: string): void {
    this.onFailure(reason);
  }

  /** The store's evaluation or session ended: what it held is given back to the share it draws on. */
  release(): void {
    this.budget.release();
    valuesInAll.give(this.counted * VALUE_BYTES);
    this.counted = 0;
    this.released = true;
  }

  /**
   * Refuses a new value once the store holds valuesLimit of them; asked before any work
   * for it is done (a classified read or request is not made only to be refused).
   */
  reserve(what: string): void {
    if (this.values.size < this.valuesLimit) {
      if (this.released || valuesInAll.fits(VALUE_BYTES)) return;
      throw new EffectFailure(
        `${what}: refused: the sessions and calls of this tacit together already hold ${Math.floor(valuesInAll.limitBytes / VALUE_BYTES)} ` +
          "Classified values, the most it keeps (an eighth of its heap limit, whatever their size; each is kept until its " +
          "evaluation or session ends). Delete sessions you no longer need (delete_repl_session) or let the calls under way " +
          "end, and make fewer values: one map over a whole list instead of one per item, or reuse a Classified value",
      );
    }
    throw new EffectFailure(
      `${what}: refused: this evaluation (or session) already holds ${this.valuesLimit} Classified values, the most ` +
        'the host keeps (config "classifiedValuesLimit"; each is kept until the evaluation or session ends, whatever its size). ' +
        "Make fewer values: one map over a whole list instead of one per item, or reuse a Classified value; in a session, start a new one",
    );
  }

  /** Values issued and counted in valuesInAll (given back by release). */
  private counted = 0;
  private released = false;

  private issue(value: Promise<PureResult>, due?: Promise<void>): string {
    if (!this.released && valuesInAll.take(VALUE_BYTES)) this.counted++;
    const handle = "c" + randomToken(18);
    const stored: StoredValue = { value, due: Promise.resolve(), known: null };
    // Known before the due that is the value itself has passed (callbacks run in order).
    void value.then((result) => (stored.known = result));
    stored.due = due ?? value.then(() => undefined);
    this.values.set(handle, stored);
    return handle;
  }

  /**
   * A value computed out of the agent's sight is kept only if it fits the budget; one that
   * does not becomes a failed value, recorded like a failing map's. Its size can depend on
   * plaintext, so whether it fits must show nowhere the agent can see.
   */
  private admitted(computed: Promise<PureResult>, what: string): Promise<PureResult> {
    return computed.then((result) => {
      if (result.ok && this.budget.admitComputed(result.value)) return result;
      return this.failed(result.ok ? `${what}: ${this.budget.fullReason()}` : result);
    });
  }

  /** A failed value as the store keeps it: with its reason if that fits the budget, else with REASON_NOT_KEPT's. */
  private failed(failure: string | PureResult): PureResult {
    const result: PureResult = typeof failure === "string" ? { ok: false, reason: failure } : failure;
    if (result.ok || result === REASON_NOT_KEPT || this.countedFailures.has(result)) return result;
    if (!this.budget.admitReason(result.reason)) return REASON_NOT_KEPT;
    this.countedFailures.add(result);
    return result;
  }

  /**
   * classify(value): a value the agent already has, so its size tells it nothing, and it may
   * be refused visibly. Whether it is refused depends only on what the agent's own classify()
   * calls have added up to (see PlaintextBudget.chargeClassify), never on computed values.
   */
  classify(value: unknown): string {
    this.reserve("classify()");
    const charge = this.budget.chargeClassify(value);
    if (charge === "refused") {
      throw new EffectFailure(
        `classify(): refused a value of about ${mib(PlaintextBudget.sizeOf(value))} MiB: the values this evaluation ` +
          `(or session) classified already take about ${mib(this.budget.classifiedBytes)} MiB of the ` +
          `${mib(this.budget.limitBytes)} MiB the host keeps for classified values (config "classifiedStoreLimitBytes"). ` +
          "Classify smaller values, or reuse a Classified value instead of classifying the same data again.",
      );
    }
    if (charge === "held") return this.issue(Promise.resolve({ ok: true, value }));
    // Accepted but not kept: computed values fill the rest of the budget, and saying so would
    // tell the agent how large they are.
    const result = this.failed(`classify(): ${this.budget.fullReason()}`);
    if (!result.ok) this.onFailure(result.reason);
    return this.issue(Promise.resolve(result));
  }

  /** A value that arrived already computed and out of the agent's sight (a classified HTTP answer). */
  hold(value: unknown, what: string): string {
    this.reserve(what);
    const kept = this.admitted(Promise.resolve({ ok: true, value }), what);
    void kept.then((result) => {
      if (!result.ok) this.onFailure(result.reason);
    });
    return this.issue(kept);
  }

  /**
   * A value that becomes known later (a classified file read after pending writes); a failure is
   * recorded out of sight. `settled`: when it is settled (see MAP_SETTLE_MS), if not once known.
   */
  later(value: Promise<unknown>, what: string, settled: { after: Promise<void> } | null = null): string {
    this.reserve(what);
    const computed = this.admitted(
      value.then(
        (plaintext): PureResult => ({ ok: true, value: plaintext }),
        (error: unknown): PureResult => ({ ok: false, reason: `${what} failed: ${(error as Error).message}` }),
      ),
      what,
    );
    void computed.then((result) => {
      if (!result.ok) this.onFailure(result.reason);
    });
    // `settled`: on the same schedule as a map of the values it comes after (a classified read
    // after classified writes); else once it is known (when depends only on the file).
    const due = settled === null ? undefined : settled.after.then(() => this.evaluator.after(MAP_SETTLE_MS));
    return this.issue(computed, due);
  }

  /**
   * A value computed in the background from another one (chat on a classified message):
   * returned at once; a failure is recorded like a failing map's, out of the agent's sight.
   */
  derive(handle: string, compute: (plaintext: unknown) => Promise<unknown>, what: string): string {
    this.reserve(what);
    // From when the input is settled: asked as soon as it was known, the model's answer came
    // back later by as long as a map function took to compute the question.
    const input = this.settled(handle, what);
    const computed = this.admitted(
      input.then(async (base): Promise<PureResult> => {
        if (!base.ok) return base;
        try {
          return { ok: true, value: await compute(base.value) };
        } catch (error) {
          return { ok: false, reason: `${what} failed: ${(error as Error).message}` };
        }
      }),
      what,
    );
    void computed.then((result) => {
      if (!result.ok) this.onFailure(result.reason);
    });
    return this.issue(computed);
  }

  private stored(handle: string): StoredValue {
    const stored = this.values.get(handle);
    if (!stored) throw new PolicyDenial("not a Classified value from this evaluation: handles cannot be made up or carried over");
    return stored;
  }

  /**
   * The value behind a handle, as soon as it is known, or a denial if this evaluation never
   * issued it: for work the agent cannot time (a map's input, a classified chat's question).
   */
  get(handle: string): Promise<PureResult> {
    return this.stored(handle).value;
  }

  /** When the value behind a handle is settled (see MAP_SETTLE_MS), or a denial if this evaluation never issued it. */
  dueOf(handle: string): Promise<void> {
    return this.stored(handle).due;
  }

  /**
   * The value behind a handle at the moment it is settled (see MAP_SETTLE_MS), never earlier nor
   * later, or a denial if this evaluation never issued it: for what the agent can time, `use`
   * (a request that sends it, a classified chat that asks with it). Not computed by then, the
   * use goes without it, noted out of sight like a value that failed.
   */
  settled(handle: string, use: string): Promise<PureResult> {
    const stored = this.stored(handle);
    return stored.due.then((): PureResult => {
      if (stored.known) return stored.known;
      const reason = `${use} went without its value: the function computing it had not answered ${MAP_SETTLE_MS} ms after it was asked for, when the value was settled`;
      this.onFailure(reason);
      return { ok: false, reason };
    });
  }

  /** `abandoned`: the asking evaluation's kill signal (see PureEvaluator.run). */
  map(handle: string, source: string, captures: Record<string, Capture>, flat: boolean, abandoned?: AbortSignal): string {
    this.reserve(flat ? "flatMap" : "map");
    const input = this.stored(handle);
    const captured: Array<[string, Capture, StoredValue | null]> = Object.entries(captures).map(([name, capture]) => {
      if (!IDENTIFIER.test(name)) throw new PolicyDenial(`map/flatMap: "${name}" is not an identifier`);
      return [name, capture, "classified" in capture ? this.stored(capture.classified) : null];
    });
    const what = flat ? "flatMap" : "map";
    const due = Promise.all([this.evaluator.started(), input.due, ...captured.map(([, , value]) => value?.due)]).then(() =>
      this.evaluator.after(MAP_SETTLE_MS),
    );
    const computed = this.admitted((async (): Promise<PureResult> => {
      const base = await input.value;
      if (!base.ok) return base;
      const jobCaptures: PureJob["captures"] = {};
      // Each captured value is sent once, however many names capture it: once per name, a
      // value of 4 Mi characters captured under 100 names made a job of 400 Mi characters in
      // the host's heap, and a tacit with a 300 MB heap died of it only when the function that
      // computed the value, told by the secret, made it large (its exit told the script so).
      const classifiedValues: unknown[] = [];
      const indexOf = new Map<StoredValue, number>();
      for (const [name, capture, value] of captured) {
        if (value === null) {
          jobCaptures[name] = "plain" in capture ? { plain: capture.plain } : { undefined: true };
          continue;
        }
        let index = indexOf.get(value);
        if (index === undefined) {
          const resolved = await value.value;
          if (!resolved.ok) return resolved;
          index = classifiedValues.push(resolved.value) - 1;
          indexOf.set(value, index);
        }
        jobCaptures[name] = { classified: index };
      }
      return this.evaluator.run({ source, value: base.value, captures: jobCaptures, classifiedValues, flat }, abandoned);
    })(), what);
    void computed.then((result) => {
      if (!result.ok) this.onFailure(`${what} failed: ${result.reason}`);
    });
    return this.issue(computed, due);
  }
}

function mib(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}

/** How a classified value reads as text (in the secure sink, or written to a file). */
export function plaintextOf(result: PureResult): string {
  if (!result.ok) return `<classified value unavailable: ${result.reason}>`;
  return typeof result.value === "string" ? result.value : JSON.stringify(result.value);
}
