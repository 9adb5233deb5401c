// requestExecPermission and the ProcessPermission it hands out: a scope token and nothing
// else; the host decides and runs every command.

import type { ProcessResult } from "../protocol.js";
import type { Channel } from "./channel.js";
import { withScope } from "./scope.js";
import { knownOptions, textValue } from "./call-values.js";

export interface ExecOptions {
  cwd?: string;
  timeoutMs?: number;
  input?: string;
}

const EXEC_OPTIONS = ["cwd", "timeoutMs", "input"];

function execHint(key: string): string {
  if (key === "env") return "A command gets tacit's own small environment (PATH, HOME, LANG, TERM): pass settings as arguments or on its input";
  if (key === "timeout") return "The limit is timeoutMs, in milliseconds";
  if (key === "stdin") return "Standard input is the input option";
  return "";
}

export function createExecApi(channel: Channel) {
  class ProcessPermission {
    readonly #scope: string;

    constructor(scope: string) {
      this.#scope = scope;
    }

    exec(command: string, args: readonly string[] = [], given: ExecOptions = {}): ProcessResult {
      if (!Array.isArray(args)) throw new TypeError("exec(command, args): args must be an array of strings");
      const options = knownOptions<ExecOptions>(given, EXEC_OPTIONS, "exec(command, args, options)", execHint);
      const timeoutMs = options.timeoutMs === undefined ? null : Number(options.timeoutMs);
      // The host takes a positive whole number only (anything else ended the evaluation as a malformed frame).
      if (timeoutMs !== null && !(Number.isSafeInteger(timeoutMs) && timeoutMs > 0)) {
        throw new TypeError(`exec(command, args, options): options.timeoutMs must be a positive whole number of milliseconds, not ${String(options.timeoutMs)}; leave it out for the run's own limit`);
      }
      return channel.request({
        kind: "Exec",
        scope: this.#scope,
        command: String(command),
        args: args.map((arg, i) => textValue(arg, `exec(command, args): args[${i}]`)),
        cwd: options.cwd === undefined ? null : String(options.cwd),
        timeoutMs,
        input: options.input === undefined ? null : textValue(options.input, "exec(command, args, options): options.input"),
      });
    }

    execOutput(command: string, args: readonly string[] = []): string {
      return this.exec(command, args).stdout;
    }

    toString(): string {
      return "ProcessPermission";
    }
  }

  function requestExecPermission<T>(commands: readonly string[], op: (proc: ProcessPermission) => T): T {
    if (!Array.isArray(commands)) throw new TypeError("requestExecPermission(commands, op): commands must be an array of command names");
    let scope = "";
    return withScope(
      "requestExecPermission",
      () => {
        scope = channel.request({ kind: "ExecOpenScope", commands: commands.map(String) }).scope;
        return new ProcessPermission(scope);
      },
      () => void channel.request({ kind: "CloseScope", scope }),
      op,
    );
  }

  return { requestExecPermission };
}
