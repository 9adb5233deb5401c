// Shared pieces of the approvals suite: a temp world per test (a working directory that is
// the default allowed root, a TACIT_HOME of its own — never ~/.config — and a config file),
// the real CLI run either with no controlling terminal at all (its own session, so
// /dev/tty cannot be opened) or inside a pseudo-terminal from `script`, where the test
// answers each "Allow? [y/N]" it sees on the terminal.

import { spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { answerTexts, connectServe, type ServeOptions, tacitBin, unchecked } from "../helpers.js";

import { lit } from "../files/fixtures.js";
export { lit };
export { startServer, type TestServer, withServer } from "../net/fixtures.js";

/** The text the terminal asker ends its question with. */
export const PROMPT = "Allow? [y/N] ";

export interface World {
  /** The temp dir holding everything below (removed after the test). */
  root: string;
  /** The working directory of each run: the default allowed root. */
  work: string;
  /** TACIT_HOME: approvals.json and the audit key live here. */
  home: string;
  /** approvals.json in `home`. */
  approvalsFile: string;
  /** Writes `{ policy: { rules }, ...extra }` as the config file; returns its path. */
  config(rules: unknown[], extra?: Record<string, unknown>): string;
  /** Writes a file (parents made) under `work` and returns its absolute path. */
  file(name: string, content?: string): string;
  /** Writes the script to `work/<name>` and returns its path. */
  script(code: string, name?: string): string;
  /** Path under `work`. */
  at(name: string): string;
  exists(name: string): boolean;
  env: Record<string, string>;
}

/**
 * Call once at the top of a test file: `const world = worlds();` then `world()` in each test.
 * Worlds are removed after each test; with `{ concurrent: true }` (a file whose tests run
 * concurrently) after the file instead: a test's afterEach would remove the worlds of tests still running.
 */
export function worlds(prefix = "tacit-approval-", options: { concurrent?: boolean } = {}): () => World {
  const cleanups: Array<() => void> = [];
  (options.concurrent === true ? afterAll : afterEach)(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });
  return () => {
    const { dir, cleanup } = realTempDir(prefix);
    cleanups.push(cleanup);
    return makeWorld(dir);
  };
}

export function makeWorld(root: string): World {
  const work = path.join(root, "work");
  const home = path.join(root, "home");
  mkdirSync(work);
  const at = (name: string): string => path.join(work, name);
  const world: World = {
    root,
    work,
    home,
    approvalsFile: path.join(home, "approvals.json"),
    config(rules, extra = {}) {
      const file = path.join(root, "tacit.json");
      writeFileSync(file, JSON.stringify({ policy: { rules }, ...extra }, null, 2));
      return file;
    },
    file(name, content = "keep me\n") {
      const target = at(name);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, content);
      return target;
    },
    script(code, name = "s.ts") {
      const target = path.join(work, name);
      writeFileSync(target, code);
      return target;
    },
    at,
    exists: (name) => existsSync(at(name)),
    env: { TACIT_HOME: home },
  };
  return world;
}

export interface Run {
  code: number | null;
  /** stdout (terminal runs: everything the terminal showed, stdout and stderr, "\r" removed). */
  stdout: string;
  /** stderr ("" for terminal runs: it went to the terminal). */
  stderr: string;
  /** How many times "Allow? [y/N]" appeared. */
  prompts: number;
  /** stdout + stderr, for messages that may be on either. */
  all: string;
}

function collect(child: ReturnType<typeof spawn>, onStdout?: (text: string) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8");
    child.stderr!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => {
      stdout += chunk;
      onStdout?.(stdout);
    });
    child.stderr!.on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * `tacit …args` with no controlling terminal: the child starts its own session (setsid), so
 * opening /dev/tty fails whatever terminal the test runner has. stdin is closed at once.
 */
export async function unattended(world: World, args: string[], extraEnv: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [tacitBin, ...unchecked(args)], {
    cwd: world.work,
    env: { ...process.env, ...world.env, ...extraEnv },
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  child.stdin!.on("error", () => undefined);
  child.stdin!.end();
  const { code, stdout, stderr } = await collect(child);
  return { code, stdout, stderr, prompts: count(stdout + stderr, PROMPT.trim()), all: stdout + stderr };
}

const shellQuote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

export interface TerminalOptions {
  /**
   * Typed (with Enter) at each prompt, in order; a prompt beyond them is answered with Enter (no).
   * A function is given what the terminal has shown so far.
   */
  answers: Array<string | ((shown: string) => string)>;
  /** How long the "person" takes before typing each answer. */
  thinkMs?: number;
  extraEnv?: Record<string, string>;
  /**
   * Typed once when `after` appears (before any question): a person answering something the
   * script printed. `echoed` runs once the terminal has echoed it, i.e. it is in the input.
   */
  typeAhead?: { after: string; text: string; echoed: () => void };
  /**
   * Done instead of typing an answer when a question appears (given the pid of the terminal's
   * process, `script`): the run must then end without one, and is killed after 30 s if not.
   */
  instead?: (terminalPid: number) => void;
  /** The run's stdout goes through `| cat` to the terminal, as in `tacit run s.ts | tee out.log`. */
  stdoutPiped?: boolean;
  /** What counts as a question to answer (default "Allow? [y/N]"). */
  prompt?: string;
  /** The terminal's size (`stty rows … cols …` before the run); default: as `script` makes it (0×0, which tacit takes for 80×24). */
  size?: { rows: number; columns: number };
}

/**
 * `tacit …args` inside a pseudo-terminal (`script -qec CMD /dev/null`): the terminal is the
 * child's controlling terminal, and the test types an answer each time the question appears.
 */
/**
 * A terminal run: `stdout` reads a question's lines whole, as a person reads its rows (tacit breaks a
 * long line into rows itself, each continued one starting with "↪ "); `written` is what the terminal
 * was given ("\r" removed).
 */
export async function onTerminal(world: World, args: string[], options: TerminalOptions): Promise<Run & { written: string }> {
  const sized = options.size === undefined ? "" : `stty rows ${options.size.rows} cols ${options.size.columns} && `;
  const command = sized + [process.execPath, tacitBin, ...unchecked(args)].map(shellQuote).join(" ") + (options.stdoutPiped ? " | cat" : "");
  const prompt = options.prompt ?? PROMPT.trim();
  const child = spawn("script", ["-qec", command, "/dev/null"], {
    cwd: world.work,
    env: { ...process.env, ...world.env, ...options.extraEnv },
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  child.stdin!.on("error", () => undefined);
  const answers = [...options.answers];
  let answered = 0;
  const timers: NodeJS.Timeout[] = [];
  const typeAhead = options.typeAhead;
  let typedAt = -1;
  let echoed = false;
  const { code, stdout, stderr } = await collect(child, (shown) => {
    if (typeAhead !== undefined && typedAt === -1 && shown.includes(typeAhead.after)) {
      typedAt = shown.indexOf(typeAhead.after) + typeAhead.after.length;
      child.stdin!.write(typeAhead.text);
    }
    if (typeAhead !== undefined && typedAt !== -1 && !echoed && shown.slice(typedAt).includes(typeAhead.text.trim())) {
      echoed = true;
      typeAhead.echoed();
    }
    const asked = count(shown, prompt);
    while (answered < asked) {
      answered++;
      if (options.instead) {
        options.instead(child.pid!);
        timers.push(setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 30_000));
        continue;
      }
      const next = answers.shift() ?? "";
      const answer = typeof next === "function" ? next(shown) : next;
      timers.push(setTimeout(() => child.stdin!.write(`${answer}\n`), options.thinkMs ?? 0));
    }
  });
  for (const timer of timers) clearTimeout(timer);
  const shown = stdout.replace(/\r/g, "");
  const read = shown.replace(/\n\u21aa /g, "");
  return { code, stdout: read, stderr, prompts: count(read, prompt), all: read + stderr, written: shown };
}

function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/**
 * An HTTP server on [::1] at a port of at most four digits, so that "::1:PORT" is an address too
 * (a group holds four hex digits): what it was asked for, and its port. Closed by `close`.
 */
export async function v6LoopbackServer(): Promise<{ port: number; received: string[]; close: () => Promise<void> }> {
  const received: string[] = [];
  const server = http.createServer((request, response) => {
    received.push(request.url ?? "");
    response.end("v6");
  });
  for (let tries = 0; server.address() === null; tries++) {
    const wanted = 2000 + Math.floor(Math.random() * 7999);
    await new Promise<void>((resolve) => {
      server.once("error", () => resolve());
      server.listen(wanted, "::1", () => resolve());
    });
    if (tries > 50) throw new Error("no free port below 10000 on ::1");
  }
  const { port } = server.address() as AddressInfo;
  return { port, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** `tacit approvals …` (no terminal needed). */
export function approvals(world: World, args: string[]): Promise<Run> {
  return unattended(world, ["approvals", ...args]);
}

export interface StoredApproval {
  pattern: string;
  /** Where it holds: the world's working directory unless given. */
  directory?: string;
  grantedAt: string;
  expiresAt: string;
  via: string;
}

/** approvals.json as written, or null when absent. */
export function storedApprovals(world: World): StoredApproval[] | null {
  if (!existsSync(world.approvalsFile)) return null;
  return (JSON.parse(readFileSync(world.approvalsFile, "utf8")) as { approvals: StoredApproval[] }).approvals;
}

/** Writes approvals.json directly (owner-only unless `mode` says otherwise). */
export function writeApprovals(world: World, entries: StoredApproval[], mode = 0o600): void {
  mkdirSync(world.home, { recursive: true, mode: 0o700 });
  const approvals = entries.map((entry) => ({ ...entry, directory: entry.directory ?? realpathSync.native(world.work) }));
  writeFileSync(world.approvalsFile, JSON.stringify({ version: 1, approvals }, null, 2), { mode });
  chmodSync(world.approvalsFile, mode);
}

/** A script that deletes `name` in the working directory and says so. */
/** A script that runs `command file` in an exec scope, then prints "ran". */
export const touchScript = (command: string, file: string): string =>
  `requestExecPermission([${lit(command)}], (p) => p.exec(${lit(command)}, [${lit(file)}]));\nprintln("ran");\n`;

export const deleteScript = (name: string): string =>
  `requestFileSystem(".", (fs) => { fs.access(${JSON.stringify(name)}).delete(); });\nprintln("deleted");\n`;

/** An MCP client connected to `tacit serve <args>` in `world` (its working directory, its own TACIT_HOME). */
export function serveWorld(world: World, args: string[], options: Omit<ServeOptions, "env"> = {}): Promise<Client> {
  return connectServe(unchecked(["serve", ...args]).slice(1), world.work, { ...options, env: { TACIT_HOME: world.home } });
}

/** The text of what an execute_typescript call of `code` answered. */
export async function executeText(client: Client, code: string): Promise<string> {
  const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
  return (response.content as Array<{ text: string }>).map((c) => c.text).join("\n");
}

/** The error an execute_typescript call of `code` ended with, as tacit's report shows it (after its exit line). */
export async function executeShownError(client: Client, code: string): Promise<string> {
  const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
  return answerTexts(response).report.split("\n").slice(1).join("\n");
}

/**
 * An elicitation message with the rows a long line was broken into (each continued one starting
 * "↪ ", see elicitation.ts) joined again: the lines of the question, for checks on what it shows
 * (a canary split between two rows is still found).
 */
export function joinedRows(message: string): string {
  const lines: string[] = [];
  for (const row of message.split("\n")) {
    if (row.startsWith("\u21aa ") && lines.length > 0) lines[lines.length - 1] += row.slice(2);
    else lines.push(row);
  }
  return lines.join("\n");
}

/**
 * A tacit serve for `world` whose person answers each question with `approves(message, n)` (n:
 * its number, from 1); `questions` holds what was asked, in order (messages as joinedRows gives them).
 */
export async function serveAsking(
  world: World,
  args: string[],
  approves: (message: string, asked: number) => boolean,
): Promise<{ client: Client; questions: string[] }> {
  const questions: string[] = [];
  const client = await serveWorld(world, args, {
    onElicit: (request) => {
      const message = joinedRows((request.params as { message: string }).message);
      questions.push(message);
      return { action: "accept", content: { approve: approves(message, questions.length) } };
    },
  });
  return { client, questions };
}

/**
 * A tacit serve for `world` whose person, shown a question, lets the agent's other call run
 * `swapCode` first (an agent's parallel tool call that swaps what was asked about while the
 * person reads), then says yes. `questions` holds what was asked; `swapOutput()` what the
 * swapping call answered.
 */
export async function serveSwappingWhileAsked(
  world: World,
  config: string,
  swapCode: string,
): Promise<{ client: Client; questions: string[]; swapOutput: () => string }> {
  const questions: string[] = [];
  let swap = "";
  const client: Client = await serveWorld(world, ["--config", config, "--exec-timeout-ms", "10000"], {
    onElicit: async (request) => {
      questions.push(joinedRows((request.params as { message: string }).message));
      const other = await client.callTool({ name: "execute_typescript", arguments: { code: swapCode } });
      swap = (other.content as Array<{ text: string }>).map((c) => c.text).join("");
      return { action: "accept", content: { approve: true } };
    },
  });
  return { client, questions, swapOutput: () => swap };
}
