// Shared test helpers: drive the real CLI as a subprocess, or the runner's own API (for the
// attack tests that switch the validator off), always with a real Deno.

import { type ChildProcess, type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { expect, inject, onTestFinished, TestRunner } from "vitest";
import { randomUUID } from "node:crypto";
// Types only: the SDK's modules are loaded by connectServe, so that the many test files that never speak MCP do not pay
// for loading them (about a third of a second each).
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { RunnerConfig } from "../runner/config.js";
import type { EvaluationResult } from "../runner/evaluate.js";
import type { InputSource } from "../runner/monitor.js";
import type { Oversight } from "../runner/approval/gate.js";
import { tacitHome } from "../runner/tacit-home.js";
import { commandLineOf, descendantsOf, isRunning } from "./processes.js";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const tacitBin = path.join(repoRoot, "bin", "tacit.js");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Written to the CLI's stdin, then closed. Without it stdin is closed at once. */
  input?: string | Buffer;
  cwd?: string;
  env?: Record<string, string>;
  /** The Node that runs tacit; default: this one. */
  node?: string;
  /** The tacit command to run; default: this checkout's bin/tacit.js. */
  bin?: string;
}

/**
 * The environment for a tacit a test starts: this process's (which carries the test file's own
 * TACIT_HOME, test/file-home.ts) with `extra` over it. An MCP SDK transport given no `env` passes
 * on only HOME, PATH and a few more, so TACIT_HOME is lost: give it this. Throws where tacit's
 * home would be one of the real user's (test/suite-homes.ts), naming it: the run would change the
 * approvals, remembered files, audit key or type-check cache of the person running the tests.
 */
export function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  Object.assign(env, extra);
  // tacitHome as the child finds it: its os.homedir() reads the child's HOME (else the password database), not ours.
  const home = tacitHome({ ...env, XDG_CONFIG_HOME: env.XDG_CONFIG_HOME || path.join(env.HOME || userInfo().homedir, ".config") });
  if (inject("realTacitHomes").includes(home)) {
    throw new Error(
      `refused to start tacit with its home in ${home}, where runs of the person running the tests keep theirs: ` +
        "its approvals, remembered files, audit key and type-check cache would change. Leave TACIT_HOME as test/file-home.ts sets it, " +
        "or give the run a TACIT_HOME (or HOME, with TACIT_HOME and XDG_CONFIG_HOME empty) in a temp dir.",
    );
  }
  return env;
}

/** Runs `node bin/tacit.js …args` and collects everything. */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const child = spawn(options.node ?? process.execPath, [options.bin ?? tacitBin, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: childEnv(options.env),
    stdio: ["pipe", "pipe", "pipe"],
  });
  const result = collectedRun(child, options.input ?? "");
  endedWithItsTest(child);
  return result;
}

/** Gives a child spawned with three pipes `input` on its stdin, and collects its exit code, stdout and stderr. */
export function collectedRun(child: ChildProcessWithoutNullStreams, input: string | Buffer): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") }),
    );
    child.stdin.on("error", () => undefined);
    child.stdin.end(input);
  });
}

/** tacits started by tests that run concurrently, still running: ended with their file (test/file-home.ts). */
export const startedByConcurrentTests = new Set<ChildProcess>();

/**
 * A test that times out leaves its tacit running, busy, through the rest of the suite (a
 * deep-tree test that ran past its limit kept a core for minutes): it ends with the test. Not
 * where tests run concurrently: vitest's onTestFinished then registers on whichever test started
 * last, whose end would kill another test's tacit while it runs; those end with their file.
 */
function endedWithItsTest(child: ChildProcess): void {
  const current = TestRunner.getCurrentTest();
  if (current === undefined) return; // Outside a test (a hook, a script): nothing to end it with.
  if (current.concurrent === true) {
    startedByConcurrentTests.add(child);
    child.on("close", () => startedByConcurrentTests.delete(child));
    return;
  }
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
}

/**
 * `run` or `serve` arguments with the type check off, for the suites that test what the host
 * allows: the check is for the agent's benefit, not the boundary (DESIGN.md, security rule 5), so
 * what those suites prove must hold without it, and each run is spared the checker's CPU (about a
 * third of a small run's). test/cli, test/runner and test/mcp test the checks themselves.
 */
export function unchecked(args: string[]): string[] {
  const [command, ...rest] = args;
  if ((command !== "run" && command !== "serve") || rest.includes("--no-check")) return args;
  return [command, "--no-check", ...rest];
}

/** Runs a script given as text through `tacit run -`. */
export function runScript(code: string, extraArgs: string[] = [], options: CliOptions = {}): Promise<CliResult> {
  return runCli(["run", ...extraArgs, "-"], { ...options, input: code });
}

export interface BypassOptions {
  /** Also leave `Deno` reachable, so only the process permissions stand in the way. */
  keepRuntime?: boolean;
  config?: Partial<RunnerConfig>;
  /** The script's standard input: a text, or a source of the runner's own (one that never answers, say). */
  input?: string | InputSource;
  /** Who decides asked actions and keeps the audit log; none by default. */
  oversight?: Oversight;
}

/**
 * Runs code with the validator switched off, through the runner's API (never reachable
 * from the CLI or from a script). What is left is the sandbox boundary itself.
 */
export async function runBypassed(code: string, options: BypassOptions = {}): Promise<EvaluationResult> {
  // Imported here, not at the top: most test files never call this, and the runner's module
  // graph took each of them (vitest loads every file's modules afresh) most of a second to load.
  const [{ defaultConfig }, { evaluate }] = await Promise.all([import("../runner/config.js"), import("../runner/evaluate.js")]);
  return evaluate({
    code,
    displayName: "script.ts",
    config: { ...defaultConfig, typeCheck: false, ...options.config },
    input: inputOf(options.input),
    unsafeSkipValidation: true,
    unsafeKeepRuntime: options.keepRuntime ?? false,
    ...(options.oversight === undefined ? {} : { oversight: options.oversight }),
  });
}

function inputOf(input: BypassOptions["input"]): InputSource {
  if (input === undefined) return { kind: "unavailable", reason: "no input in this test" };
  if (typeof input === "string") return { kind: "piped", read: async () => input };
  return input;
}

/** A fresh temp directory (in `base`, the system's temp directory by default), removed by the returned cleanup. */
export function tempDir(prefix = "tacit-test-", base: string = tmpdir()): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(base, prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A tacit home not made yet (tacit makes it owner-only at its first use, as for a new user), in a
 * directory of its own in the suite's homes directory (test/suite-homes.ts: outside the temp
 * directory tests use as allowed roots), removed by the returned cleanup. Each test file has one
 * (test/file-home.ts); a test whose runs must not share theirs with the file's other tests, or
 * that looks at what its runs left there, takes another (tempDirWithHome).
 */
export function freshTacitHome(): { home: string; cleanup: () => void } {
  const { dir, cleanup } = tempDir("home-", inject("testHomesDir"));
  return { home: path.join(dir, "tacit"), cleanup };
}

/**
 * A fresh temp directory (its real path) and a tacit home of its own (freshTacitHome: not inside
 * the directory, which is often the runs' allowed root), both removed by `cleanup`. `env` gives a
 * run that home, and turns the type-check cache off unless `typeCheckCache` is set.
 */
export function tempDirWithHome(
  prefix: string,
  options: { typeCheckCache?: boolean } = {},
): { dir: string; home: string; env: Record<string, string>; cleanup: () => void } {
  const { dir, cleanup: removeDir } = tempDir(prefix);
  const { home, cleanup: removeHome } = freshTacitHome();
  const env: Record<string, string> = { TACIT_HOME: home, ...(options.typeCheckCache === true ? {} : { TACIT_TYPECHECK_CACHE: "off" }) };
  return {
    dir: realpathSync(dir),
    home,
    env,
    cleanup: () => {
      removeDir();
      removeHome();
    },
  };
}

/**
 * tempDirWithHome, and `elsewhere`: the environment of a run with a tacit home of its own (another
 * machine, a container, another TACIT_HOME), which remembers nothing of the first home's runs.
 * `cleanup` removes both homes and the directory.
 */
export function tempDirWithTwoHomes(prefix: string): ReturnType<typeof tempDirWithHome> & { elsewhere: Record<string, string> } {
  const first = tempDirWithHome(prefix);
  const other = freshTacitHome();
  return {
    ...first,
    elsewhere: { ...first.env, TACIT_HOME: other.home },
    cleanup: () => {
      first.cleanup();
      other.cleanup();
    },
  };
}

/**
 * Installs this build into `project` as npm would put a dependency there: node_modules/tacit
 * holding its package (bin, dist, library, package.json), its own dependencies linked to this
 * checkout's. Returns the installed package's directory.
 */
export function installTacitIn(project: string): string {
  const installed = path.join(project, "node_modules", "tacit");
  mkdirSync(installed, { recursive: true });
  for (const part of ["bin", "dist", "library", "package.json"]) cpSync(path.join(repoRoot, part), path.join(installed, part), { recursive: true });
  symlinkSync(path.join(repoRoot, "node_modules"), path.join(installed, "node_modules"));
  return installed;
}

/** A tool call's structured result (runner/mcp-server.ts declares it as the tools' outputSchema). */
export interface ToolResult {
  stdout: string;
  error: string | null;
  exitCode: number;
  durationMs: number;
  truncated: boolean;
  warnings: string[];
}

/**
 * What a model reads of a run's answer: its two text items, the script's output (after the
 * first line that says it is the script's) and tacit's report (its exit line first).
 */
export function answerTexts(response: Awaited<ReturnType<Client["callTool"]>>): { output: string; report: string } {
  const content = response.content as Array<{ type: string; text: string }>;
  const [outputItem, reportItem] = content;
  if (content.length !== 2 || outputItem?.type !== "text" || reportItem?.type !== "text") throw new Error(`expected two text items, got ${JSON.stringify(content).slice(0, 2000)}`);
  const header = /^\[the script's output, as printed; tacit's own lines are in the next item(?:\]\n|: nothing printed\]$)/.exec(outputItem.text);
  if (header === null) throw new Error(`the first item does not start with the script-output line: ${outputItem.text.slice(0, 200)}`);
  return { output: outputItem.text.slice(header[0].length), report: reportItem.text };
}

/** A new REPL session on `client`'s server: its id. */
/**
 * The text of `file` once `holds` says it is complete, or as it is after `limitMs` (then the
 * caller's assertion fails and shows it). A session's snippet answers before the classified work
 * it left is done (its secure output, its classified writes: see SessionState.pending in
 * runner/evaluate.ts), so what it wrote there may land after the answer.
 */
export async function fileOnce(file: string, holds: (text: string) => boolean, limitMs = 30_000): Promise<string> {
  const read = (): string => {
    try {
      return readFileSync(file, "utf8");
    } catch {
      return "";
    }
  };
  const deadline = Date.now() + limitMs;
  let text = read();
  while (!holds(text) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    text = read();
  }
  return text;
}

export async function createSession(client: Client): Promise<string> {
  const response = await client.callTool({ name: "create_repl_session", arguments: {} });
  return (response.structuredContent as { session_id: string }).session_id;
}

/** Runs `code` in `session` and gives its structured result; `timeoutMs` is the client's own wait for the answer. */
export async function runInSession(client: Client, session: string, code: string, timeoutMs?: number): Promise<ToolResult> {
  const options = timeoutMs === undefined ? undefined : { timeout: timeoutMs };
  const response = await client.callTool({ name: "execute_in_session", arguments: { session_id: session, code } }, undefined, options);
  return response.structuredContent as unknown as ToolResult;
}

export interface ServeOptions {
  /** Added to the environment tacit serve runs with. */
  env?: Record<string, string>;
  /** Gets what tacit serve writes to stderr (ignored without it). */
  onStderr?: (text: string) => void;
  /** The client declares elicitation, and this answers each question tacit serve asks its user. */
  onElicit?: (request: ElicitRequest, extra: { signal: AbortSignal }) => ElicitResult | Promise<ElicitResult>;
  /** The Node that runs tacit (or a program that runs it); default: this one. */
  node?: string;
}

/** An MCP SDK client connected to a real `tacit serve` started with `args` in `cwd`. */
export async function connectServe(args: string[], cwd: string, options: ServeOptions = {}): Promise<Client> {
  return (await connectServeProcess(args, cwd, options)).client;
}

/** connectServe's client, and the pid of the `tacit serve` it started (for tests that read its processes in /proc). */
export async function connectServeProcess(args: string[], cwd: string, options: ServeOptions = {}): Promise<{ client: Client; pid: number }> {
  const [{ Client: McpClient }, { StdioClientTransport }, { ElicitRequestSchema }] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/stdio.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  const transport = new StdioClientTransport({
    command: options.node ?? process.execPath,
    args: [tacitBin, "serve", ...args],
    cwd,
    stderr: options.onStderr ? "pipe" : "ignore",
    env: childEnv(options.env),
  });
  const onStderr = options.onStderr;
  if (onStderr) transport.stderr?.on("data", (chunk: Buffer) => onStderr(chunk.toString()));
  const onElicit = options.onElicit;
  const client = new McpClient({ name: "tacit-test", version: "0.0.0" }, onElicit ? { capabilities: { elicitation: {} } } : {});
  if (onElicit) client.setRequestHandler(ElicitRequestSchema, async (request, extra) => onElicit(request, extra));
  await client.connect(transport);
  return { client, pid: transport.pid! };
}

/** A tacit serve with a small heap, in a temp dir of its own: what the floods that could kill a server are tested against. */
export interface SmallHeapServe {
  dir: string;
  client: Client;
  /** What the server wrote to stderr so far (for failure messages). */
  stderr(): string;
  close(): Promise<void>;
}

/**
 * A real tacit serve with a small heap (--max-old-space-size=`heapMb`, 250 MB unless given)
 * started in a new temp dir named by `prefix`, after `prepare` has filled it. A flood that dies
 * at this heap dies at the default one too, only later and slower; a smaller heap lets a test
 * show it with less data.
 */
export async function smallHeapServe(
  prefix: string,
  args: string[],
  prepare: (dir: string) => void = () => undefined,
  heapMb = 250,
): Promise<SmallHeapServe> {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  prepare(dir);
  let stderr = "";
  const client = await connectServe(args, dir, { env: { NODE_OPTIONS: `--max-old-space-size=${heapMb}` }, onStderr: (text) => (stderr += text) });
  return {
    dir,
    client,
    stderr: () => stderr,
    close: async () => {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A script that type-checks for many seconds (about one per copy: a template literal type of
 * 10,000 members inferred apart); names unique per call.
 */
export function slowToCheck(copies: number): string {
  const tag = randomUUID().replace(/-/g, "");
  let code = "";
  for (let i = 0; i < copies; i++) {
    const d = `D${i}_${tag}`;
    code += `type ${d} = "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "q${i}";\n`;
    code += `type Ex${i}_${tag}<T> = T extends \`\${infer A}\${infer B}\${infer C}\${infer E}\` ? [A, B, C, E] : never;\n`;
    code += `const r${i}: Ex${i}_${tag}<\`\${${d}}\${${d}}\${${d}}\${${d}}\`> = ["0", "0", "0", "0"];\nprintln(r${i});\n`;
  }
  return code;
}

/** What `run` gave, and every process this test process started, directly or below, while it ran. */
export interface ProcessesSeen<T> {
  result: T;
  /** Pids seen (polled every 20 ms) while `run` ran, with their command lines as last seen. */
  seen: Map<number, string>;
}

/**
 * Runs `run` and watches this test process's descendants meanwhile (tacit run, tacit serve, their
 * Deno sandboxes, the commands they start). With `expectNoneLeft` it is the clock-free proof that
 * a run that was "killed" really ended: whatever it started is gone once it answered, instead of
 * "it answered within N ms" (which a loaded machine breaks, and a process left spinning passes).
 */
export async function watchProcesses<T>(run: (seen: ReadonlyMap<number, string>) => Promise<T>): Promise<ProcessesSeen<T>> {
  const before = new Set(descendantsOf(process.pid));
  const seen = new Map<number, string>();
  const look = (): void => {
    // Read again each time: a child seen between its fork and its exec still has its parent's.
    for (const pid of descendantsOf(process.pid)) {
      const line = commandLineOf(pid).replace(/\0/g, " ");
      if (!before.has(pid) && (line !== "" || !seen.has(pid))) seen.set(pid, line);
    }
  };
  const poll = setInterval(look, 20);
  try {
    look();
    return { result: await run(seen), seen };
  } finally {
    clearInterval(poll);
  }
}

/**
 * Asserts that some process whose command line holds `needle` was seen (else the watch saw nothing,
 * which proves nothing) and that none of those seen is still running.
 */
export function expectNoneLeft(seen: Map<number, string>, needle: string): void {
  const matching = [...seen].filter(([, line]) => line.includes(needle));
  expect(matching.length, `no process with ${JSON.stringify(needle)} was seen (seen: ${JSON.stringify([...seen.values()])})`).toBeGreaterThan(0);
  const left = [...seen].filter(([pid]) => isRunning(pid)).map(([pid, line]) => `${pid} ${line.slice(0, 200)}`);
  expect(left, "processes of this run still running after it answered").toEqual([]);
}
