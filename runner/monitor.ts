// The reference monitor: every request from the sandbox is one Action, and this is the one
// place that decides and carries out each. The switch is exhaustive; a new Action variant
// without a decision here does not compile.

import type { Action, ActionResults, RefusalError } from "../library/protocol.js";
import type { OutputBuffer } from "./output.js";

export type Decision<T = unknown> = { ok: true; value: T } | { ok: false; error: RefusalError };

/** Where readInput() gets its data: piped stdin, or nothing, with the reason. */
export type InputSource = { kind: "piped"; read: () => Promise<string> } | { kind: "unavailable"; reason: string };

export interface EvaluationContext {
  output: OutputBuffer;
  input: InputSource;
}

function granted<K extends Action["kind"]>(_kind: K, value: ActionResults[K]): Decision<ActionResults[K]> {
  return { ok: true, value };
}

function refused(name: RefusalError["name"], message: string): Decision<never> {
  return { ok: false, error: { name, message } };
}

function assertNever(action: never): never {
  throw new Error(`tacit: no policy for action ${JSON.stringify(action)}`);
}

export async function dispatch(action: Action, context: EvaluationContext): Promise<Decision> {
  switch (action.kind) {
    case "Print":
      context.output.write(action.text);
      return granted(action.kind, null);
    case "ReadInput":
      if (context.input.kind === "unavailable") return refused("Error", context.input.reason);
      try {
        return granted(action.kind, await context.input.read());
      } catch (error) {
        return refused("Error", error instanceof Error ? error.message : String(error));
      }
    default:
      return assertNever(action);
  }
}
