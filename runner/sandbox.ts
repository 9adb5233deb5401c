// The host's side of a running sandbox: every line the process writes to stdout is parsed
// and validated as a protocol frame before anything acts on it; anything else ends it.

import { encodeFrame, type HostFrame, type SandboxFrame } from "../library/protocol.js";
import { FrameSplitter, parseSandboxFrame, ProtocolError } from "./frames.js";
import type { HostSecrets } from "./host-secrets.js";
import type { PausableTimer } from "./pausable-timer.js";
import { type KillReason, type SandboxEnd, SandboxProcess, type SandboxOptions } from "./sandbox-process.js";
import type { SessionMemoryAccount } from "./sessions-memory.js";
import { answerTook } from "./spin-read.js";
import { setImmediate as nextTurn, setTimeout as sleep } from "node:timers/promises";

const NEWLINE = 0x0a;

/**
 * How long the host waits, sleeping in slices here (its event loop held), for a sandbox whose main
 * thread is running after its report: the stub is microseconds from its read, unless the machine
 * has no CPU free for it, and a slice of sleep frees the host's. Measured on 2 CPUs at a load of
 * 5 to 9: of 300 snippets, 290 were found reading at the first look and the rest within 1 to 6
 * slices; with event loop turns in their place, 1 in 10 came to a timer's 1 ms.
 */
const REPORT_RUNNING_WAIT_MS = 1;
const REPORT_SLEEP_SLICE_MS = 0.02;
/** Then, and for one that sleeps elsewhere, at the event loop's next turns (it reads what the sandbox writes), */
const REPORT_LOOKS_NEXT_TURNS = 8;
/** then at intervals doubling up to this (a sandbox that never finishes is ended by its time limit). */
const REPORT_LOOK_MAX_INTERVAL_MS = 16;
/** What Atomics.wait sleeps on (nothing wakes it but its timeout). */
const sleepCell = new Int32Array(new SharedArrayBuffer(4));

export type { SandboxEnd, SandboxOptions };

/**
 * encodeFrame(frame), the same line byte for byte: a granted reply of text (a read's, the reply
 * the host sends most) is written around its value's JSON, which JSON.stringify of the whole
 * frame built walking the frame object, key by key (some 1 µs of a small read's host CPU). Its
 * keys are the reply's, in the order conversation.ts gives them; any other frame is encodeFrame's.
 */
export function encodedHostFrame(frame: HostFrame): string {
  if (frame.type === "reply" && frame.ok && typeof frame.value === "string" && Number.isSafeInteger(frame.id)) {
    return `{"type":"reply","id":${frame.id},"ok":true,"value":${JSON.stringify(frame.value)}}\n`;
  }
  return encodeFrame(frame);
}

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
  /**
   * From a report ("done" or "failed") until the next program is sent: it must write nothing at
   * all. Bytes after the report, in the chunk that brought it or later, end it as a violation.
   */
  private betweenPrograms = false;
  /**
   * A session's sandbox whose program is over (see awaitProgram), until the next is sent: what it
   * writes then comes from something a snippet left running, not from the report.
   */
  private idle = false;
  /** When the request the host is answering came (performance.now()), for spin-read.ts answerTook; null: none is. */
  private requestAt: number | null = null;

  /** Whether anything was sent to the process or came from it: until then it can serve another evaluation (see release). */
  private exchanged = false;
  private readonly onData = (chunk: Buffer): void => {
    this.exchanged = true;
    this.onStdout(chunk);
  };

  /** Takes over a started process; its stdout stays paused until now, so nothing is lost. */
  constructor(private readonly proc: SandboxProcess) {
    proc.stdout.on("data", this.onData);
    // A process another Sandbox let go of (see release) was paused by it: a listener alone does not resume it.
    proc.stdout.resume();
  }

  /**
   * Lets go of `expected`, this sandbox's process, where nothing was sent to it and it wrote nothing
   * (a warm spare taken by a call whose script was refused before running): it runs nothing but
   * tacit's bootstrap, waiting for a program, and can serve another call as it is. Its stdout is
   * paused again, so that what it may write meanwhile waits for the next Sandbox. Null where it
   * cannot be let go of, and this sandbox keeps it.
   */
  release(expected: SandboxProcess): SandboxProcess | null {
    if (this.proc !== expected || this.exchanged || this.proc.isKilled || this.proc.hasEnded) return null;
    this.proc.stdout.off("data", this.onData);
    this.proc.stdout.pause();
    return this.proc;
  }

  get ended(): Promise<SandboxEnd> {
    return this.proc.ended;
  }

  onFrame(handler: (frame: SandboxFrame) => void): void {
    this.frameHandler = handler;
  }

  send(frame: HostFrame): void {
    this.exchanged = true;
    if (frame.type !== "reply") this.betweenPrograms = this.idle = false;
    else if (this.requestAt !== null) {
      answerTook((performance.now() - this.requestAt) * 1000);
      this.requestAt = null;
    }
    const line = encodedHostFrame(frame);
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
    this.idle = true;
  }

  /**
   * Resolves once the sandbox has finished writing the report it sent, so that its program can be
   * called over: its main thread waits, blocked, reading its stdin (where the stub waits for the
   * next program, or, in a one-shot, for its end), and all it wrote before is read (into the frame
   * splitter, where anything after the report ends it as a protocol violation). Agent code can
   * make the report's write carry more after it (it can replace TextEncoder's encode and
   * encodeInto, which the stub calls), and Deno writes that in system calls of its own, which the
   * host may read after the report: a snippet was answered as a success, and the rest, arriving
   * while its sandbox waited for the next, ended it, telling no one. Also resolves once the
   * sandbox is killed or gone; and at once where /proc does not say what its main thread does (no
   * /proc, no access to the process): there the host goes on as soon as it has the report, and
   * what comes after it, should it come after the answer, ends the sandbox then (see
   * wroteBetweenPrograms). So do writes of other threads (a worker's), which are not ordered with
   * the report's.
   */
  async reportWritten(): Promise<void> {
    const sleepUntil = performance.now() + REPORT_RUNNING_WAIT_MS;
    for (let turn = 0; ; ) {
      if (this.proc.isKilled || this.proc.hasEnded) return;
      const wait = this.proc.inputWait();
      if (wait === "unknown") return;
      if (wait === "reading-input") return this.readWrittenBeforeWait();
      if (wait === "running" && performance.now() < sleepUntil) {
        Atomics.wait(sleepCell, 0, 0, REPORT_SLEEP_SLICE_MS);
        continue;
      }
      // Asleep in a write to a full pipe (or anywhere else), or running on: the event loop reads what comes meanwhile.
      await (turn < REPORT_LOOKS_NEXT_TURNS ? nextTurn() : sleep(Math.min(2 ** (turn - REPORT_LOOKS_NEXT_TURNS), REPORT_LOOK_MAX_INTERVAL_MS)));
      turn++;
    }
  }

  /**
   * Hands all the sandbox wrote before its main thread began to wait to onStdout: it is in the
   * pipe, read here at once; where the pipe cannot be read but by the event loop, read by it
   * (two turns: the first may come before its next poll).
   */
  private async readWrittenBeforeWait(): Promise<void> {
    for (;;) {
      if (this.proc.isKilled) return;
      const bytes = this.proc.readOutputNow();
      if (bytes === "none") return;
      if (bytes === "unreadable") {
        await nextTurn();
        await nextTurn();
        return;
      }
      this.onStdout(bytes);
    }
  }

  private wroteBetweenPrograms(): void {
    // The program was called over: its report's write had ended (see reportWritten), so another
    // thread wrote this, one the snippet left running (a worker), and a rebuild would replay it.
    if (this.idle) {
      return this.kill(
        "lingered",
        "it wrote to the protocol channel while it waited for the next snippet (the library writes nothing there; a thread " +
          "a snippet left running, a worker, did)",
      );
    }
    this.kill(
      "protocol",
      "the sandbox wrote to the protocol channel after reporting its result (part of a frame, or more): nothing may come " +
        "after a report (in a session, until the next snippet), and the library writes nothing there; leave its writing of frames alone",
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

  /** See SandboxProcess.timeLimit. */
  timeLimit(limitMs: number, onExpire: () => void): PausableTimer {
    return this.proc.timeLimit(limitMs, onExpire);
  }

  /** See SandboxProcess.watchMemory. */
  watchMemory(on: boolean): void {
    this.proc.watchMemory(on);
  }

  /** See SandboxProcess.spin. */
  spin(on: boolean): void {
    this.proc.spin(on);
  }

  /** See SandboxProcess.spinning. */
  get spinning(): boolean {
    return this.proc.spinning;
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
      const arrivedAt = performance.now();
      for (const line of this.splitter.push(chunk)) {
        const frame = parseSandboxFrame(line);
        if (frame.type === "done" || frame.type === "failed") this.betweenPrograms = true;
        if (frame.type === "request") this.requestAt = arrivedAt;
        // A frame after the report (in the same chunk) is the conversation's to refuse, by its kind.
        this.frameHandler(frame);
      }
      // The report ends its chunk, newline and all, unless the sandbox wrote on after it.
      if (this.betweenPrograms && chunk[chunk.length - 1] !== NEWLINE && !this.proc.isKilled) this.wroteBetweenPrograms();
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      this.kill("protocol", error.message);
    }
  }
}
