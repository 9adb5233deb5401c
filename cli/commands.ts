// The work behind `tacit run` and `tacit check`. Loaded only when one of them runs, after
// the sandbox has been started, so Deno boots while this (and oxc, the checker) loads.

import type { Command } from "commander";
import type { RunnerConfig } from "../runner/config.js";
import { AuditLogFailedAfterRun, type CheckResult, checkScript, evaluate, EXIT_CODES, type EvaluationResult } from "../runner/evaluate.js";
import type { InputSource } from "../runner/monitor.js";
import type { SandboxProcess } from "../runner/sandbox-process.js";
import { terminalAsker } from "../runner/approval/askers.js";
import { createOversight } from "../runner/approval/oversight.js";
import { checkSandboxNetwork, loadConfig } from "./load-config.js";
import { refuseSecretScript, secretInputRefusal } from "./script-refusal.js";
import { originOfDescriptor } from "./script-origin.js";
import { readScript, type ScriptSource } from "./script-source.js";
import { warnOnStderr, writeErrorOnStderr, writeShown } from "./terminal-output.js";
import { INPUT_LIMIT_BYTES, InputRefusedError, readStdin, STDIN_DESCRIPTOR } from "./stdin.js";
import type { CheckJsonResult, CommonFlags, RunJsonResult } from "./usage.js";
import { SignalStop } from "./stop-signals.js";
import { auditLogFailure } from "./usage.js";
import { monotonicMs } from "../runner/monotonic.js";
import { typeCheck, typeCheckCache } from "../runner/typecheck.js";

function inputFor(fromStdin: boolean, config: RunnerConfig): InputSource {
  if (fromStdin) {
    return {
      kind: "unavailable",
      reason:
        "readInput(): standard input carried the script itself (tacit run -), so there is no piped data. " +
        "Save the script to a file and run `tacit run script.ts` with the data piped in.",
    };
  }
  let cached: Promise<string> | undefined;
  // One evaluation per run, so the first call's signal is the evaluation's. Standard input is
  // judged as a script file is, where its descriptor leads, when the script first asks for it.
  const read = (signal: AbortSignal): Promise<string> => {
    const refusal = secretInputRefusal(originOfDescriptor(0, STDIN_DESCRIPTOR), config);
    if (refusal !== null) return Promise.reject(new InputRefusedError(refusal));
    return readStdin({ limitBytes: INPUT_LIMIT_BYTES, emptyWhenInteractive: true, signal });
  };
  return { kind: "piped", read: (signal) => (cached ??= read(signal)) };
}

/**
 * Output as it is printed. A reader that goes away (`tacit run s.ts | head -1`) is not an
 * error: the rest of the output is dropped, as a Unix filter's would be, and the script
 * finishes its work.
 */
function streamToStdout(): (text: string) => void {
  return (text) => {
    if (!process.stdout.destroyed) writeShown(process.stdout, text);
  };
}

function printResult(result: EvaluationResult, json: boolean): void {
  if (json) {
    const { stdout, error, exitCode, durationMs, truncated, outcome, warnings } = result;
    const shown: RunJsonResult = { stdout, error, exitCode, durationMs, truncated, outcome, warnings };
    writeShown(process.stdout, JSON.stringify(shown) + "\n");
  } else if (result.error) {
    writeErrorOnStderr(result.outcome, result.error);
  }
}

/**
 * Closes the run's audit log (signing what it holds): null, or what tacit says on stderr when
 * the log could not be written, during the run or now. Other errors are tacit's own and propagate.
 */
function closeAuditLog(audit: { close(): void } | null): string | null {
  try {
    audit?.close();
    return null;
  } catch (error) {
    if (!(error instanceof Error) || error.name !== "AuditLogError") throw error;
    return `tacit: ${auditLogFailure(error.message)}`;
  }
}

/** `config`: loaded by the caller before it started the sandbox and the checks (see cli/main.ts). */
export async function runCommand(
  script: ScriptSource,
  config: RunnerConfig,
  json: boolean,
  prestarted: SandboxProcess,
  precheck: { typeChecked: boolean; result: Promise<CheckResult> },
): Promise<number> {
  const oversight = await createOversight(config, process.cwd(), terminalAsker);
  // A stop signal (Ctrl-C) ends the script as a cancellation does (its command killed, an open
  // question withdrawn), which logs how it ended before tacit exits (see stop-signals.ts).
  const stop = new SignalStop();
  let auditFailure: string | null = null;
  const evaluated = await evaluate({
    oversight,
    code: script.code,
    displayName: script.displayName,
    config,
    input: inputFor(script.fromStdin, config),
    prestarted,
    precheck,
    signal: stop.signal,
    ...(json ? {} : { onOutput: streamToStdout(), onWarning: warnOnStderr }),
  })
    .catch((error: unknown) => {
      if (!(error instanceof AuditLogFailedAfterRun)) throw error;
      auditFailure = `tacit: ${auditLogFailure(error.message)}`;
      return error.result;
    })
    .finally(() => stop.release());
  // Closed in any case (it signs what it holds); a failure it reports is the one above, or a new one.
  auditFailure = closeAuditLog(oversight.audit) ?? auditFailure;
  // Stopped by a signal, tacit exits 128 + its number, and --json says the same exit code. An
  // audit log that could not be written is output tacit could not write: exit 2, with the
  // script's result still shown (it was lost, --json's object too, behind the error).
  const result = {
    ...evaluated,
    exitCode: stop.exitCode(auditFailure === null ? evaluated.exitCode : EXIT_CODES.usage),
    ...(json && auditFailure !== null ? { error: [evaluated.error, auditFailure].filter((text) => text !== null).join("\n") } : {}),
  };
  printResult(result, json);
  if (!json && auditFailure !== null) process.stderr.write(`${auditFailure}\n`);
  if (config.recordPath) {
    const { Recorder } = await import("../runner/recorder.js");
    new Recorder(config.recordPath).append({ kind: "run", code: script.code, result });
  }
  return result.exitCode;
}

export async function checkCommand(target: string, flags: CommonFlags, command: Command): Promise<number> {
  const config = loadConfig(flags, command);
  // The type checker runs in a network namespace of its own too (typecheck.ts): a requirement of
  // one holds for it, and --no-network-namespace keeps it in the host's. No warning: no script runs.
  checkSandboxNetwork(config, true);
  const script = await readScript(target);
  refuseSecretScript(target, script.origin, config);
  const started = monotonicMs();
  const check = await checkScript(script.code, script.displayName, config.typeCheck, (text) => typeCheck(text, config.executionTimeoutMs, typeCheckCache(), config.memoryLimitMb));
  const exitCode = check.ok ? EXIT_CODES.ok : EXIT_CODES.rejected;
  if (flags.json) {
    const error = check.ok ? null : check.errors.join("\n");
    const shown: CheckJsonResult = { ok: check.ok, errors: check.errors, error, exitCode, durationMs: Math.round(monotonicMs() - started) };
    writeShown(process.stdout, JSON.stringify(shown) + "\n");
  } else if (check.ok) {
    if (!config.quiet) writeShown(process.stderr, `${script.displayName}: ok\n`);
  } else {
    writeShown(process.stderr, check.errors.join("\n") + "\n");
  }
  return exitCode;
}


export async function serveCommand(flags: CommonFlags, command: Command, version: string): Promise<number> {
  const config = loadConfig(flags, command);
  checkSandboxNetwork(config);
  const { serve } = await import("../runner/mcp-server.js");
  // A stop signal ends the calls under way before the server exits, so that the audit log says how they ended.
  const stop = new SignalStop();
  const end = await serve({ config, version, stop: stop.signal });
  stop.release();
  // A transport that failed under the server is not a normal stop: a supervisor should see it.
  return stop.exitCode(end === "stdin ended" ? EXIT_CODES.ok : EXIT_CODES["protocol-error"]);
}

export async function replCommand(flags: CommonFlags, command: Command): Promise<number> {
  const config = loadConfig(flags, command);
  checkSandboxNetwork(config);
  const { repl } = await import("./repl.js");
  return repl(config);
}
