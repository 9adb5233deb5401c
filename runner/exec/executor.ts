// The command executor: runs what requestExecPermission scopes allow, after the policy
// allows it too. No shell: the program (found on the host's own PATH) gets argv as given.
// Each child runs in its own process group and, where the host allows, its own PID namespace
// (see pid-namespace.ts), with a minimal environment; it is killed with everything it started
// at its timeout or when the evaluation ends.

import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, constants, openSync, realpathSync, statSync } from "node:fs";
import { isUtf8 } from "node:buffer";
import { constants as osConstants } from "node:os";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import type { ProcessResult } from "../../library/protocol.js";
import type { CommandProgress } from "../audit/events.js";
import type { CapabilityTable } from "../capabilities.js";
import { cleanUpAtExit } from "../exit-cleanup.js";
import { diesWithTacit } from "../parent-death.js";
import { DEFAULT_EXEC_OUTPUT_LIMIT_BYTES, EXEC_WORDS_LIMIT_CHARS, MAX_TIMER_MS, wordsChars } from "../limits.js";
import { checkablePath, O_PATH_FLAG, UncheckablePlaceError } from "../fs/checked-open.js";
import { isWithin } from "../fs/containment.js";
import { allowedRootsBounds, nowLeadsText } from "../fs/moved-place.js";
import { type ProtectedPath, protectedPathOf } from "../fs/protected-paths.js";
import { HostSecrets } from "../host-secrets.js";
import { EffectFailure, markRanOutOfTime, PolicyDenial } from "../refusals.js";
import { type BeforeEffect, NOTHING_TO_LOG } from "../before-effect.js";
import { wholeCharacters } from "../whole-characters.js";
import { CollectedBytes } from "../collected-bytes.js";
import { type CommandPolicy, commandRefusal } from "./command-policy.js";
import { type CommandConfinement, CONFINED_LIFELINE_FD, confinedCommandRunning, RootsChangedDuringSetup, SETUP_ATTEMPTS, setupFailure } from "./confinement.js";
import { answerLifeline } from "./lifeline.js";
import { behindLifeline, COMMAND_LIFELINE_FD, namespaceWrapper } from "./pid-namespace.js";
import { findOnPath } from "./program-path.js";

export { findOnPath };

// Each said once per process, when the probe finds out (see pid-namespace.ts). A command that sees
// tacit's process reads its memory as any process of the same user may (tacit, in Node, cannot make
// itself undumpable): shown through the CLI as a non-root user without unshare, a permitted python3
// read the LLM key and a classified value out of /proc/<tacit's pid>/mem. The warnings say so.
const NAMESPACE_NOTICES = {
  onUnavailable(reason: string): void {
    process.stderr.write(
      `tacit: warning: commands run without a PID namespace (${reason}); a command that leaves its process group with setsid ` +
        "can outlive its timeout, and commands see every process of the user, with its environment (ps eww, /proc/PID/environ), " +
        "and can read tacit's own memory (/proc/PID/mem), which holds the LLM key and the plaintext of classified values. " +
        "To contain them, run tacit where util-linux `unshare` may create PID namespaces: as root, or with " +
        "unprivileged user namespaces allowed (in a container, one allowed to call unshare)\n",
    );
  },
  onSharedProc(reason: string): void {
    process.stderr.write(
      `tacit: warning: commands run in a PID namespace but with the host's /proc (${reason}); they can see every process of ` +
        "the user, with its command line and environment (ps eww, /proc/PID/environ), and can read tacit's own memory " +
        "(/proc/PID/mem), which holds the LLM key and the plaintext of classified values. To hide them, run " +
        "tacit where util-linux `unshare --mount-proc` works: as root, or with unprivileged user namespaces allowed\n",
    );
  },
};

export const DEFAULT_EXEC_TIMEOUT_MS = 30_000;

const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/**
 * The PATH a command gets: tacit's own, less its relative and empty entries (an empty one means
 * the working directory). tacit finds a command's program on absolute entries only (see
 * program-path.ts), but a command that runs others by name (make, git's hooks and aliases, npm
 * scripts, a shell) looked in them too, so "." or "node_modules/.bin" on tacit's PATH let a
 * file in the project, which a script can write, stand in for a program that command runs.
 */
function absolutePath(path: string | undefined): string {
  const entries = (path ?? DEFAULT_PATH).split(":").filter((entry) => entry.startsWith("/"));
  return entries.length > 0 ? entries.join(":") : DEFAULT_PATH;
}

/** What a child gets of the host's environment: enough to run, no secrets, no LD_*. */
export function childEnvironment(host: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = { PATH: absolutePath(host.PATH), LANG: "C.UTF-8", TERM: "dumb" };
  if (host.HOME) env.HOME = host.HOME;
  return env;
}

/**
 * Collects one output stream up to the limit; the rest is drained and dropped, but for the
 * first bytes past the cut, which say whether a host secret (the LLM key) crosses it. Every
 * reply masks a whole key, not a piece: cut inside one, `cat pad.txt key.txt` showed the key up
 * to the cut, and a script that wrote pads of other lengths read it all but its last character
 * (then one guess in a few dozen away, since a whole key read back is masked).
 */
class CappedOutput {
  /**
   * Kept in one growing buffer, not as the chunks the pipe gave: a command that writes a byte at
   * a time (a loop of printf, a program's unbuffered writes) handed tacit as many tiny chunks,
   * each an object of its own: 8 MiB written that way peaked the host at 379 MB against 105 MB
   * for the same written at once, and a host started with a 128 MB heap ran out of it (see CollectedBytes).
   */
  private readonly kept: CollectedBytes;
  /** Bytes past the cut, up to the host secrets' margin. */
  private readonly after: CollectedBytes;
  truncated = false;

  constructor(
    private readonly hostSecrets: HostSecrets,
    /** "stdout" or "stderr", for the marker of output that is not UTF-8. */
    private readonly stream: "stdout" | "stderr",
    private readonly limitBytes: number = DEFAULT_EXEC_OUTPUT_LIMIT_BYTES,
  ) {
    this.kept = new CollectedBytes(limitBytes);
    this.after = new CollectedBytes(hostSecrets.margin);
  }

  add(chunk: Buffer): void {
    const room = this.limitBytes - this.kept.size;
    if (chunk.length <= room) {
      this.kept.append(chunk);
      return;
    }
    this.truncated = true;
    this.kept.append(chunk.subarray(0, room));
    this.after.append(chunk.subarray(room));
  }

  text(): string {
    const all = this.kept.bytes();
    if (!this.truncated) return all.toString("utf8") + this.notUtf8Marker(all);
    // A secret crossing the cut is starred in what is kept (a whole one is masked in the reply),
    // and a character the cut split is left out (it would read as U+FFFD).
    const kept = wholeCharacters(this.hostSecrets.scrubChunk(all, Buffer.alloc(0), this.after.bytes()));
    return `${kept.toString("utf8")}${this.notUtf8Marker(kept)}\n[tacit: output truncated at ${this.limitBytes} bytes; the rest was discarded]\n`;
  }

  /**
   * Output is read as UTF-8, and what is not UTF-8 becomes U+FFFD: the command's bytes are lost
   * there. Said at the end, as a cut is, rather than silently (a Latin-1 file name, a binary).
   */
  private notUtf8Marker(bytes: Buffer): string {
    if (isUtf8(bytes)) return "";
    return (
      `\n[tacit: ${this.stream} was not valid UTF-8; bytes that could not be read as UTF-8 are shown as \uFFFD. For text, have the command write UTF-8 ` +
      "(an option of its own, or iconv); for its bytes, have it write them to a file in the roots and read that with readBytes()]\n"
    );
  }
}

export interface ExecRequest {
  command: string;
  args: readonly string[];
  cwd: string | null;
  timeoutMs: number | null;
  input: string | null;
}

export class ExecExecutor {
  private readonly running = new Set<ChildProcess>();
  /** Children tacit killed (a cancellation, the end of the evaluation) before they exited: see progressOf. */
  private readonly killed = new WeakSet<ChildProcess>();
  /** How far each command got (see progressOf). */
  private readonly progress = new WeakMap<ExecRequest, CommandProgress>();

  constructor(
    private readonly policy: CommandPolicy,
    private readonly allowedRoots: readonly string[],
    private readonly capabilities: CapabilityTable,
    private readonly workingDirectory: string,
    signal: AbortSignal,
    /** Commands a person allowed for this run beyond the policy (a live set: see RunGrants). */
    private readonly grantedCommands: ReadonlySet<string> = new Set(),
    /** tacit's own files (see fs/protected-paths.ts): no command runs inside them. */
    private readonly protectedPaths: readonly ProtectedPath[] = [],
    /** The host's own secrets: a command's output cut inside one is masked there too (see CappedOutput). */
    private readonly hostSecrets: HostSecrets = new HostSecrets([]),
    /** --confine-commands: each command runs in a confined view of the file system (see confinement.ts); null: with the user's full authority. */
    private readonly confinement: CommandConfinement | null = null,
    /** How much of each of a command's streams its result keeps (libraryConfig.execOutputLimitBytes). */
    private readonly outputLimitBytes: number = DEFAULT_EXEC_OUTPUT_LIMIT_BYTES,
  ) {
    signal.addEventListener("abort", () => this.killAll(), { once: true });
  }

  /** Where the approval gate found the working directory of the command it has run now (see judged()). */
  private judgedCwd: string | null = null;

  /**
   * A person was asked about (or had said yes to) the next command as running in `real`, its
   * working directory as it led then (null once that command has started). It runs there or
   * not at all: resolved again and handed to the child as a path, a directory the agent's
   * concurrent call swapped for a link meanwhile had the command run where nobody said yes.
   */
  judged(real: string | null): void {
    this.judgedCwd = real;
  }

  /** The policy's refusal (of the command, or of how `args` use it), unless a person allowed the command for this run. */
  private refusal(command: string, args: readonly string[] = []): string | null {
    return this.grantedCommands.has(command) ? null : commandRefusal(command, this.policy, args);
  }

  openScope(commands: readonly string[]): { scope: string } {
    if (commands.length === 0) throw new EffectFailure("requestExecPermission(commands, …): name at least one command");
    for (const command of commands) {
      const refusal = this.refusal(command);
      if (refusal) throw new PolicyDenial(`requestExecPermission: ${refusal}`);
    }
    return { scope: this.capabilities.issue({ kind: "exec", commands: new Set(commands) }) };
  }

  private resolveCwd(requested: string | null): string {
    const named = path.resolve(this.workingDirectory, requested ?? ".");
    let real: string;
    try {
      real = realpathSync.native(named);
      if (!statSync(real).isDirectory()) throw new Error("not a directory");
    } catch {
      throw new EffectFailure(`exec: cwd ${named} is not an existing directory`);
    }
    if (!this.allowedRoots.some((root) => isWithin(real, root))) {
      throw new PolicyDenial(
        `exec: cwd ${named} is outside the allowed roots (${this.allowedRoots.join(", ")}); pass a cwd inside one of them, or have the operator add it with --allowed-roots`,
      );
    }
    // tacit's own code is no place a command is kept from: an allowed command can change it from anywhere.
    const own = protectedPathOf(this.protectedPaths, named, real, "read");
    if (own) throw new PolicyDenial(`exec: cwd ${named} is ${own.what}; ${own.refusal ? "commands do not run there; pass another cwd" : "it belongs to tacit, and commands do not run there"}`);
    return real;
  }

  /** The checks before anything runs (scope, policy); throws the refusal. The approval gate asks only after these pass. */
  authorize(token: string, request: Pick<ExecRequest, "command" | "args">): void {
    const scope = this.capabilities.get(token, "exec");
    // The policy first: its message says what to do about a path given as a command.
    const refusal = this.refusal(request.command, request.args);
    if (refusal) throw new PolicyDenial(`exec: ${refusal}`);
    if (!scope.commands.has(request.command)) {
      throw new PolicyDenial(
        `exec("${request.command}"): not among the commands this requestExecPermission scope asked for (${[...scope.commands].join(", ")}); ask for it in the list`,
      );
    }
  }

  /** How far `request` got, for the audit log (see CommandProgress): read once its dispatch has settled. */
  progressOf(request: ExecRequest): CommandProgress {
    return this.progress.get(request) ?? "not-started";
  }

  /** `beforeEffect`: told once every check has passed, before the command is started (see BeforeEffect). */
  async exec(token: string, request: ExecRequest, beforeEffect: BeforeEffect = NOTHING_TO_LOG): Promise<ProcessResult> {
    this.authorize(token, request);
    // The audit log records every word of a command that runs (see audit/action-record.ts): more is not run.
    const chars = wordsChars([request.command, ...request.args]);
    if (chars > EXEC_WORDS_LIMIT_CHARS) {
      throw new EffectFailure(
        `exec("${request.command}"): its words hold ${chars} characters, more than a command is given (${EXEC_WORDS_LIMIT_CHARS}, ` +
          "the system's usual limit, environment included) and than the audit log records whole; nothing was run. Pass long data " +
          "on standard input (the input option) or in a file",
      );
    }
    // Node refuses a NUL at spawn, in words that counted the wrapper's own arguments ("args[15]"
    // for the script's first): said here, of the script's argument, before anything runs.
    const withNul = request.args.findIndex((arg) => arg.includes("\0"));
    if (withNul !== -1) {
      throw new EffectFailure(
        `exec("${request.command}"): args[${withNul}] holds a NUL character, which no argument of a program can carry (the system ends it there); ` +
          "nothing was run. Pass data with NUL characters on standard input (the input option) or in a file",
      );
    }
    const program = findOnPath(request.command);
    if (!program) throw new EffectFailure(`exec("${request.command}"): not found on the host's PATH`);
    const cwd = this.resolveCwd(request.cwd);
    const judged = this.judgedCwd;
    if (judged !== null && cwd !== judged) throw cwdChangedSinceJudged(cwd, this.allowedRoots);
    // setTimeout fires at once for anything past 2^31-1 ms (about 24.8 days), which killed the
    // command after 1 ms: such a timeout means "no limit of its own" (the evaluation's holds).
    const timeoutMs = commandTimeoutMs(request);
    return this.run(program, request, cwd, timeoutMs, beforeEffect, judged !== null);
  }

  /** `pinned`: the command runs in the directory `cwd` names now, opened and verified, whatever its path leads to by the time the child starts. */
  private async run(program: string, request: ExecRequest, cwd: string, timeoutMs: number, beforeEffect: BeforeEffect, pinned = false): Promise<ProcessResult> {
    let directory: { fd: number; path: string } | null = null;
    if (pinned) {
      // A path only (O_PATH): a working directory the user may enter but not list (-wx) pins as well.
      const fd = openSync(cwd, O_PATH_FLAG | constants.O_DIRECTORY);
      let opened: string;
      try {
        // Where /proc cannot name it (deeper than PATH_MAX), a directory on the way was swapped for a
        // link since the gate judged it: refused, not taken for the path judged and started in by name.
        opened = checkablePath(fd, "");
      } catch (error) {
        closeSync(fd);
        throw error instanceof UncheckablePlaceError ? cwdChangedSinceJudged(null, this.allowedRoots) : error;
      }
      if (opened !== "" && opened !== cwd) {
        closeSync(fd);
        throw cwdChangedSinceJudged(opened, this.allowedRoots);
      }
      // The child changes into it by its descriptor, held here until the command has ended (each attempt below starts in it).
      directory = { fd, path: opened === "" ? cwd : `/proc/self/fd/${fd}` };
    }
    try {
      // A confined command whose setup found the roots changed before its covers were mounted did
      // not run: its covers are planned anew from the roots as they are now and set up again, each
      // attempt checked the same way, within the command's own timeout (see RootsChangedDuringSetup).
      const until = Date.now() + timeoutMs;
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.start(program, request, directory?.path ?? cwd, cwd, Math.max(1, until - Date.now()), beforeEffect);
        } catch (error) {
          if (!(error instanceof RootsChangedDuringSetup)) throw error;
          // Its setup stopped before the command ran (see the close handler).
          if (attempt >= SETUP_ATTEMPTS || Date.now() >= until) throw error.refusedAfter(attempt);
        }
      }
    } finally {
      if (directory !== null) closeSync(directory.fd);
    }
  }

  /** `cwd`: where the child starts (a descriptor's path when pinned); `realCwd`: that directory's path, which a confined command enters again. */
  private start(program: string, request: ExecRequest, cwd: string, realCwd: string, timeoutMs: number, beforeEffect: BeforeEffect): Promise<ProcessResult> {
    return new Promise((resolve, reject) => {
      const wrapper = namespaceWrapper(NAMESPACE_NOTICES);
      const env = childEnvironment();
      // Each way starts with a shell that waits for tacit's answer on its lifeline (see
      // lifeline.ts). A confined command's setup also reads the directories its walk listed on fd
      // 3, and reports a failure on fd 4, which the command never holds (see
      // CommandConfinement.wrap, setupFailure).
      let started: { program: string; args: string[]; walked?: Buffer; changedSince?: () => string | null; afterwards?: () => string };
      try {
        started =
          this.confinement !== null ? this.confinement.wrap(wrapper, request.command, program, request.args, realCwd)
          : wrapper ? { program: wrapper.program, args: [...wrapper.argsBefore, program, ...request.args] }
          : behindLifeline(program, request.args);
      } catch (error) {
        reject(error);
        return;
      }
      const { program: command, args: argv, walked = null, changedSince = () => null, afterwards = () => "" } = started;
      const lifelineFd = walked === null ? COMMAND_LIFELINE_FD : CONFINED_LIFELINE_FD;
      // Killed by the kernel when tacit ends in a way that runs no exit hook (see parent-death.ts).
      const { file, args } = diesWithTacit(command, argv);
      // Before the command can make any file (see confinedCommandOver).
      const startedAtMs = Date.now();
      // Decided: every check has passed. Thrown here, its error rejects the command unstarted.
      beforeEffect();
      let child: ChildProcess;
      try {
        child = spawn(file, args, {
          cwd,
          env,
          // Its own process group, so that a timeout kills everything it started (and the
          // namespace, when there is one, whatever left the group).
          detached: true,
          stdio: [request.input === null ? "ignore" : "pipe", "pipe", "pipe", ...(walked === null ? [] : (["pipe", "pipe"] as const)), "pipe"],
        });
      } catch (error) {
        // Some failures are thrown at once rather than emitted: an argument longer than the
        // kernel takes (E2BIG) ended the evaluation as a host that failed to answer.
        reject(new EffectFailure(`exec("${request.command}"): could not start: ${(error as Error).message}${startHint(error)}`));
        return;
      }
      this.running.add(child);
      const streams: ReadonlyArray<Readable | Writable | null | undefined> = child.stdio;
      answerLifeline(streams[lifelineFd] as Readable & Writable);
      child.once("spawn", () => this.progress.set(request, "started"));
      // While it runs, no classified file is made in its roots (see FileSystem.openClassifiedWrite).
      const confinedEnds = this.confinement === null ? () => undefined : confinedCommandRunning(request.command, this.confinement.allowedRoots, startedAtMs);
      // Ended by a signal, tacit runs its exit hooks: the command and its group go with it. And
      // what the command left that must not outlive it is undone then too (see afterwards): the
      // script's time limit ended tacit while a confined command that had made a .git with a
      // core.fsmonitor still ran, and the .git was left for the user's next git status.
      const release = cleanUpAtExit(child, null, true, null, () => {
        const undone = afterwards();
        if (undone !== "") process.stderr.write(undone.trimStart());
      });
      const stdout = new CappedOutput(this.hostSecrets, "stdout", this.outputLimitBytes);
      const stderr = new CappedOutput(this.hostSecrets, "stderr", this.outputLimitBytes);
      child.stdout!.on("data", (chunk: Buffer) => stdout.add(chunk));
      child.stderr!.on("data", (chunk: Buffer) => stderr.add(chunk));
      const setupReport = new CappedOutput(this.hostSecrets, "stderr");
      if (walked !== null) {
        (child.stdio[4] as Readable).on("data", (chunk: Buffer) => setupReport.add(chunk));
        const walkedPipe = child.stdio[3] as Writable;
        walkedPipe.on("error", () => undefined); // A setup that failed before reading it.
        walkedPipe.end(walked);
      }
      if (request.input !== null) {
        child.stdin!.on("error", () => undefined); // A child that does not read its input.
        child.stdin!.end(request.input);
      }
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup(child);
      }, timeoutMs);
      child.on("error", (error) => {
        clearTimeout(timer);
        this.running.delete(child);
        release();
        confinedEnds();
        reject(new EffectFailure(`exec("${request.command}"): could not start: ${error.message}${startHint(error)}`));
      });
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        this.running.delete(child);
        // Whatever the child left running in its group goes with it.
        killGroup(child);
        release();
        confinedEnds();
        // What a confined command left that git, npx or an AI client would run unconfined later (see confinement.ts, afterwards).
        const undone = afterwards();
        const exitCode = timedOut ? 124 : (code ?? 128 + signalNumber(signal));
        const unconfined = this.confinement !== null && !timedOut ? setupFailure(request.command, exitCode, setupReport.text(), changedSince) : null;
        this.progress.set(request, unconfined !== null ? "not-started" : timedOut || this.killed.has(child) ? "killed" : "exited");
        if (unconfined !== null) {
          reject(unconfined);
          return;
        }
        const killedNote = timedOut ? `\n[tacit: killed after ${timeoutMs} ms (timeoutMs), with the processes it started]\n` : "";
        const result: ProcessResult = { exitCode, stdout: stdout.text(), stderr: stderr.text() + killedNote + undone };
        // The audit log says why (its result's digest alone did not): the command's own limit, as it was asked for.
        resolve(timedOut ? markRanOutOfTime(result, { limit: "command-timeout", ms: commandTimeoutMs(request) }) : result);
      });
    });
  }

  killAll(): void {
    for (const child of this.running) {
      this.killed.add(child);
      killGroup(child);
    }
  }
}

/** A command's own time limit: its timeoutMs, or the default (at most what a timer takes). */
function commandTimeoutMs(request: ExecRequest): number {
  return Math.min(request.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS, MAX_TIMER_MS);
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/** `signal`'s number on this system (SIGUSR1 is 10 here), as a shell reports it in 128 + n. */
function signalNumber(signal: NodeJS.Signals | null): number {
  return signal ? (osConstants.signals[signal] ?? 0) : 0;
}

/** What to do instead, for a command the system would not start. */
function startHint(error: unknown): string {
  return (error as NodeJS.ErrnoException).code === "E2BIG"
    ? "; its arguments are longer than the system takes (at most 128 KiB one argument, about 2 MiB in all, environment included). Pass long data on standard input (the input option) or in a file"
    : "";
}

/**
 * The refusal of a command whose working directory leads elsewhere than where a person was asked about it (see
 * ExecExecutor.judged): where it now leads is named only inside the allowed roots (see fs/moved-place.ts).
 */
/** `now`: where the directory leads now; null where the system cannot name it (a place deeper than PATH_MAX). */
function cwdChangedSinceJudged(now: string | null, allowedRoots: readonly string[]): PolicyDenial {
  const where = now === null ? "it now leads to a place too deep for the system to name, which tacit cannot check" : nowLeadsText(now, allowedRootsBounds(allowedRoots));
  return new PolicyDenial(`exec: refused: the command's working directory changed after a person was asked about it (${where}); nothing was run. Do not retry it; ask the user.`);
}
