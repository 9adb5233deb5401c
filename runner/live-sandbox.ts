// A REPL session's sandbox: one Deno process that runs the session's snippets one after
// another, each as its own module, and keeps their top-level bindings (see session.ts).

import { type NextFrame, PROTOCOL_VERSION, type StartFrame } from "../library/protocol.js";
import { type Sandbox, sandboxWith } from "./sandbox.js";
import type { SandboxProcess } from "./sandbox-process.js";
import type { SessionMemoryAccount } from "./sessions-memory.js";

export class LiveSandbox {
  readonly sandbox: Sandbox;
  private exited = false;

  /**
   * Takes over `prestarted` if it was started with these limits, else starts a process.
   * `memory`: the session's share of what tacit serve's sessions hold together, which its readings count in.
   */
  constructor(memoryLimitMb: number, private readonly randomSeed: number, prestarted?: SandboxProcess, memory?: SessionMemoryAccount) {
    this.sandbox = sandboxWith(memoryLimitMb, prestarted);
    if (memory) this.sandbox.countIn(memory);
    void this.sandbox.ended.then(() => (this.exited = true));
  }

  /** Still running and not condemned: it can take the next snippet. */
  get usable(): boolean {
    return !this.exited && this.sandbox.killed === null;
  }

  private given = 0;

  /** How many snippets it has been given (see programFrame): one given none since is as it was. */
  get snippetsGiven(): number {
    return this.given;
  }

  /** The frame that runs `code` next: the start frame the first time, then next-snippet frames. */
  programFrame(code: string, displayName: string): StartFrame | NextFrame {
    if (this.given++ > 0) return { type: "next", code, displayName };
    return { type: "start", protocol: PROTOCOL_VERSION, code, displayName, hideRuntime: true, randomSeed: this.randomSeed, session: true };
  }

  /** Why it was ended between snippets for going on running (see SandboxProcess.watchIdle), or null. */
  get lingered(): string | null {
    const killed = this.sandbox.killed;
    return killed?.reason === "lingered" ? killed.detail : null;
  }

  async end(detail: string): Promise<void> {
    this.sandbox.kill("cancelled", detail);
    await this.sandbox.ended;
  }
}
