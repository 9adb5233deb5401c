// The classified store: the only place classified plaintext lives. The sandbox holds opaque
// handles; a handle is unguessable and means something only in the evaluation that made it.
// map/flatMap results are computed in the background by the pure evaluator, so a call
// returns at once and a failing function looks, to agent code, like any other.

import type { Capture, PureJob } from "../../library/protocol.js";
import { randomToken } from "../random-token.js";
import { PolicyDenial } from "../refusals.js";
import type { PureEvaluator, PureResult } from "./pure-evaluator.js";

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export class ClassifiedStore {
  private readonly values = new Map<string, Promise<PureResult>>();

  constructor(
    private readonly evaluator: PureEvaluator,
    /** Told about every value that could not be computed (the secure sink, if any). */
    private readonly onFailure: (reason: string) => void,
  ) {}

  private issue(value: Promise<PureResult>): string {
    const handle = "c" + randomToken(18);
    this.values.set(handle, value);
    return handle;
  }

  add(value: unknown): string {
    return this.issue(Promise.resolve({ ok: true, value }));
  }

  /** A value that becomes known later (a classified file read after pending writes); a failure is recorded out of sight. */
  later(value: Promise<unknown>, what: string): string {
    const computed = value.then(
      (plaintext): PureResult => ({ ok: true, value: plaintext }),
      (error: unknown): PureResult => ({ ok: false, reason: `${what} failed: ${(error as Error).message}` }),
    );
    void computed.then((result) => {
      if (!result.ok) this.onFailure(result.reason);
    });
    return this.issue(computed);
  }

  /**
   * A value computed in the background from another one (chat on a classified message):
   * returned at once; a failure is recorded like a failing map's, out of the agent's sight.
   */
  derive(handle: string, compute: (plaintext: unknown) => Promise<unknown>, what: string): string {
    const input = this.get(handle);
    const computed = input.then(async (base): Promise<PureResult> => {
      if (!base.ok) return base;
      try {
        return { ok: true, value: await compute(base.value) };
      } catch (error) {
        return { ok: false, reason: `${what} failed: ${(error as Error).message}` };
      }
    });
    void computed.then((result) => {
      if (!result.ok) this.onFailure(result.reason);
    });
    return this.issue(computed);
  }

  /** The value behind a handle, or a denial if this evaluation never issued it. */
  get(handle: string): Promise<PureResult> {
    const value = this.values.get(handle);
    if (!value) throw new PolicyDenial("not a Classified value from this evaluation: handles cannot be made up or carried over");
    return value;
  }

  map(handle: string, source: string, captures: Record<string, Capture>, flat: boolean): string {
    const input = this.get(handle);
    const captured: Array<[string, Capture, Promise<PureResult> | null]> = Object.entries(captures).map(([name, capture]) => {
      if (!IDENTIFIER.test(name)) throw new PolicyDenial(`map/flatMap: "${name}" is not an identifier`);
      return [name, capture, "classified" in capture ? this.get(capture.classified) : null];
    });
    const computed = (async (): Promise<PureResult> => {
      const base = await input;
      if (!base.ok) return base;
      const jobCaptures: PureJob["captures"] = {};
      for (const [name, capture, value] of captured) {
        if (value === null) {
          jobCaptures[name] = { plain: (capture as { plain: unknown }).plain };
          continue;
        }
        const resolved = await value;
        if (!resolved.ok) return resolved;
        jobCaptures[name] = { classifiedValue: resolved.value };
      }
      return this.evaluator.run({ source, value: base.value, captures: jobCaptures, flat });
    })();
    void computed.then((result) => {
      if (!result.ok) this.onFailure(`${flat ? "flatMap" : "map"} failed: ${result.reason}`);
    });
    return this.issue(computed);
  }
}

/** How a classified value reads as text (in the secure sink, or written to a file). */
export function plaintextOf(result: PureResult): string {
  if (!result.ok) return `<classified value unavailable: ${result.reason}>`;
  return typeof result.value === "string" ? result.value : JSON.stringify(result.value);
}
