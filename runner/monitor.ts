// The reference monitor: every request from the sandbox is one Action, and this is the one
// place that decides and carries out each. The switch is exhaustive; a new Action variant
// without a decision here does not compile.

import type { Action, ActionResults, RefusalError } from "../library/protocol.js";
import type { FileSystemExecutor } from "./fs/file-system.js";
import type { OutputBuffer } from "./output.js";
import { EffectFailure, PolicyDenial } from "./refusals.js";

export type Decision<T = unknown> = { ok: true; value: T } | { ok: false; error: RefusalError };

/** Where readInput() gets its data: piped stdin, or nothing, with the reason. */
export type InputSource = { kind: "piped"; read: () => Promise<string> } | { kind: "unavailable"; reason: string };

export interface EvaluationContext {
  output: OutputBuffer;
  input: InputSource;
  files: FileSystemExecutor;
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

/** Decides one action: carries it out, or refuses it with a message for the agent. */
export async function dispatch(action: Action, context: EvaluationContext): Promise<Decision> {
  try {
    return await decide(action, context);
  } catch (error) {
    if (error instanceof PolicyDenial) return refused("SecurityError", error.message);
    if (error instanceof EffectFailure) return refused("Error", error.message);
    throw error;
  }
}

async function decide(action: Action, context: EvaluationContext): Promise<Decision> {
  const { files } = context;
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
    case "FsOpenScope":
      return granted(action.kind, files.openScope(action.root));
    case "CloseScope":
      files.closeScope(action.scope);
      return granted(action.kind, null);
    case "FsStat":
      return granted(action.kind, files.stat(action.scope, action.path));
    case "FsSize":
      return granted(action.kind, files.size(action.scope, action.path));
    case "FsRead":
      return granted(action.kind, files.read(action.scope, action.path, action.as));
    case "FsReadChunk":
      return granted(action.kind, files.readChunk(action.scope, action.path, action.offset));
    case "FsWrite":
      files.write(action.scope, action.path, action.content, action.append);
      return granted(action.kind, null);
    case "FsDelete":
      files.delete(action.scope, action.path);
      return granted(action.kind, null);
    case "FsMkdir":
      files.mkdir(action.scope, action.path);
      return granted(action.kind, null);
    case "FsList":
      return granted(action.kind, files.list(action.scope, action.path, action.recursive));
    case "FsFind":
      return granted(action.kind, files.find(action.scope, action.path, action.glob));
    case "FsGrep":
      return granted(action.kind, await files.grepFile(action.scope, action.path, action.pattern));
    case "FsGrepRecursive":
      return granted(action.kind, await files.grepRecursive(action.scope, action.path, action.pattern, action.glob));
    default:
      return assertNever(action);
  }
}
