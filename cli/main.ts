// The `tacit` command: parses flags and delegates. Kept light: `tacit run` starts the
// sandbox first (after its config, when a --config file is given: see the run action) and
// loads the heavy parts (validator, checker) while Deno boots.

import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { type Command as CommandType, Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { EXIT_CODES } from "../runner/exit-codes.js";
import { DEFAULT_MEMORY_LIMIT_MB, MAX_SESSIONS_MEMORY_LIMIT_MB, MAX_TIMER_MS } from "../runner/limits.js";
import { mayRunRecursiveSearch, prestartSearchThread } from "../runner/fs/grep-runner.js";
import { interfacePath, packageRoot } from "../runner/paths.js";
import { SandboxProcess } from "../runner/sandbox-process.js";
import { tacitHomeSettingProblem } from "../runner/tacit-home.js";
import { readScript } from "./script-source.js";
import { exitOnStopSignals } from "./stop-signals.js";
import { writeShown } from "./terminal-output.js";
import { auditLogFailure, type CheckJsonResult, type CommonFlags, type RunJsonResult, UsageError } from "./usage.js";

const EXIT_CODE_HELP = `
Exit codes:
  0    success
  1    the script threw (or broke the sandbox protocol), or was cancelled
  2    usage or config error, or tacit could not write its output
       (standard output on a full disk, or the audit log)
  3    rejected before running (validation or type errors)
  124  timed out (killed at the wall-clock limit)
  125  killed for a resource limit (memory)`;

function positiveInteger(flag: string, max = Number.MAX_SAFE_INTEGER, why = "") {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) <= 0) {
      throw new InvalidArgumentError(`${flag} takes a positive whole number, got "${value}".`);
    }
    if (Number(value) > max) throw new InvalidArgumentError(`${flag} takes at most ${max}${why}, got ${value}.`);
    return Number(value);
  };
}

function commaList(value: string): string[] {
  return value.split(",").map((item) => item.trim()).filter((item) => item !== "");
}

/**
 * The patterns of a comma-separated list, split at the commas outside a brace and not escaped
 * ("\\,", kept for the glob, which reads it as a comma): split at every comma,
 * `--classified-paths '*.{pem,key}'` became the patterns "*.{pem" and "key}", which classify no
 * .pem or .key file, and a script read them as plain text, where the same pattern in a config
 * file classified both. A brace never closed is refused: where its list ends cannot be told. A
 * comma or brace in a class (`[,_]`) is the class's (see classEnd), unless `classesKept` is false.
 */
function patternItems(value: string, classesKept = true): string[] {
  const items: string[] = [];
  let item = "";
  let depth = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === "\\" && i + 1 < value.length) {
      item += c + value[++i]!;
      continue;
    }
    // A class is one character of the pattern, whatever it holds: a comma or brace in it neither
    // splits the list nor opens or closes a brace (`secret[,_]txt` was split into "secret[" and "_]txt").
    const end = c === "[" && classesKept ? classEnd(value, i) : -1;
    if (end !== -1) {
      item += value.slice(i, end + 1);
      i = end;
      continue;
    }
    if (c === "{") depth++;
    else if (c === "}" && depth > 0) depth--;
    else if (c === "," && depth === 0) {
      items.push(item);
      item = "";
      continue;
    }
    item += c;
  }
  if (depth > 0) {
    throw new InvalidArgumentError(
      `--classified-paths "${value}" has a "{" that is never closed, so where its patterns end cannot be told (the list is split at commas outside ` +
        'braces). Close the brace ("*.{pem,key}"), or write a "{" that is part of a name as "\\{"',
    );
  }
  items.push(item);
  return items;
}

/**
 * The list split at commas in classes too, as before classes were kept whole, where that reads it
 * otherwise; nothing where it leaves a brace open. Either reading classifies: a "[" meant as a
 * character of one pattern and a "]" of a later one read as a class would join the patterns
 * between (`data[,.env,x]`), which the split at every comma classifies.
 */
function itemsSplitInClasses(value: string): string[] {
  try {
    return patternItems(value, false);
  } catch {
    return [];
  }
}

/**
 * Where the class that opens at `value[start]` ("[") ends (its "]"), or -1 where none does (then the
 * "[" is a character of the name). As gitignore reads a class: a leading "!" or "^" negates it, a "]"
 * first in it (after that) is one of its characters, and a backslash escapes the next.
 */
function classEnd(value: string, start: number): number {
  let i = start + 1;
  if (value[i] === "!" || value[i] === "^") i++;
  if (value[i] === "]") i++;
  for (; i < value.length; i++) {
    if (value[i] === "\\") i++;
    else if (value[i] === "]") return i;
  }
  return -1;
}

/**
 * --classified-paths' list, which may not be empty: it replaces the defaults, so an empty value
 * (`--classified-paths "$EXTRA"`, the variable unset) classified nothing, .env and .ssh included,
 * with only a warning that --quiet silenced.
 */
function classifiedPatternList(value: string): string[] {
  // Its end untrimmed: a trailing space escaped is gitignore's way to name one (`credentials\ ` is "credentials "); trimmed, only
  // "credentials\" was classified. ClassifiedPaths matches each pattern trimmed too.
  const patterns = [...new Set([...patternItems(value), ...itemsSplitInClasses(value)])]
    .map((item) => item.trimStart())
    .filter((item) => item.trim() !== "");
  if (patterns.length === 0) {
    throw new InvalidArgumentError(
      "--classified-paths names no pattern, and its list replaces the defaults (.ssh, .env, …): an empty one would classify nothing. " +
        "Leave the flag out to keep the defaults; to classify nothing at all, say so in a config file (libraryConfig.classifiedPaths: []).",
    );
  }
  return patterns;
}

/** Whether `absolute` is a directory (a link to one too). */
function existsAsDirectory(absolute: string): boolean {
  try {
    return statSync(absolute).isDirectory();
  } catch {
    return false;
  }
}

/**
 * --allowed-roots' list. A directory whose name holds a comma cannot be given in it: split, its
 * parts named other directories (`/srv/a,b` opened /srv/a, and b in the working directory).
 * Refused where the whole value is an existing directory, with where to give it instead.
 */
function rootList(value: string): string[] {
  if (value.includes(",") && existsAsDirectory(path.resolve(value))) {
    throw new InvalidArgumentError(
      `a directory of that very name exists, but the list is comma-separated, so it would name ${commaList(value).map((part) => `"${part}"`).join(" and ")} ` +
        "instead. Give it in a config file (libraryConfig.allowedRoots), where a name may hold a comma.",
    );
  }
  return commaList(value);
}

/** The parsers of flags that take a comma-separated list. */
const LIST_PARSERS: ReadonlySet<unknown> = new Set([commaList, classifiedPatternList, rootList]);

/**
 * Makes each option of `command` that takes a value refuse to be given twice, or to take another
 * of its flags as its value. Commander keeps the last value and drops the first without a word:
 * `--classified-paths .secret --classified-paths .env` left .secret readable as plain text, and
 * `--config strict.json --config loose.json` ran under loose.json alone. And it takes the next
 * word as the value, whatever it is: `--classified-paths --quiet s.ts` (the value forgotten)
 * classified only files named "--quiet", and scripts read .env, the warning silenced. Neither
 * reading is surely what the person meant, so tacit asks. A value is not repeated in an error:
 * it may be an API key (a flag's name is shown: it is one of tacit's).
 */
/**
 * Commander's own flags, in no command's options list: `--classified-paths -h s.ts` (the value
 * forgotten) classified only files named "-h", and scripts read .env.
 */
const HELP_AND_VERSION_FLAGS: ReadonlySet<string> = new Set(["-h", "--help", "-V", "--version"]);

function checkOptionValues(command: CommandType): void {
  const flagNames = new Set(command.options.flatMap((option) => [option.long, option.short].filter((name): name is string => name !== undefined)));
  for (const option of command.options) {
    if (!option.required && !option.optional) continue;
    const parse = option.parseArg as ((value: string, previous: unknown) => unknown) | undefined;
    const isList = LIST_PARSERS.has(parse);
    option.argParser((value: string, previous: unknown) => {
      const flag = value.split("=")[0]!;
      if (flagNames.has(flag) || HELP_AND_VERSION_FLAGS.has(flag)) {
        throw new UsageError(
          `${option.long} takes a value, but the word after it is the flag ${flag}: was the value left out? ` +
            `Give it (${option.long} ${option.flags.split(" ")[1] ?? "<value>"}), or leave ${option.long} out.`,
        );
      }
      if (previous !== undefined) {
        throw new UsageError(
          `${option.long} is given twice: tacit would keep only the last and drop what the first said without a word, so it refuses both. ` +
            (isList
              ? `Give it once, with every item in one comma-separated list (${option.long} a,b).`
              : `Give it once, with the value you mean.`),
        );
      }
      return parse === undefined ? value : parse(value, undefined);
    });
  }
}

function addScriptOptions(command: CommandType, jsonHelp: string): CommandType {
  return addPolicyOptions(command.argument("<file>", "the script (.ts), or - to read it from standard input").option("--json", jsonHelp));
}

/** The options that say what scripts may do and how long they may take. */
function addPolicyOptions(command: CommandType): CommandType {
  return command
    .option("--config <file>", "JSON config file: executionTimeoutMs, memoryLimitMb, typeCheck, quiet, auditLog, requireNetworkNamespace, networkNamespace, policy (approval tiers), and libraryConfig (allowedRoots, classifiedPaths, classifiedWrite, secureOutput, commandPermissions, strictMode, confineCommands, execOutputLimitBytes, networkPermissions, networkResponseLimitBytes, networkTimeoutMs, llm); see the README")
    .option("--no-check", "skip type-checking (config: typeCheck: false)")
    .addOption(
      new Option("--exec-timeout-ms <ms>", "wall-clock limit for the script, in ms (default 30000)").argParser(
        positiveInteger("--exec-timeout-ms", MAX_TIMER_MS, " (about 24.8 days: a longer timer fires at once)"),
      ),
    )
    .addOption(
      new Option("--memory-limit-mb <MiB>", `heap limit for the script, in MiB (default ${DEFAULT_MEMORY_LIMIT_MB})`).argParser(
        positiveInteger("--memory-limit-mb"),
      ),
    )
    .addOption(
      new Option("--allowed-roots <dirs>", "comma-separated directories scripts may open with requestFileSystem (default: the working directory)").argParser(rootList),
    )
    .addOption(
      new Option("--classified-paths <patterns>", "comma-separated gitignore-like patterns of secret paths (default: .ssh, .env, .aws, …)").argParser(classifiedPatternList),
    )
    .addOption(
      new Option("--command-permissions <globs>", "comma-separated command name globs (* only) that scripts may run with requestExecPermission; a permitted command runs with your full authority (allowed roots, classified paths and network permissions do not bind it; --confine-commands binds its files)").argParser(commaList),
    )
    .option("--strict", "when --command-permissions is unset, let scripts run any command but shells, interpreters, file and network tools and programs that run other programs or code: a denylist for convenience, not a confinement (every other command runs with your full authority)")
    .option("--confine-commands", "run each permitted command confined (Linux, util-linux unshare and mount): the file system read-only but the allowed roots and a private /tmp, classified paths, the hidden entries of your home directory and tacit's own files covered; a command that cannot be confined is refused, never run unconfined")
    .addOption(
      new Option("--network-permissions <hosts>", "comma-separated host patterns scripts may reach with requestNetwork (like api.example.com, *.example.com:8443, 127.0.0.1:*)").argParser(commaList),
    )
    .option("--llm-base-url <url>", "OpenAI-compatible endpoint for chat(), e.g. https://api.example.com/v1")
    .option("--llm-api-key <key>", "its API key (kept in the host; never shown to scripts or in output)")
    .option("--llm-model <name>", "the model chat() asks")
    .option("--secure-output <file>", "append-only file (created 0600) that receives classified values printed, in plaintext")
    .option("--record <dir>", "append every executed script and its result to <dir>/tacit-record.jsonl (config: recordPath)")
    .option("--audit-log <file>", "append a signed, hash-chained log of every evaluation and action decision to <file> (config: auditLog); check it with tacit audit verify")
    .option("--require-network-namespace", "refuse to run (or check) where the sandbox (or type checker) cannot have a network namespace of its own (util-linux unshare --user --net), instead of warning and running with Deno's permission checks alone keeping scripts off the network (config: requireNetworkNamespace)")
    .option("--no-network-namespace", "run the sandbox, pure evaluator and type checker in the host's network namespace, knowingly: for a host that cannot make network namespaces (or has run out of them), where tacit would otherwise warn on every run; Deno's permission checks alone then keep scripts off the network (config: networkNamespace: false)")
    .option("--yes", "answer yes to every approval the config's policy asks for, for this run (never remembered)")
    .option("--quiet", "print no warnings")
    .addHelpText("after", EXIT_CODE_HELP);
}

function version(): string {
  return (JSON.parse(readFileSync(`${packageRoot}/package.json`, "utf8")) as { version: string }).version;
}

export function buildProgram(setExitCode: (code: number) => void, prestarted?: SandboxProcess): CommandType {
  const program = new Command("tacit")
    .description("Run AI-agent TypeScript against a capability library, in a Deno sandbox with no authority of its own.")
    .version(version(), "-V, --version")
    .showHelpAfterError("(run tacit --help for usage)")
    .addHelpText("after", EXIT_CODE_HELP);

  addScriptOptions(
    program.command("run").description("validate, type-check and run a script"),
    "print one JSON object: stdout, error, exitCode, durationMs, truncated",
  ).action(async (file: string, flags: CommonFlags, command: CommandType) => {
    // The config first, before anything is started: a config that fails (not JSON, an unknown
    // key, a wrong type, a root that does not exist) refuses at once, with no Deno booted and no
    // checker started for nothing; and what starts next starts with the config's limits. The
    // prestarted sandbox (cli/prestart.ts) exists only when no --config was given.
    const { checkSandboxNetwork, loadConfig } = await import("./load-config.js");
    const config = loadConfig(flags, command);
    checkSandboxNetwork(config);
    // Deno boots while the checks run and the rest of tacit loads: the type checker is a
    // separate process too, so the three overlap.
    const sandbox = prestarted ?? new SandboxProcess({ memoryLimitMb: config.memoryLimitMb });
    try {
      const script = await readScript(file);
      // A secret named as the script is refused before anything else has its text: the type
      // checker wrote it into a directory of its own and kept a digest of it in its cache, and its
      // messages quote the script's words. (The evaluation loads the same modules anyway.)
      (await import("./script-refusal.js")).refuseSecretScript(file, script.origin, config);
      // Its search thread boots while the checks run and the rest of tacit loads, not once the run has begun.
      if (mayRunRecursiveSearch(script.code)) prestartSearchThread();
      // The type checker (its own process, reading nothing but the script: see typeCheck) starts
      // first; the validator loads and runs meanwhile, and decides whether its answer counts.
      const { typeCheck, typeCheckCache } = await import("../runner/typecheck.js");
      const earlyTypes = config.typeCheck ? typeCheck(script.code, config.executionTimeoutMs, typeCheckCache(), config.memoryLimitMb) : null;
      earlyTypes?.catch(() => undefined);
      const { checkScript } = await import("../runner/checks.js");
      const precheck = {
        typeChecked: config.typeCheck,
        result: checkScript(script.code, script.displayName, config.typeCheck, earlyTypes ? () => earlyTypes : undefined),
      };
      precheck.result.catch(() => undefined); // awaited (and reported) by the evaluation
      const { runCommand } = await import("./commands.js");
      setExitCode(await runCommand(script, config, flags.json === true, sandbox, precheck));
    } finally {
      // Killed, not waited for: a sandbox leaves nothing behind to clean up (see SANDBOX_DENO_DIR).
      sandbox.kill("cancelled", "the command ended");
    }
  });

  addScriptOptions(
    program.command("check").description("validate and type-check a script without running it"),
    "print one JSON object: ok, errors, error, exitCode, durationMs",
  ).action(async (file: string, flags: CommonFlags, command: CommandType) => {
    const { checkCommand } = await import("./commands.js");
    setExitCode(await checkCommand(file, flags, command));
  });

  addPolicyOptions(
    program
      .command("serve")
      .description("an MCP server on stdio for any MCP client: execute_typescript, REPL sessions, show_interface")
      .option("--no-session", "hide the REPL session tools (config: sessionEnabled: false)")
      .addOption(
        new Option(
          "--sessions-memory-limit-mb <MiB>",
          "resident memory all REPL sessions' sandboxes may hold together, in MiB (default: a quarter of the machine's memory, at least --memory-limit-mb plus 256); past it a new session is refused and a snippet that grows its sandbox is stopped (config: sessionsMemoryLimitMb)",
        ).argParser(positiveInteger("--sessions-memory-limit-mb", MAX_SESSIONS_MEMORY_LIMIT_MB)),
      )
      .addOption(
        new Option(
          "--evaluators-memory-limit-mb <MiB>",
          "resident memory all pure evaluators (which run map/flatMap functions; one a REPL session, one an execute_typescript call) may hold together, in MiB (default: an eighth of the machine's memory, at least 512); past it idle evaluators are ended, then one holding more than its fair share (the budget over those running), else the one that grows, its value failing out of the script's sight (config: evaluatorsMemoryLimitMb)",
        ).argParser(positiveInteger("--evaluators-memory-limit-mb", MAX_SESSIONS_MEMORY_LIMIT_MB)),
      ),
  ).action(async (flags: CommonFlags, command: CommandType) => {
    const { serveCommand } = await import("./commands.js");
    setExitCode(await serveCommand(flags, command, version()));
  });

  addPolicyOptions(
    program
      .command("repl")
      .description("an interactive prompt: the same library and checks, with bindings kept between inputs"),
  ).action(async (flags: CommonFlags, command: CommandType) => {
    const { replCommand } = await import("./commands.js");
    setExitCode(await replCommand(flags, command));
  });

  program
    .command("interface")
    .description("print the capability API scripts are written against (a .d.ts)")
    .action(() => {
      process.stdout.write(readFileSync(interfacePath, "utf8"));
      setExitCode(EXIT_CODES.ok);
    });

  const approvals = program
    .command("approvals")
    .description("the remembered answers to approve-once questions (30 days; kept owner-only in $TACIT_HOME or ~/.config/tacit)");
  approvals
    .command("list")
    .description("print every remembered approval and when it expires")
    .option("--json", "print a JSON array")
    .action(async (flags: { json?: boolean }) => {
      const { listApprovals } = await import("./approvals.js");
      setExitCode(listApprovals(flags.json === true));
    });
  approvals
    .command("grant")
    .description("pre-approve patterns (as a refusal message names them) in this working directory, for unattended runs")
    .argument("<patterns...>", "canonical patterns, e.g. 'exec git push *'")
    .option("--in <dir>", "the working directory the approval holds in (default: this one)")
    .action(async (patterns: string[], flags: { in?: string }) => {
      const { approvalDirectory, grantApprovals } = await import("./approvals.js");
      setExitCode(grantApprovals(patterns, approvalDirectory(flags.in)));
    });
  approvals
    .command("revoke")
    .description("forget remembered approvals: the next time, a person is asked again")
    .argument("[patterns...]", "patterns as tacit approvals list prints them")
    .option("--all", "forget every approval")
    .option("--in <dir>", "only those holding in this working directory (default: in any)")
    .action(async (patterns: string[], flags: { all?: boolean; in?: string }) => {
      const { approvalDirectory, revokeApprovals } = await import("./approvals.js");
      setExitCode(revokeApprovals(patterns, flags.all === true, flags.in === undefined ? null : approvalDirectory(flags.in)));
    });

  const audit = program
    .command("audit")
    .description("the tamper-evident audit log written with --audit-log: verify it, show it, print the signing key");
  audit
    .command("verify")
    .description("check an audit log offline: edited, inserted, deleted or reordered lines, an unsigned tail, signatures (exit 0 verified, 1 problems)")
    .argument("<file>", "the audit log")
    .option("--public-key <hex>", "the Ed25519 public key heads must be signed with (default: this machine's, as `tacit audit key` prints it)")
    .option("--json", "print the report as one JSON object")
    .action(async (file: string, flags: { publicKey?: string; json?: boolean }) => {
      const { auditVerifyCommand } = await import("./audit.js");
      setExitCode(await auditVerifyCommand(file, flags));
    });
  audit
    .command("show")
    .description(
      "print an audit log readably, one line per event, after checking it as verify does: it says first whether it verified, " +
        "and marks each line no valid signed head covers (exit 0 verified, 1 not)",
    )
    .argument("<file>", "the audit log")
    .option("--public-key <hex>", "the Ed25519 public key heads must be signed with (default: this machine's, as `tacit audit key` prints it)")
    .option("--json", "print one JSON object: the verification's fields, then the lines, each with its line number and whether it is verified")
    .action(async (file: string, flags: { publicKey?: string; json?: boolean }) => {
      const { auditShowCommand } = await import("./audit.js");
      setExitCode(await auditShowCommand(file, flags));
    });
  audit
    .command("key")
    .description("print the public key audit logs are signed with (made on first use); the key's file goes to stderr")
    .action(async () => {
      const { auditKeyCommand } = await import("./audit.js");
      setExitCode(auditKeyCommand());
    });

  program.exitOverride();
  for (const command of program.commands) {
    command.exitOverride();
    checkOptionValues(command);
    for (const sub of command.commands) {
      sub.exitOverride();
      checkOptionValues(sub);
    }
  }
  return program;
}

/** The first write to stdout or stderr that failed other than for a reader gone (a full disk), or null. */
let outputFailure: { stream: "standard output" | "standard error"; message: string } | null = null;

function noteFailure(error: NodeJS.ErrnoException | null, name: "standard output" | "standard error"): void {
  if (error === null || error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED") return;
  outputFailure ??= { stream: name, message: error.message };
}

/**
 * A reader that closed its end (`| head`) ends our output, not the command. Any other failure
 * (ENOSPC, EIO) ends the output too, and the command fails for it (see exitCodeAfterOutput):
 * `tacit run s.ts > out.txt` on a full disk exited 0 with the output lost, or died with an
 * internal stack trace. A file's stream fails within write() and says so at once (`errored`),
 * but its error event comes a few ticks later, after the flush bin/tacit.js waits for, and
 * `errored` is cleared by then: each write is looked at as it returns.
 */
function watchOutput(stream: NodeJS.WriteStream, name: "standard output" | "standard error"): void {
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  /** Whether anything but nothing was written: the flush before the exit writes nothing, which /dev/full refuses too (a full disk does not). */
  let wroteSomething = false;
  stream.write = ((...args: unknown[]) => {
    const held = write(...args);
    const chunk = args[0];
    if ((typeof chunk === "string" || chunk instanceof Uint8Array) && chunk.length === 0) return held;
    wroteSomething = true;
    noteFailure(stream.errored as NodeJS.ErrnoException | null, name);
    return held;
  }) as typeof stream.write;
  stream.on("error", (error: NodeJS.ErrnoException) => {
    stream.destroy();
    if (wroteSomething) noteFailure(error, name);
  });
}

/**
 * The exit code of a command that ended with `code`, once its output was handed to the OS: a
 * success whose output could not be written is a failure (2), said on stderr where it still works.
 */
export function exitCodeAfterOutput(code: number): number {
  if (outputFailure === null) return code;
  if (outputFailure.stream !== "standard error" && !process.stderr.destroyed) {
    process.stderr.write(`tacit: cannot write to ${outputFailure.stream} (${outputFailure.message}): what was written after that is lost\n`);
  }
  return code === EXIT_CODES.ok ? EXIT_CODES.usage : code;
}

/**
 * The objects `tacit run --json` and `tacit check --json` print when they refused before running
 * or checking anything (a script file they cannot read, an unknown flag, a config error, an audit
 * log run cannot open): each of the shape of the command's other results, so that a pipeline
 * reading JSON gets JSON. The same words are on stderr (commander's own, for a flag). check's
 * `errors` lists what it found in the script: nothing, since it did not check it.
 */
const USAGE_ERROR_RESULTS = {
  run: (outcome: "usage" | "audit-log-failed", error: string): RunJsonResult => ({ stdout: "", error, exitCode: EXIT_CODES[outcome], durationMs: 0, truncated: false, outcome, warnings: [] }),
  check: (outcome: "usage" | "audit-log-failed", error: string): CheckJsonResult => ({ ok: false, errors: [], error, exitCode: EXIT_CODES[outcome], durationMs: 0 }),
};
type JsonCommandName = keyof typeof USAGE_ERROR_RESULTS;

/**
 * The command (run or check) whose --json the arguments ask for, or null, read as commander reads
 * them: not from its parse, since the error that ends tacit may have stopped commander before it
 * reached --json (a flag value its parser refused), but along the command's own flags table, so
 * that a flag that takes a value consumes the next word (`--config --json` names a config file
 * "--json"; scanning for the word misread it as the flag). Commander takes the command name from
 * the first word (an unknown flag before it is an error of the program's), reads flags anywhere
 * before `--`, also after a positional or an unknown flag, and reads `--name=value` as one flag.
 */
function jsonCommandOf(program: CommandType, argv: readonly string[]): JsonCommandName | null {
  const [name, ...args] = argv.slice(2);
  if (name !== "run" && name !== "check") return null;
  const command = program.commands.find((candidate) => candidate.name() === name);
  if (command === undefined) return null;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === "--") return null;
    const option = command.options.find((candidate) => candidate.long === arg || candidate.short === arg);
    if (option === undefined) continue;
    if (option.long === "--json") return name;
    // A value commander takes whatever it looks like; an optional one only when it is no flag.
    if (option.required || (option.optional && args[index + 1] !== undefined && !args[index + 1]!.startsWith("-"))) index++;
  }
  return null;
}

function printUsageErrorAsJson(command: JsonCommandName, outcome: "usage" | "audit-log-failed", error: string): void {
  writeShown(process.stdout, `${JSON.stringify(USAGE_ERROR_RESULTS[command](outcome, error))}\n`);
}

/** `prestarted`: a sandbox bin/tacit.js started from the raw arguments (see cli/prestart.ts). */
export async function main(argv: readonly string[], prestarted?: SandboxProcess): Promise<number> {
  watchOutput(process.stdout, "standard output");
  watchOutput(process.stderr, "standard error");
  // Ended by a signal, tacit still runs its exit hooks: sandboxes, checkers and their
  // temporary directories go with it (run, repl and serve end what is under way first: see stop-signals.ts).
  exitOnStopSignals();
  const homeProblem = tacitHomeSettingProblem();
  if (homeProblem !== null) {
    prestarted?.kill("cancelled", "the command did not run a script");
    process.stderr.write(`tacit: ${homeProblem}\n`);
    return EXIT_CODES.usage;
  }
  let exitCode: number = EXIT_CODES.ok;
  const program = buildProgram((code) => {
    exitCode = code;
  }, prestarted);
  try {
    await program.parseAsync(argv as string[]);
    return exitCode;
  } catch (error) {
    const json = jsonCommandOf(program, argv);
    if (error instanceof CommanderError) {
      // --help and --version end here too, successfully; commander has printed the message.
      if (error.exitCode === 0) return EXIT_CODES.ok;
      if (json !== null) printUsageErrorAsJson(json, "usage", `${error.message} (run tacit --help for usage)`);
      return EXIT_CODES.usage;
    }
    prestarted?.kill("cancelled", "the command did not run a script");
    const name = error instanceof Error ? error.name : "";
    if (name === "AuditLogError") {
      const said = `tacit: ${auditLogFailure((error as Error).message)}`;
      process.stderr.write(`${said}\n`);
      if (json !== null) printUsageErrorAsJson(json, "audit-log-failed", said);
      return EXIT_CODES.usage;
    }
    if (name === "ConfigError" || name === "UsageError" || name === "ApprovalStoreError" || name === "NamespaceUnavailableError" || name === "TacitHomeError") {
      const said = `tacit: ${(error as Error).message}`;
      process.stderr.write(`${said}\n`);
      if (json !== null) printUsageErrorAsJson(json, "usage", said);
      return EXIT_CODES.usage;
    }
    process.stderr.write(`tacit: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return EXIT_CODES.threw;
  }
}
