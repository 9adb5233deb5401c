// The work behind `tacit run` and `tacit check`. Loaded only when one of them runs, after
// the sandbox has been started, so Deno boots while this (and zod, oxc, the checker) loads.

import type { Command } from "commander";
import { type ConfigFile, environmentKey, loadConfigFile, parseFlagConfig, resolveConfig, type RunnerConfig } from "../runner/config.js";
import { type CheckResult, checkScript, evaluate, EXIT_CODES, type EvaluationResult } from "../runner/evaluate.js";
import type { InputSource } from "../runner/monitor.js";
import type { SandboxProcess } from "../runner/sandbox-process.js";
import { terminalAsker } from "../runner/approval/askers.js";
import { blankInProcessInfo } from "../runner/hidden-key.js";
import { rememberRunFiles } from "../runner/remembered-files.js";
import { createOversight } from "../runner/approval/oversight.js";
import { readScript, type ScriptSource } from "./script-source.js";
import { writeShown } from "./terminal-output.js";
import { INPUT_LIMIT_BYTES, readStdin } from "./stdin.js";
import type { CommonFlags } from "./usage.js";
import { monotonicMs } from "../runner/monotonic.js";
import { type CheckDeadline, typeCheck } from "../runner/typecheck.js";

function loadConfig(flags: CommonFlags, command: Command): RunnerConfig {
  const file: ConfigFile = flags.config ? loadConfigFile(flags.config) : {};
  // `--no-check` only counts when given; otherwise the file's typeCheck applies.
  const checkGiven = command.getOptionValueSource("check") === "cli";
  const fromFlags = parseFlagConfig({
    executionTimeoutMs: flags.execTimeoutMs,
    memoryLimitMb: flags.memoryLimitMb,
    typeCheck: checkGiven ? flags.check : undefined,
    quiet: flags.quiet,
    recordPath: flags.record,
    auditLog: flags.auditLog,
    sessionEnabled: command.getOptionValueSource("session") === "cli" ? flags.session : undefined,
    libraryConfig:
      flags.allowedRoots ||
      flags.classifiedPaths ||
      flags.secureOutput ||
      flags.commandPermissions ||
      flags.strict ||
      flags.confineCommands ||
      flags.networkPermissions ||
      flags.llmBaseUrl ||
      flags.llmApiKey ||
      flags.llmModel
        ? {
            allowedRoots: flags.allowedRoots,
            classifiedPaths: flags.classifiedPaths,
            secureOutput: flags.secureOutput,
            commandPermissions: flags.commandPermissions,
            strictMode: flags.strict,
            confineCommands: flags.confineCommands,
            networkPermissions: flags.networkPermissions,
            llm:
              flags.llmBaseUrl || flags.llmApiKey || flags.llmModel
                ? { baseUrl: flags.llmBaseUrl, apiKey: flags.llmApiKey, model: flags.llmModel }
                : undefined,
          }
        : undefined,
  });
  const config = { ...resolveConfig(file, fromFlags, process.cwd(), process.env, flags.config ?? null), assumeYes: flags.yes === true };
  // The key is read: other processes of the user need not find it in /proc any more (nor one
  // given in the environment that a flag or the config file overrode).
  const notHidden = blankInProcessInfo([config.library.llm?.apiKey, environmentKey()]);
  // Later runs refuse their scripts this run's config, sink and record too, flags or not.
  const notRemembered = rememberRunFiles(config);
  const warnings = [
    ...config.warnings,
    ...(notHidden === null ? [] : [`the LLM API key could not be blanked in /proc/${process.pid}/environ and cmdline (${notHidden}): a permitted command that reads /proc could read it there`]),
    ...(notRemembered === null ? [] : [notRemembered]),
  ];
  if (!config.quiet) for (const warning of warnings) process.stderr.write(`tacit: warning: ${warning}\n`);
  return config;
}

function inputFor(fromStdin: boolean): InputSource {
  if (fromStdin) {
    return {
      kind: "unavailable",
      reason:
        "readInput(): standard input carried the script itself (tacit run -), so there is no piped data. " +
        "Save the script to a file and run `tacit run script.ts` with the data piped in.",
    };
  }
  let cached: Promise<string> | undefined;
  // One evaluation per run, so the first call's signal is the evaluation's.
  return { kind: "piped", read: (signal) => (cached ??= readStdin({ limitBytes: INPUT_LIMIT_BYTES, emptyWhenInteractive: true, signal })) };
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
    const { stdout, error, exitCode, durationMs, truncated, outcome } = result;
    writeShown(process.stdout, JSON.stringify({ stdout, error, exitCode, durationMs, truncated, outcome }) + "\n");
  } else if (result.error) {
    writeShown(process.stderr, result.error.endsWith("\n") ? result.error : result.error + "\n");
  }
}

export async function runCommand(
  script: ScriptSource,
  flags: CommonFlags,
  command: Command,
  prestarted: SandboxProcess,
  precheck: { typeChecked: boolean; typesDeadline: CheckDeadline; result: Promise<CheckResult> },
): Promise<number> {
  const config = loadConfig(flags, command);
  // The early check started with the flag's limit or the default: the config file's holds. A
  // check whose answer will not be used (the config turns checking off) is stopped.
  precheck.typesDeadline.set(config.typeCheck ? config.executionTimeoutMs : 0);
  const json = flags.json === true;
  const oversight = await createOversight(config, process.cwd(), terminalAsker);
  const result = await evaluate({
    oversight,
    code: script.code,
    displayName: script.displayName,
    config,
    input: inputFor(script.fromStdin),
    prestarted,
    precheck,
    ...(json ? {} : { onOutput: streamToStdout() }),
  }).finally(() => oversight.audit?.close());
  printResult(result, json);
  if (config.recordPath) {
    const { Recorder } = await import("../runner/recorder.js");
    new Recorder(config.recordPath).append({ kind: "run", code: script.code, result });
  }
  return result.exitCode;
}

export async function checkCommand(target: string, flags: CommonFlags, command: Command): Promise<number> {
  const config = loadConfig(flags, command);
  const script = await readScript(target);
  const started = monotonicMs();
  const check = await checkScript(script.code, script.displayName, config.typeCheck, (text) => typeCheck(text, config.executionTimeoutMs));
  const exitCode = check.ok ? EXIT_CODES.ok : EXIT_CODES.rejected;
  if (flags.json) {
    const error = check.ok ? null : check.errors.join("\n");
    writeShown(process.stdout, JSON.stringify({ ok: check.ok, errors: check.errors, error, exitCode, durationMs: Math.round(monotonicMs() - started) }) + "\n");
  } else if (check.ok) {
    if (!config.quiet) writeShown(process.stderr, `${script.displayName}: ok\n`);
  } else {
    writeShown(process.stderr, check.errors.join("\n") + "\n");
  }
  return exitCode;
}


export async function serveCommand(flags: CommonFlags, command: Command, version: string): Promise<number> {
  const config = loadConfig(flags, command);
  const { serve } = await import("../runner/mcp-server.js");
  // A transport that failed under the server is not a normal stop: a supervisor should see it.
  return (await serve({ config, version })) === "stdin ended" ? EXIT_CODES.ok : EXIT_CODES["protocol-error"];
}

export async function replCommand(flags: CommonFlags, command: Command): Promise<number> {
  const config = loadConfig(flags, command);
  const { repl } = await import("./repl.js");
  return repl(config);
}
