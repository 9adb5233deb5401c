// The Deno sandbox process: started with no authority at all, a scrubbed environment, a
// fresh DENO_DIR, a V8 heap limit and a resident-memory watchdog. It can only write frames
// to stdout; the host reads and validates every one.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { encodeFrame, type HostFrame, type SandboxFrame } from "../library/protocol.js";
import { FrameSplitter, parseSandboxFrame, ProtocolError } from "./frames.js";
import { bootstrapPath, denoExecutable } from "./paths.js";

/** Resident memory allowed on top of the V8 heap limit: Deno's own footprint and young space. */
export const RSS_ALLOWANCE_MB = 256;
const WATCHDOG_INTERVAL_MS = 50;
const STDERR_KEEP_BYTES = 16 * 1024;

export interface SandboxOptions {
  memoryLimitMb: number;
}

export type SandboxEnd =
  | { kind: "exited"; code: number | null; signal: NodeJS.Signals | null; stderr: string }
  | { kind: "killed"; reason: "timeout" | "memory" | "protocol" | "finished" | "cancelled"; detail: string };

/**
 * Everything Deno is told. Nothing here grants a permission: no --allow-* flag appears, so
 * files, network, subprocesses, environment, FFI and system information are all denied,
 * and --no-prompt turns every would-be prompt into a denial.
 */
export function sandboxArgs(options: SandboxOptions): string[] {
  return [
    "run",
    "--no-prompt",
    "--no-remote",
    "--no-npm",
    "--no-config",
    "--no-lock",
    "--cached-only",
    "--no-code-cache",
    `--v8-flags=--max-old-space-size=${options.memoryLimitMb},--disallow-code-generation-from-strings`,
    bootstrapPath,
  ];
}

/** Nothing of the host's environment reaches the sandbox. */
export function sandboxEnv(denoDir: string): Record<string, string> {
  return { DENO_DIR: denoDir, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", DENO_NO_PROMPT: "1" };
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function killAllOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const child of live) child.kill("SIGKILL");
  });
}

export class Sandbox {
  private readonly child: ChildProcess;
  private readonly denoDir: string;
  private readonly splitter = new FrameSplitter();
  private stderr = "";
  private killedFor: Extract<SandboxEnd, { kind: "killed" }> | null = null;
  private readonly watchdog: NodeJS.Timeout;
  private frameHandler: (frame: SandboxFrame) => void = () => undefined;
  /** Resolves once the process is gone and its DENO_DIR deleted. */
  readonly ended: Promise<SandboxEnd>;

  constructor(options: SandboxOptions) {
    this.denoDir = mkdtempSync(path.join(tmpdir(), "tacit-deno-"));
    killAllOnExit();
    this.child = spawn(denoExecutable(), sandboxArgs(options), {
      env: sandboxEnv(this.denoDir),
      cwd: this.denoDir,
      stdio: ["pipe", "pipe", "pipe"],
    });
    live.add(this.child);
    const rssLimitKb = (options.memoryLimitMb + RSS_ALLOWANCE_MB) * 1024;
    this.watchdog = setInterval(() => this.checkMemory(rssLimitKb), WATCHDOG_INTERVAL_MS);
    this.watchdog.unref();

    this.child.stdout!.on("data", (chunk: Buffer) => this.onStdout(chunk));
    this.child.stderr!.on("data", (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString("utf8")).slice(-STDERR_KEEP_BYTES);
    });
    // A sandbox that stops reading (it died, or never reads) must not crash the host.
    this.child.stdin!.on("error", () => undefined);

    this.ended = new Promise((resolve) => {
      this.child.on("close", (code, signal) => {
        clearInterval(this.watchdog);
        live.delete(this.child);
        rmSync(this.denoDir, { recursive: true, force: true });
        resolve(this.killedFor ?? { kind: "exited", code, signal, stderr: this.stderr });
      });
      this.child.on("error", (error) => {
        clearInterval(this.watchdog);
        live.delete(this.child);
        rmSync(this.denoDir, { recursive: true, force: true });
        resolve({ kind: "killed", reason: "protocol", detail: `the sandbox could not start: ${error.message}` });
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  onFrame(handler: (frame: SandboxFrame) => void): void {
    this.frameHandler = handler;
  }

  send(frame: HostFrame): void {
    if (this.killedFor || !this.child.stdin!.writable) return;
    this.child.stdin!.write(encodeFrame(frame));
  }

  /** SIGKILL: agent code can trap SIGTERM, not this. The first reason given is kept. */
  kill(reason: Extract<SandboxEnd, { kind: "killed" }>["reason"], detail: string): void {
    this.killedFor ??= { kind: "killed", reason, detail };
    this.child.kill("SIGKILL");
  }

  private onStdout(chunk: Buffer): void {
    if (this.killedFor) return;
    try {
      for (const line of this.splitter.push(chunk)) this.frameHandler(parseSandboxFrame(line));
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      this.kill("protocol", error.message);
    }
  }

  private checkMemory(limitKb: number): void {
    const pid = this.child.pid;
    if (pid === undefined || this.killedFor) return;
    let status: string;
    try {
      status = readFileSync(`/proc/${pid}/status`, "utf8");
    } catch {
      return; // Gone already, or no /proc on this system: the V8 heap limit still applies.
    }
    const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
    if (rssKb > limitKb) {
      this.kill("memory", `the script used more than ${Math.round(limitKb / 1024)} MiB of memory (resident)`);
    }
  }
}
