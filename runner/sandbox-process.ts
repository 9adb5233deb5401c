// The Deno sandbox process: started with no authority at all, a scrubbed environment, no
// place to write anything (not even Deno's own caches), no network (a namespace of its own,
// where the host allows; its own files, IPC and processes too), a V8 heap limit and a
// resident-memory watchdog. This module stays
// free of heavy dependencies so the CLI can start Deno first and load the rest while it boots.

import { type ChildProcess, spawn } from "node:child_process";
import { executable } from "./exec/program-path.js";
import type { Readable } from "node:stream";
import { cleanUpAtExit } from "./exit-cleanup.js";
import { RSS_ALLOWANCE_MB } from "./limits.js";
import { PausableTimer } from "./pausable-timer.js";
import { SandboxBackstop } from "./sandbox-backstop.js";
import { SPAWNED_KILL_GRACE_MS } from "./sandbox-backstop-protocol.js";
import { type ConfinedLaunch, confinedSandbox } from "./network-namespace.js";
import { NamespacedProgram } from "./namespaced-program.js";
import { diesWithTacit } from "./parent-death.js";
import { bootstrapPath, denoExecutable, pureEvaluatorPath } from "./paths.js";
import { readStatFields } from "./proc-stat.js";
import { residentKbOfAll } from "./resident-memory.js";
import { PipeInput, type SandboxInput, sandboxInput } from "./sandbox-input.js";
import { readWaiting, SpinningReader } from "./spin-read.js";
import { type InputWait, MainThreadLook } from "./input-wait.js";
import type { SessionMemoryAccount } from "./sessions-memory.js";

const WATCHDOG_INTERVAL_MS = 50;
/** Between a session's snippets (see watchIdle): nothing should change, so a slower look is enough. */
const IDLE_WATCH_INTERVAL_MS = 250;
/**
 * CPU time a session's sandbox may still use after it has reported a snippet and blocked for
 * the next (measured: none; this covers the runtime's last background work). More means
 * something the snippet started still runs.
 */
const IDLE_CPU_ALLOWANCE_MS = 500;
/**
 * Processes a sandbox's PID namespace may hold while a snippet runs before it is ended: Deno may
 * start none (see checkIdle), but the mount setup that runs before it, whose memory is watched
 * too (the pure evaluator's, from its start), has a `mount` or two running at a time.
 */
const MAX_NAMESPACE_PROCESSES = 16;
/** /proc/PID/stat counts CPU time in clock ticks of 1/100 s (USER_HZ on Linux). */
const MS_PER_CLOCK_TICK = 10;
/** What tacit serve's off-thread watch (sandbox-backstop.ts) stores as it kills: which of the watches below it was, or its time limit (see timeLimit). */
const BACKSTOP_RUNNING = 1;
const BACKSTOP_IDLE = 2;
const BACKSTOP_IDLE_ASKED = 3;
const BACKSTOP_TIME = 4;
const STDERR_KEEP_CHARS = 16 * 1024;

export interface SandboxOptions {
  memoryLimitMb: number;
  /**
   * "sandbox" runs the agent's code; "pure" is the pure evaluator, which runs map functions
   * on plaintext and may build functions from their source (it has nothing to protect: no
   * permissions and no channel but its replies to the host).
   */
  role?: "sandbox" | "pure";
}

/**
 * "lingered": a session's sandbox went on running between snippets (see watchIdle).
 * "sessions-memory": a session's sandbox grew while tacit serve's sessions together held more
 * than their budget (see sessions-memory.ts).
 */
export type KillReason = "timeout" | "memory" | "sessions-memory" | "protocol" | "finished" | "cancelled" | "lingered" | "audit-log";

export type SandboxEnd =
  | { kind: "exited"; code: number | null; signal: NodeJS.Signals | null; stderr: string }
  | { kind: "killed"; reason: KillReason; detail: string };

/**
 * Everything Deno is told. Nothing here grants a permission: no --allow-* flag appears, so
 * files, network, subprocesses, environment, FFI and system information are all denied,
 * and --no-prompt turns every would-be prompt into a denial.
 */
export function sandboxArgs(options: SandboxOptions): string[] {
  const pure = options.role === "pure";
  const v8Flags = [`--max-old-space-size=${options.memoryLimitMb}`, ...(pure ? [] : ["--disallow-code-generation-from-strings"])];
  return [
    "run",
    "--no-prompt",
    "--no-remote",
    "--no-npm",
    "--no-config",
    "--no-lock",
    "--cached-only",
    "--no-code-cache",
    `--v8-flags=${v8Flags.join(",")}`,
    pure ? pureEvaluatorPath : bootstrapPath,
  ];
}

/**
 * Deno's cache directory: a path under /dev/null, where nothing can be created, by root
 * either. Deno keeps its caches in memory instead; with its transpile cache off
 * (DENO_EMIT_CACHE_MODE) and no V8 code cache (--no-code-cache), a sandbox writes no file
 * anywhere. Nothing one evaluation stores (localStorage, caches) can reach the next, and no
 * directory is left to delete, so a finished sandbox need not be waited for.
 */
export const SANDBOX_DENO_DIR = "/dev/null/tacit-sandbox-writes-nothing";

/**
 * No WebGPU backend (wgpu reads this list once per process, for every realm and worker in it;
 * a name it does not know enables nothing). WebGPU needs no Deno permission: with a backend,
 * `navigator.gpu.requestAdapter()` loaded the system's Vulkan or GL driver into the sandbox
 * (Mesa's llvmpipe here, JIT threads and all), named it and the machine's LLVM, and on a host
 * with a GPU would open its device nodes and allocate memory the resident-memory watchdog does
 * not see. Scripts have no use for it.
 */
export const SANDBOX_WEBGPU_BACKENDS = "none";

const PRLIMIT_CANDIDATES = ["/usr/bin/prlimit", "/bin/prlimit"];
let prlimit: string | null | undefined;

/** util-linux prlimit, found once per process, or null where the host has none. */
function fileSizeLimiter(): string | null {
  if (prlimit === undefined) prlimit = PRLIMIT_CANDIDATES.find(executable) ?? null;
  return prlimit;
}

/**
 * `file` with `args`, run with a file size limit of 0 bytes (RLIMIT_FSIZE, soft and hard) where
 * the host has util-linux prlimit (it sets the limit and runs the program in its place: same
 * process). A sandbox writes no file at all (see SANDBOX_DENO_DIR), but native code in Deno does
 * I/O of its own that no permission covers: node:sqlite on an in-memory database, which needs
 * none, spilled a temporary table into a file it created in any directory a script named
 * (`PRAGMA temp_store_directory`) and unlinked at once, 200 MB written with the sandbox's
 * resident memory at 41 MB, as much as the disk held until the time limit, unseen by the memory
 * watchdog. With the limit, a write that would grow a regular file ends the process (SIGXFSZ);
 * its stdin, stdout and stderr are sockets and pipes, which the limit does not bind.
 */
function writesNoFile(file: string, args: readonly string[]): { file: string; args: string[] } {
  const limiter = fileSizeLimiter();
  // No core file either: a pure evaluator's memory holds the plaintext of the secrets it computes
  // with, and a crash (V8 aborts when its heap runs out) on a host whose core limit allows dumps
  // would write it to a file.
  return limiter === null ? { file, args: [...args] } : { file: limiter, args: ["--fsize=0", "--core=0", "--", file, ...args] };
}

/**
 * How a sandbox's `file` is started with `args`. Killed by the kernel when tacit ends in a way that
 * runs no exit hook (see parent-death.ts): code spinning in a loop reads nothing, so nothing else
 * would end it. setpriv outermost, so that the parent-death signal is set before unshare (a network
 * namespace of its own, and a mount namespace where the host allows, see network-namespace.ts) and
 * prlimit (see writesNoFile; in the mount namespace its setup sets the same limits) run. Each runs
 * the next in its place: the process spawned is the program's, pid and all; but for a PID
 * namespace (`forksInit`: unshare forks the program in it, see namespaced-program.ts).
 */
export function sandboxLaunch(file: string, args: readonly string[]): ConfinedLaunch {
  const isolated = confinedSandbox(file, args, writesNoFile);
  return { ...diesWithTacit(isolated.file, isolated.args), forksInit: isolated.forksInit };
}

/**
 * The sandbox's HOME (see sandboxEnv): a directory that does not exist and cannot be made, in
 * /proc. Not under /dev/null as DENO_DIR is: Deno fails to start when looking for ~/.npmrc
 * there gives ENOTDIR rather than ENOENT.
 */
export const SANDBOX_HOME = "/proc/self/tacit-sandbox-has-no-home";

/** Nothing of the host's environment reaches the sandbox. */
export function sandboxEnv(): Record<string, string> {
  return {
    DENO_DIR: SANDBOX_DENO_DIR,
    DENO_EMIT_CACHE_MODE: "disable",
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
    DENO_NO_PROMPT: "1",
    DENO_WEBGPU_BACKEND: SANDBOX_WEBGPU_BACKENDS,
    // A home where nothing is: without HOME, Deno looked the user's up in /etc/passwd and read
    // ~/.npmrc (npm's auth tokens) into the sandbox's memory at start, --no-npm notwithstanding.
    HOME: SANDBOX_HOME,
  };
}

/** Every sandbox and pure evaluator this process started that has not ended: stopped with tacit (see stopWithTacit). */
const alive = new Set<SandboxProcess>();
let stopsWithTacit = false;

/**
 * A sandbox runs in a session of its own (no controlling terminal: see the spawn), so a terminal's
 * stop (Ctrl-Z, SIGTSTP to tacit's process group) reaches tacit alone, and a sandbox in a loop ran
 * on, its time limit not counting, for as long as tacit stayed stopped. So tacit stops every
 * sandbox, then itself, and once continued, continues those it stopped (not one held otherwise).
 */
function stopWithTacit(): void {
  if (stopsWithTacit) return;
  stopsWithTacit = true;
  process.on("SIGTSTP", () => {
    for (const sandbox of alive) sandbox.stoppedWithTacit(true);
    process.kill(process.pid, "SIGSTOP");
  });
  process.on("SIGCONT", () => {
    for (const sandbox of alive) sandbox.stoppedWithTacit(false);
  });
}

export class SandboxProcess {
  readonly options: SandboxOptions;
  private readonly child: ChildProcess;
  /** The program itself (Deno), which the process spawned may fork in a PID namespace: what is read and stopped. */
  private readonly program: NamespacedProgram;
  private readonly input: SandboxInput;
  private stderr = "";
  private lastWrite: Promise<void> = Promise.resolve();
  /** Writes not yet taken whole by the pipe (see `holdsUnwritten`). */
  private unfinishedWrites = 0;
  /** Settles `lastWrite` when the process ends first (its pipe then takes nothing more). */
  private settleLastWrite: (() => void) | null = null;
  private killedFor: Extract<SandboxEnd, { kind: "killed" }> | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  /** The process has ended: nothing is watched any more (its pid may belong to another process). */
  private gone = false;
  /** The process spawned, killed if it has not ended SPAWNED_KILL_GRACE_MS after its program was (see kill). */
  private spawnedKill: NodeJS.Timeout | null = null;
  private readonly rssLimitKb: number;
  /** tacit serve: the session whose sandbox this is, told each reading (see countIn); null otherwise. */
  private memoryAccount: SessionMemoryAccount | null = null;
  /** Resolves once the process is gone. */
  readonly ended: Promise<SandboxEnd>;
  /** What nextOutputSpinning reads with, made at its first use. */
  private spinningReader: SpinningReader | null = null;
  /** What readOutputNow reads into, made at its first use. */
  private outputNow: Buffer | null = null;
  /** What inputWait looks at: the program's main thread. */
  private readonly mainThread: MainThreadLook;
  /** Stopped by hold(true): a terminal's continue leaves it stopped (see stoppedWithTacit). */
  private held = false;
  /**
   * tacit serve: its memory and time limits held off the main thread too (see sandbox-backstop.ts),
   * so that the main thread being busy does not stretch them; null otherwise.
   */
  private readonly backstop: SandboxBackstop | null;
  /** The time limit of the program it runs now (see timeLimit): what says a kill the backstop made for time. */
  private timeLimitNow: PausableTimer | null = null;

  constructor(options: SandboxOptions) {
    this.options = options;
    const { file, args, forksInit } = sandboxLaunch(denoExecutable(), sandboxArgs(options));
    // The pure evaluator answers one job at a time and asks nothing: it has no use for spinning.
    this.input = options.role === "pure" ? new PipeInput() : sandboxInput();
    this.child = spawn(file, args, {
      env: sandboxEnv(),
      // A directory that always exists; the sandbox can neither read nor write it.
      cwd: "/",
      stdio: [this.input.stdio, "pipe", "pipe"],
      // A session of its own, so no controlling terminal: in tacit's, native code in Deno (which
      // no permission binds) could open /dev/tty, read what the person types, and push input into
      // the terminal with TIOCSTI (an answer to tacit's approval question, or a command for the
      // shell to run once tacit ends), which the kernel allows a process on its own terminal.
      // Ctrl-C reaches tacit alone, which ends its sandboxes (see cli/stop-signals.ts); Ctrl-Z, which
      // stops them with it (see stopWithTacit).
      detached: true,
    });
    this.program = new NamespacedProgram(this.child, forksInit);
    // Its kill, as the main thread learns of it: said as the main thread's watchdog (or time limit) says it.
    this.backstop = SandboxBackstop.forSandbox(() => this.takeBackstopKill());
    this.mainThread = new MainThreadLook(() => this.program.pid());
    this.input.attach(this.child, (detail) => this.kill("protocol", detail));
    alive.add(this);
    stopWithTacit();
    // Nothing outlives the host: if tacit exits first, the process is killed, with its process
    // group. A program forked in a PID namespace leads a group of its own (see sandbox-mounts.ts
    // SETSID_CANDIDATES) and dies with the process spawned by its parent-death signal, which native
    // code in it can clear: it is killed first, by its pid.
    const release = cleanUpAtExit(this.child, this.input.dir, forksInit, forksInit ? () => this.program.signal("SIGKILL") : null);
    this.rssLimitKb = (options.memoryLimitMb + RSS_ALLOWANCE_MB) * 1024;
    // The pure evaluator runs map functions from its first job on, and is watched from the
    // start. An agent's sandbox runs nothing but tacit's bootstrap until its program is sent,
    // and converse() starts the watch then: a warm spare waiting for tacit serve's next call
    // woke the server 20 times a second to read /proc for nothing.
    if (options.role === "pure") this.watchMemory(true);

    this.child.stderr!.on("data", (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString("utf8")).slice(-STDERR_KEEP_CHARS);
    });

    this.ended = new Promise((resolve) => {
      const finish = (end: SandboxEnd): void => {
        // Killed off the main thread before this was seen: the same reason as the main thread's kill (recorded before the signal).
        const backstopKill = this.backstop?.ended() ?? null;
        if (backstopKill !== null) this.killedFor ??= this.backstopKill(backstopKill);
        this.gone = true;
        if (this.spawnedKill !== null) clearTimeout(this.spawnedKill);
        alive.delete(this);
        this.memoryAccount?.ended(this);
        this.watchMemory(false);
        this.settleLastWrite?.();
        this.input.close();
        this.mainThread.close();
        release();
        resolve(this.killedFor ?? end);
      };
      this.child.on("close", (code, signal) => finish({ kind: "exited", ...this.program.end({ code, signal, stderr: this.stderr }) }));
      this.child.on("error", (error) =>
        finish({ kind: "killed", reason: "protocol", detail: `the sandbox could not start: ${error.message}` }),
      );
    });
  }

  /** The sandbox's stdout: nothing but protocol frames are expected here. */
  get stdout(): Readable {
    return this.child.stdout!;
  }

  get isKilled(): boolean {
    return this.killedFor !== null;
  }

  /**
   * Whether the process has ended (reaped: its exit code or signal is known), though its end may
   * not have been reported yet. A spare that ended before it was used (its namespace could not be
   * made, say) is not handed out (see warm-spare.ts).
   */
  get hasEnded(): boolean {
    return this.gone || this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** Why the host killed it (the first reason given), or null. */
  get killed(): Extract<SandboxEnd, { kind: "killed" }> | null {
    return this.killedFor;
  }

  write(text: string): void {
    if (this.killedFor || !this.input.writable) return;
    this.unfinishedWrites++;
    // Settled once the text is in the pipe, or the write failed, or the process has ended.
    let settle: () => void = () => undefined;
    this.lastWrite = new Promise((resolve) => (this.settleLastWrite = settle = resolve));
    // Written outside the closures: one that reads `text` keeps it for as long as any closure of
    // this call lives, and the callback lives until the process has read the text whole. Pipes
    // copy what they cannot write at once out of the heap; kept, each text (a map job's line,
    // up to the store's limit in characters) was held twice, once in the heap, for as long as a
    // process busy elsewhere took to read it: seven tacit serve calls' map jobs at once held
    // 261 MB of a 300 MB heap after collection.
    this.input.write(text, () => {
      this.unfinishedWrites--;
      settle();
    });
  }

  /**
   * Whether the host still holds part of what it wrote: the process has not read it into its
   * pipe yet. A sandbox that reads each reply whole before it sends anything more (the stub
   * does) never leaves any behind when it sends its next frame: the host has handed the last
   * bytes to the pipe, and seen that, before the process could read them.
   */
  get holdsUnwritten(): boolean {
    return this.unfinishedWrites > 0 && !this.gone;
  }

  /**
   * Resolves once everything written so far has gone into the pipe to the sandbox, that is,
   * the sandbox has read all but what the pipe holds (64 KiB); what it has not is held by the
   * host. Also once the process has ended: then nothing more is waited for.
   */
  written(): Promise<void> {
    return this.lastWrite;
  }

  /** See SandboxInput.spin: whether the sandbox spins, rather than sleeps, while it waits for what the host writes next. */
  spin(on: boolean): void {
    this.input.spin(on);
  }

  /** Whether spin(true) left it spinning (see SandboxInput.spinning): spin(false) has nothing to stop otherwise. */
  get spinning(): boolean {
    return this.input.spinning;
  }

  /**
   * What the sandbox writes next, if it does within a few µs, read by the host spinning (see
   * spin-read.ts SpinningReader); null otherwise, and the event loop delivers it. Only while the sandbox spins
   * too: then a CPU is free for each (see SandboxInput.spin), and the host has written all it
   * wrote, so the sandbox can be going on.
   */
  nextOutputSpinning(): Uint8Array | null {
    if (this.killedFor || this.gone || !this.input.spinning || !this.input.allWritten) return null;
    this.spinningReader ??= new SpinningReader(this.child.stdout!);
    return this.spinningReader.next();
  }

  /** Whether the program's main thread waits, blocked, reading its stdin (see input-wait.ts). */
  inputWait(): InputWait {
    return this.gone ? "unknown" : this.mainThread.inputWait();
  }

  /**
   * What the sandbox has written that the host has not read yet, read now, up to 64 KiB at a time
   * (see spin-read.ts readWaiting): "none" where nothing is there, "unreadable" where it cannot be
   * read but by the event loop.
   */
  readOutputNow(): Uint8Array | "none" | "unreadable" {
    if (this.gone) return "none";
    this.outputNow ??= Buffer.allocUnsafe(64 * 1024);
    return readWaiting(this.child.stdout!, this.outputNow);
  }

  /** SIGKILL: agent code can trap SIGTERM, not this. The first reason given is kept. */
  kill(reason: KillReason, detail: string): void {
    this.killedFor ??= { kind: "killed", reason, detail };
    // In a PID namespace, the program alone, and with it every process in its namespace: the
    // process spawned (continued, should it be stopped) reaps it and then ends, so the end tacit
    // waits for comes once they are all gone. Killed together, the process spawned ended first,
    // and tacit answered while Deno was still dying (a test saw it running after the answer).
    // Where the program is not found (not forked yet, or ended), the process spawned, whose death
    // kills the program too (unshare --kill-child); and it too, should it not end meanwhile.
    if (!this.gone && this.program.signal("SIGKILL")) {
      this.child.kill("SIGCONT");
      this.spawnedKill ??= setTimeout(() => this.child.kill("SIGKILL"), SPAWNED_KILL_GRACE_MS);
      this.spawnedKill.unref();
    } else {
      this.child.kill("SIGKILL");
    }
    // SIGKILLed, it frees its memory as it ends: not counted any more, so that a session running
    // beside it is not stopped for what this one held.
    this.memoryAccount?.ended(this);
  }

  /**
   * From now on each reading of its resident memory is told to `account`, which stops it when it
   * grows while tacit serve's sessions together hold more than their budget: the readings its own
   * limit is watched by (see watchMemory and watchIdle), and one more as each snippet ends.
   */
  countIn(account: SessionMemoryAccount): void {
    this.memoryAccount = account;
    account.started(this);
  }

  /**
   * SIGSTOP (`stopped`) or SIGCONT: the process runs no code while stopped (its timers are the
   * caller's to pause). Nothing is sent once it has ended (its pid may belong to another process).
   */
  hold(stopped: boolean): void {
    if (this.gone || this.killedFor) return;
    this.held = stopped;
    this.signalStop(stopped);
  }

  /** Stopped as tacit stops (`stopped`), or continued as it continues unless held (see stopWithTacit). */
  stoppedWithTacit(stopped: boolean): void {
    if (this.gone || this.killedFor || (!stopped && this.held)) return;
    this.signalStop(stopped);
  }

  /** SIGSTOP or SIGCONT to the program, and to the process spawned (the same but for a PID namespace: see NamespacedProgram). */
  private signalStop(stopped: boolean): void {
    const signal = stopped ? "SIGSTOP" : "SIGCONT";
    this.program.signal(signal);
    this.child.kill(signal);
  }

  /**
   * The wall-clock limit of the program sent next (see PausableTimer): `onExpire` ends the sandbox,
   * with the caller's reason. Under tacit serve the off-thread backstop holds it too: the limit
   * tells it each deadline (paused while a person is asked, moved on as the clock resumes), and it
   * kills the sandbox a grace past one the main thread has been too busy to act on; the main
   * thread, once it sees that kill, ends the limit with `onExpire` all the same, so the end is said
   * as the timer's would be.
   */
  timeLimit(limitMs: number, onExpire: () => void): PausableTimer {
    const backstop = this.backstop;
    const limit = new PausableTimer(limitMs, onExpire, backstop === null ? undefined : (atMs) => backstop.setDeadline(atMs));
    this.timeLimitNow = limit;
    return limit;
  }

  /** Starts or stops the resident-memory watchdog, for a program running in the sandbox. */
  watchMemory(on: boolean): void {
    this.stopWatching();
    if (on && !this.killedFor && !this.gone) {
      this.watchdog = setInterval(() => this.checkMemory(), WATCHDOG_INTERVAL_MS);
      this.watchdog.unref();
      this.watchOffThread(WATCHDOG_INTERVAL_MS, BACKSTOP_RUNNING);
    }
  }

  /** The backstop's watch (tacit serve), by the limit the main thread's watchdog keeps; `code` says which watch it is. */
  private watchOffThread(intervalMs: number, code: number): void {
    const spawned = this.child.pid;
    if (this.backstop === null || spawned === undefined || this.hasEnded) return;
    this.backstop.watch(spawned, this.program.forksInit, this.rssLimitKb, intervalMs, code, BACKSTOP_TIME);
  }

  /** A kill the backstop made, once the main thread sees it (its message, or a look of the main thread's watchdog): said as that watchdog says it. */
  private takeBackstopKill(): void {
    const code = this.backstop?.killCode() ?? null;
    if (code === null || this.gone || this.killedFor) return;
    const { reason, detail } = this.backstopKill(code);
    this.kill(reason, detail);
  }

  /** The reason for the backstop's kill `code`: the main thread's own for the same watch, or time limit. */
  private backstopKill(code: number): Extract<SandboxEnd, { kind: "killed" }> {
    if (code === BACKSTOP_TIME) {
      // Said by the time limit itself, as its timer says it (the words are its owner's: evaluate.ts,
      // a session's replay), which ends the sandbox (this.kill) before this returns.
      this.timeLimitNow?.expireNow();
      return this.killedFor ?? { kind: "killed", reason: "timeout", detail: "it ran longer than its time limit" };
    }
    const [reason, detail] = code === BACKSTOP_RUNNING ? this.overMemory() : this.overMemoryIdle(code === BACKSTOP_IDLE_ASKED);
    return { kind: "killed", reason, detail };
  }

  /** Why a program running in the sandbox that grew past its limit is killed. */
  private overMemory(): [KillReason, string] {
    // The pure evaluator runs map/flatMap functions, not the script: its note in the secure output said "the script".
    const who = this.options.role === "pure" ? "the map or flatMap function (in the pure evaluator)" : "the script";
    return ["memory", `${who} used more than ${Math.round(this.rssLimitKb / 1024)} MiB of memory (resident)`];
  }

  /** Why a sandbox that grew past its limit between snippets (or while a person was asked: `whileAsked`) is killed. */
  private overMemoryIdle(whileAsked: boolean): [KillReason, string] {
    const [reason, when] = this.idleReason(whileAsked);
    return [whileAsked ? "memory" : reason, `it grew past ${Math.round(this.rssLimitKb / 1024)} MiB of memory (resident) ${when}`];
  }

  /** Why an idle sandbox that ran is killed, and when it ran. */
  private idleReason(whileAsked: boolean): [KillReason, string] {
    // Running while a person is asked breaks the protocol (the stub waits, blocked, for each
    // reply), and with the clock stopped it is time the limit does not count.
    return whileAsked
      ? ["protocol", "while a person was asked about its request (the time limit stops then, since a sandbox waits, blocked, for each reply)"]
      : ["lingered", "while it waited for the next snippet"];
  }

  /**
   * A session's sandbox between snippets: it waits blocked on stdin, and nothing of the last
   * snippet is left to run, so it uses no CPU and does not grow. Something that does (a worker
   * thread the snippet started and left running: the time limit is not counting then) ends it,
   * as "lingered". Looked at every 250 ms: a hundred idle sessions cost the host little.
   * `whileAsked`: the sandbox waits for the reply to a request a person is asked about, with the
   * time limit stopped; one that runs meanwhile (code with the raw channel need not wait) ends
   * as a protocol violation.
   */
  watchIdle(whileAsked = false): void {
    this.stopWatching();
    // Waiting is sleeping: a spinning sandbox would use a CPU, and be ended for it.
    this.spin(false);
    if (this.killedFor || this.gone) return;
    // A session of tacit serve: the last look at the snippet that ran, at once (one /proc read a
    // snippet), so that what it grew in its last 50 ms counts against the sessions' budget, as
    // the snippet's, before its answer goes out and before the client can make another session.
    if (this.memoryAccount !== null) {
      this.checkMemory();
      if (this.killedFor) return;
    }
    // CPU time is counted from the first look, not read here: the pure evaluator goes idle after
    // every job, and a /proc read per job would be paid by every map.
    let cpuAtStart: number | null | undefined;
    this.watchdog = setInterval(() => {
      const dirs = this.program.processDirs();
      cpuAtStart ??= this.cpuMs(dirs);
      this.checkIdle(dirs, cpuAtStart, whileAsked);
    }, IDLE_WATCH_INTERVAL_MS);
    this.watchdog.unref();
    // Its memory only: the rest of what is looked at here is the main thread's to judge.
    this.watchOffThread(IDLE_WATCH_INTERVAL_MS, whileAsked ? BACKSTOP_IDLE_ASKED : BACKSTOP_IDLE);
  }

  private stopWatching(): void {
    if (this.watchdog !== null) clearInterval(this.watchdog);
    this.watchdog = null;
    this.backstop?.unwatch();
  }

  /**
   * Resident memory in KiB of the processes in `dirs` together (see NamespacedProgram.processDirs:
   * the program's, and any native code forked beside it), or null when none could be read: the
   * process is gone, or there is no /proc (the V8 heap limit still applies).
   */
  private rssKb(dirs: readonly string[] | null): number | null {
    return residentKbOfAll(dirs ?? []);
  }

  /**
   * CPU time in ms of the processes in `dirs` together (user and system, all threads, and their
   * children's that they waited for: a child that ends takes its time into its parent's), or null
   * when the program's own cannot be read.
   */
  private cpuMs(dirs: readonly string[] | null): number | null {
    if (dirs === null) return null;
    let totalMs = 0;
    for (const [index, dir] of dirs.entries()) {
      const ms = cpuMsAt(dir);
      if (ms === null && index === 0) return null;
      totalMs += ms ?? 0;
    }
    return totalMs;
  }

  private checkIdle(dirs: readonly string[] | null, cpuAtStart: number | null, whileAsked: boolean): void {
    this.takeBackstopKill();
    if (this.killedFor) return;
    const [reason, when] = this.idleReason(whileAsked);
    // Deno may start no process: one beside it in its PID namespace is native code's, and, between
    // snippets (or stopped while a person is asked: the stop reaches Deno alone), it would run
    // untimed. Its CPU time is counted below too, but not one that ends unwaited for.
    const others = (dirs?.length ?? 1) - 1;
    if (others > 0) {
      this.kill(reason, `${others} process${others === 1 ? "" : "es"} other than Deno ran in its PID namespace ${when} (Deno may start none: only native code its permissions do not bind could)`);
      return;
    }
    const rssKb = this.rssKb(dirs);
    if (rssKb !== null && rssKb > this.rssLimitKb) {
      this.kill(...this.overMemoryIdle(whileAsked));
      return;
    }
    // A session whose sandbox is found ended before its next snippet rebuilds it from its earlier snippets.
    if (rssKb !== null && this.stoppedForSessionsMemory(rssKb, false)) return;
    const cpu = this.cpuMs(dirs);
    if (cpuAtStart !== null && cpu !== null && cpu - cpuAtStart > IDLE_CPU_ALLOWANCE_MS) {
      this.kill(reason, `it used ${cpu - cpuAtStart} ms of CPU time ${when}`);
    }
  }

  private checkMemory(): void {
    const limitKb = this.rssLimitKb;
    this.takeBackstopKill();
    if (this.killedFor) return;
    const dirs = this.program.processDirs();
    // Each is read at every look: a namespace full of processes (a fork bomb's) would hold the host up.
    if (dirs !== null && dirs.length > MAX_NAMESPACE_PROCESSES) {
      this.kill("protocol", `${dirs.length - 1} processes other than Deno ran in its PID namespace (Deno may start none: only native code its permissions do not bind could)`);
      return;
    }
    const rssKb = this.rssKb(dirs);
    if (rssKb !== null && rssKb > limitKb) {
      this.kill(...this.overMemory());
      return;
    }
    if (rssKb !== null) this.stoppedForSessionsMemory(rssKb, true);
  }

  /** Tells the session's account a reading (see countIn); true if that stopped the sandbox (see SessionMemoryAccount.report). */
  private stoppedForSessionsMemory(rssKb: number, running: boolean): boolean {
    const overBudget = this.memoryAccount?.report(this, rssKb, running) ?? null;
    if (overBudget !== null) this.kill("sessions-memory", overBudget);
    return overBudget !== null;
  }
}

/** CPU time in ms of the process whose /proc directory is `dir` (its threads', and its waited-for children's), or null when it cannot be read. */
function cpuMsAt(dir: string): number | null {
  const field = readStatFields(`${dir}/stat`);
  if (field === null) return null;
  // utime, stime, and cutime and cstime (children waited for).
  const ticks = field(14) + field(15) + field(16) + field(17);
  return Number.isFinite(ticks) ? ticks * MS_PER_CLOCK_TICK : null;
}
