// The host's side of a running sandbox: every line the process writes to stdout is parsed
// and validated as a protocol frame before anything acts on it; anything else ends it.

import { encodeFrame, type HostFrame, type SandboxFrame } from "../library/protocol.js";
import { FrameSplitter, parseSandboxFrame, ProtocolError } from "./frames.js";
import type { HostSecrets } from "./host-secrets.js";
import { type KillReason, type SandboxEnd, SandboxProcess, type SandboxOptions } from "./sandbox-process.js";
import type { SessionMemoryAccount } from "./sessions-memory.js";

export type { SandboxEnd, SandboxOptions };

/**
 * A sandbox with these limits: `prestarted` (started ahead, booting while the caller worked)
 * when it is alive and was started with them; otherwise a fresh one, and `prestarted` killed.
 */
export function sandboxWith(memoryLimitMb: number, prestarted?: SandboxProcess): Sandbox {
  if (prestarted && !prestarted.isKilled && prestarted.options.memoryLimitMb === memoryLimitMb) return new Sandbox(prestarted);
  prestarted?.kill("cancelled", "started with other limits");
  return new Sandbox(new SandboxProcess({ memoryLimitMb }));
}

export class Sandbox {
  private readonly splitter = new FrameSplitter();
  private frameHandler: (frame: SandboxFrame) => void = () => undefined;
  private secrets: HostSecrets | null = null;
  /** A session's sandbox between programs (see awaitProgram): it must write nothing at all. */
  private betweenPrograms = false;

  /** Takes over a started process; its stdout stays paused until now, so nothing is lost. */
  constructor(private readonly proc: SandboxProcess) {
    proc.stdout.on("data", (chunk: Buffer) => this.onStdout(chunk));
  }

  get ended(): Promise<SandboxEnd> {
    return this.proc.ended;
  }

  onFrame(handler: (frame: SandboxFrame) => void): void {
    this.frameHandler = handler;
  }

  send(frame: HostFrame): void {
    if (frame.type !== "reply") this.betweenPrograms = false;
    const line = encodeFrame(frame);
    this.proc.write(this.secrets && frame.type === "reply" ? this.secrets.scrubLine(line) : line);
  }

  /** See SandboxProcess.written. */
  written(): Promise<void> {
    return this.proc.written();
  }

  /** See SandboxProcess.holdsUnwritten. */
  get holdsUnwritten(): boolean {
    return this.proc.holdsUnwritten;
  }

  /**
   * A session's sandbox has reported its program's result and is to wait, blocked, for the
   * next: from now until that is sent, anything it writes ends it, and so does part of a frame
   * written before, which the host would otherwise hold until then. The stub writes whole
   * frames, and nothing after its report; code that replaced TextEncoder's encode (which the
   * stub called for every frame then; it calls encodeInto now, as replaceable) wrote its "done"
   * with 4 Mi characters of an unended line after it, and each idle session held them for as
   * long as it lived.
   */
  awaitProgram(): void {
    this.betweenPrograms = true;
    if (this.splitter.holdingChars > 0) this.wroteBetweenPrograms();
  }

  private wroteBetweenPrograms(): void {
    this.kill(
      "protocol",
      "the sandbox wrote to the protocol channel after reporting its result (part of a frame, or more): nothing may come " +
        "between a report and the next program, and the library writes nothing there; leave its writing of frames alone",
    );
  }

  /** Host secrets to scrub from every reply (see host-secrets.ts). */
  scrubReplies(secrets: HostSecrets): void {
    this.secrets = secrets.empty ? null : secrets;
  }

  /** See SandboxProcess.countIn. */
  countIn(account: SessionMemoryAccount): void {
    this.proc.countIn(account);
  }

  /** See SandboxProcess.watchMemory. */
  watchMemory(on: boolean): void {
    this.proc.watchMemory(on);
  }

  /** See SandboxProcess.spin. */
  spin(on: boolean): void {
    this.proc.spin(on);
  }

  /**
   * Waits a few µs, spinning, for the sandbox's next frame (see SandboxProcess.nextOutputSpinning),
   * and hands what came to the frame handler as the event loop would have.
   */
  awaitOutputSpinning(): void {
    const bytes = this.proc.nextOutputSpinning();
    if (bytes !== null) this.onStdout(bytes);
  }

  /** See SandboxProcess.watchIdle. */
  watchIdle(whileAsked = false): void {
    this.proc.watchIdle(whileAsked);
  }

  kill(reason: KillReason, detail: string): void {
    this.proc.kill(reason, detail);
  }

  /** Why the host killed it (the first reason), or null. */
  get killed(): Extract<SandboxEnd, { kind: "killed" }> | null {
    return this.proc.killed;
  }

  private onStdout(chunk: Uint8Array): void {
    if (this.proc.isKilled) return;
    if (this.betweenPrograms) return this.wroteBetweenPrograms();
    try {
      for (const line of this.splitter.push(chunk)) this.frameHandler(parseSandboxFrame(line));
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      this.kill("protocol", error.message);
    }
  }
}
