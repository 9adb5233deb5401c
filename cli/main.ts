// The `tacit` command: parses flags, loads config, and delegates to runner/.

import { readFileSync } from "node:fs";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { ConfigError, type ConfigFile, loadConfigFile, parseFlagConfig, resolveConfig, type RunnerConfig } from "../runner/config.js";
import { checkScript, evaluate, EXIT_CODES, type EvaluationResult } from "../runner/evaluate.js";
import type { InputSource } from "../runner/monitor.js";
import { interfacePath, packageRoot } from "../runner/paths.js";
import { INPUT_LIMIT_BYTES, readStdin } from "./stdin.js";

const STDIN_DISPLAY_NAME = "script.ts";

const EXIT_CODE_HELP = `
Exit codes:
  0    success
  1    the script threw (or broke the sandbox protocol)
  2    usage or config error
  3    rejected before running (validation or type errors)
  124  timed out (killed at the wall-clock limit)
  125  killed for a resource limit (memory)`;

class UsageError extends Error {
  override name = "UsageError";
}

function positiveInteger(flag: string) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) <= 0) {
      throw new InvalidArgumentError(`${flag} takes a positive whole number, got "${value}".`);
    }
    return Number(value);
  };
}

interface CommonFlags {
  config?: string;
  check: boolean;
  execTimeoutMs?: number;
  memoryLimitMb?: number;
  quiet?: boolean;
  json?: boolean;
}

function addCommonOptions(command: Command): Command {
  return command
    .option("--config <file>", "JSON config file (keys: executionTimeoutMs, memoryLimitMb, typeCheck, quiet)")
    .option("--no-check", "skip type-checking (config: typeCheck: false)")
    .addOption(new Option("--exec-timeout-ms <ms>", "wall-clock limit for the script (default 30000)").argParser(positiveInteger("--exec-timeout-ms")))
    .addOption(new Option("--memory-limit-mb <MiB>", "memory limit for the script's heap (default 512)").argParser(positiveInteger("--memory-limit-mb")))
    .option("--quiet", "print no warnings");
}

function loadConfig(flags: CommonFlags, command: Command): RunnerConfig {
  const file: ConfigFile = flags.config ? loadConfigFile(flags.config) : {};
  // `--no-check` only counts when given; otherwise the file's typeCheck applies.
  const checkGiven = command.getOptionValueSource("check") === "cli";
  const fromFlags = parseFlagConfig({
    executionTimeoutMs: flags.execTimeoutMs,
    memoryLimitMb: flags.memoryLimitMb,
    typeCheck: checkGiven ? flags.check : undefined,
    quiet: flags.quiet,
  });
  return resolveConfig(file, fromFlags);
}

async function readScript(target: string): Promise<{ code: string; displayName: string; fromStdin: boolean }> {
  if (target === "-") {
    return { code: await readStdin({ limitBytes: Number.POSITIVE_INFINITY, emptyWhenInteractive: false }), displayName: STDIN_DISPLAY_NAME, fromStdin: true };
  }
  try {
    return { code: readFileSync(target, "utf8"), displayName: target, fromStdin: false };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read the script "${target}": ${code === "ENOENT" ? "no such file" : code ?? String(error)}. Pass a .ts file, or - to read the script from standard input.`);
  }
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
  return { kind: "piped", read: () => (cached ??= readStdin({ limitBytes: INPUT_LIMIT_BYTES, emptyWhenInteractive: true })) };
}

function printResult(result: EvaluationResult, json: boolean): void {
  if (json) {
    const { stdout, error, exitCode, durationMs, truncated, outcome } = result;
    process.stdout.write(JSON.stringify({ stdout, error, exitCode, durationMs, truncated, outcome }) + "\n");
  } else if (result.error) {
    process.stderr.write(result.error.endsWith("\n") ? result.error : result.error + "\n");
  }
}

async function runCommand(target: string, flags: CommonFlags, command: Command): Promise<number> {
  const config = loadConfig(flags, command);
  const script = await readScript(target);
  const json = flags.json === true;
  const result = await evaluate({
    code: script.code,
    displayName: script.displayName,
    config,
    input: inputFor(script.fromStdin),
    ...(json ? {} : { onOutput: (text: string) => void process.stdout.write(text) }),
  });
  printResult(result, json);
  return result.exitCode;
}

async function checkCommand(target: string, flags: CommonFlags, command: Command): Promise<number> {
  const config = loadConfig(flags, command);
  const script = await readScript(target);
  const started = performance.now();
  const check = await checkScript(script.code, script.displayName, config.typeCheck);
  const exitCode = check.ok ? EXIT_CODES.ok : EXIT_CODES.rejected;
  if (flags.json) {
    const error = check.ok ? null : check.errors.join("\n");
    process.stdout.write(JSON.stringify({ ok: check.ok, errors: check.errors, error, exitCode, durationMs: Math.round(performance.now() - started) }) + "\n");
  } else if (check.ok) {
    if (!config.quiet) process.stderr.write(`${script.displayName}: ok\n`);
  } else {
    process.stderr.write(check.errors.join("\n") + "\n");
  }
  return exitCode;
}

function version(): string {
  return (JSON.parse(readFileSync(`${packageRoot}/package.json`, "utf8")) as { version: string }).version;
}

export function buildProgram(setExitCode: (code: number) => void): Command {
  const program = new Command("tacit")
    .description(
      "Run AI-agent TypeScript against a capability library, in a Deno sandbox with no authority of its own.",
    )
    .version(version(), "-V, --version")
    .showHelpAfterError("(run tacit --help for usage)")
    .addHelpText("after", EXIT_CODE_HELP)
    .exitOverride();

  addCommonOptions(
    program
      .command("run")
      .description("validate, type-check and run a script; `-` reads the script from standard input")
      .argument("<file>", "the script (.ts), or - for standard input")
      .option("--json", "print one JSON object: stdout, error, exitCode, durationMs, truncated")
      .addHelpText("after", EXIT_CODE_HELP),
  ).action(async (file: string, flags: CommonFlags, command: Command) => setExitCode(await runCommand(file, flags, command)));

  addCommonOptions(
    program
      .command("check")
      .description("validate and type-check a script without running it")
      .argument("<file>", "the script (.ts), or - for standard input")
      .option("--json", "print one JSON object: ok, errors, exitCode, durationMs")
      .addHelpText("after", EXIT_CODE_HELP),
  ).action(async (file: string, flags: CommonFlags, command: Command) => setExitCode(await checkCommand(file, flags, command)));

  program
    .command("interface")
    .description("print the capability API scripts are written against (a .d.ts)")
    .action(() => {
      process.stdout.write(readFileSync(interfacePath, "utf8"));
      setExitCode(EXIT_CODES.ok);
    });

  for (const command of program.commands) command.exitOverride();
  return program;
}

export async function main(argv: readonly string[]): Promise<number> {
  let exitCode: number = EXIT_CODES.ok;
  const program = buildProgram((code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync(argv as string[]);
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here too, successfully.
      return error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
    }
    if (error instanceof ConfigError || error instanceof UsageError) {
      process.stderr.write(`tacit: ${error.message}\n`);
      return EXIT_CODES.usage;
    }
    process.stderr.write(`tacit: internal error: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    return EXIT_CODES.threw;
  }
}
