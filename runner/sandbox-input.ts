// The sandbox's stdin, over which the host sends it its program and every reply.
//
// Every request is a round trip in which each side sleeps while the other works. On a virtual
// machine whose idle vCPUs halt at once (measured on this project's machines: a Firecracker
// guest with haltpoll off), waking the sleeping side costs more than answering it: a bare
// Node <-> Deno round trip took 74 µs, about 13 reads of a small file. So while the host answers
// at once, the sandbox's stdin is non-blocking: its Deno retries the read in a loop instead of
// sleeping, and a reply needs no wake-up (the same round trip: 10-17 µs). The host turns it
// back to blocking for anything slower, and between programs (see converse()).
//
// Only the host can set that, and only through the open file the sandbox's fd 0 shares with an
// end the host keeps: a pipe from spawn() would not do (its child end is closed in the host).
// So the pair is a Unix socket in a fresh owner-only directory. The sandbox's end is connected
// at once (Deno starts without waiting); the host's end is accepted a moment later, before
// anything is written, and proves it is the one tacit connected by a random token sent on the
// sandbox's end. Where the pair cannot be made, a plain pipe serves, without spinning.

import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeSync } from "node:fs";
import net from "node:net";
import { availableParallelism, tmpdir } from "node:os";
import path from "node:path";
import { randomBytes } from "./random-token.js";
import { descriptorOf, sandboxSpinningPays, spinningPays } from "./spin-read.js";

/** The directories the pairs are made in (temp-dirs.ts keeps scripts out of them). */
export const CHANNEL_DIR_PREFIX = "tacit-channel-";
const TOKEN_BYTES = 16;
/** sun_path holds 108 bytes on Linux and 104 on macOS, the last a NUL. */
const MAX_SOCKET_NAME_BYTES = process.platform === "darwin" ? 103 : 107;

export interface SandboxInput {
  /** What the process is given as its stdin. */
  readonly stdio: "pipe" | net.Socket;
  /** A directory to delete if tacit exits before close(). */
  readonly dir: string | null;
  /** Takes the started process; `failed` ends it, with why, if its input cannot be set up. */
  attach(child: ChildProcess, failed: (detail: string) => void): void;
  readonly writable: boolean;
  /** Writes `text`; `done` runs once it is in the socket or pipe, or the write failed. */
  write(text: string, done: () => void): void;
  /**
   * On: the host waits for the sandbox's next frame spinning (SpinningReader), and the sandbox's
   * reads of its stdin return at once and it retries them, spinning, where that pays
   * (spin-read.ts sandboxSpinningPays: not through slow answers on a machine of two CPUs). Off:
   * both sleep.
   */
  spin(on: boolean): void;
  /** Whether spin(true) found a CPU for it: the host may wait for its frames spinning. */
  readonly spinning: boolean;
  /** Whether all that was written is in the socket or pipe (its write callbacks may not have run yet). */
  readonly allWritten: boolean;
  /** Lets go of everything, once the process has ended. */
  close(): void;
}

/** The spinnable socket pair where it can be made, else a plain pipe. */
export function sandboxInput(): SandboxInput {
  try {
    return new SocketInput();
  } catch {
    return new PipeInput();
  }
}

/** A plain pipe, which the sandbox always sleeps on. */
export class PipeInput implements SandboxInput {
  readonly stdio = "pipe";
  readonly dir = null;
  private stdin: NodeJS.WritableStream & { writable: boolean; writableLength: number } | null = null;

  attach(child: ChildProcess): void {
    this.stdin = child.stdin!;
    // A sandbox that stops reading (it died, or never reads) must not crash the host.
    child.stdin!.on("error", () => undefined);
  }

  get writable(): boolean {
    return this.stdin?.writable ?? false;
  }

  write(text: string, done: () => void): void {
    this.stdin!.write(text, () => done());
  }

  get allWritten(): boolean {
    return this.stdin?.writableLength === 0;
  }

  /** Nothing to switch: the sandbox's end of spawn's pipe is not the host's to reach. */
  spin(): void {}

  readonly spinning = false;

  /** Nothing to let go of: the pipe ends with the process. */
  close(): void {}
}

/** libuv's own switch for a socket's O_NONBLOCK, on Node's handle (which types do not show). */
type BlockingSwitch = { setBlocking?: (blocking: boolean) => number };

/**
 * Sandboxes spinning at once, at most: one CPU is left to the host, and with one CPU none spins
 * (it would wait in the host's place). In tacit serve, sandboxes whose requests wait behind
 * another's would otherwise spin through the host's work and take its CPU; beyond this, they
 * sleep as before. Nor does any spin where spinning does not pay (see spin-read.ts spinningPays).
 */
const SPIN_LIMIT = availableParallelism() - 1;
/**
 * The longest reply written into the socket directly (see SocketInput.writtenAtOnce): one a
 * socket's buffer takes whole once the sandbox has read the last. Longer ones go through the stream.
 */
const MAX_DIRECT_WRITE_CHARS = 16 * 1024;
const spinningNow = new Set<SocketInput>();

class SocketInput implements SandboxInput {
  readonly dir: string;
  private readonly server: net.Server;
  /** The sandbox's end, kept by the host only to switch it (it is never read here). */
  readonly stdio: net.Socket;
  private hostEnd: net.Socket | null = null;
  /** Writes before the host's end is accepted, in order. */
  private queued: Array<[string, () => void]> = [];
  /** Spinning, as spin(true) left it: counted in spinningNow, and the host waits for the sandbox's frames spinning. */
  private spinningOn = false;
  /** Whether the sandbox's end is non-blocking: the sandbox spins in its reads. */
  private sandboxSpins = false;
  private closed = false;
  /** Set by attach(): ends the sandbox. */
  private failed: ((detail: string) => void) | null = null;
  /** Why the input failed, once it has. */
  private failure: string | null = null;
  /** Connections accepted that have not shown the token (another process's, if any). */
  private readonly strangers = new Set<net.Socket>();

  constructor() {
    // Named for this process (temp-dirs.ts): one left by a tacit killed before its sandbox
    // connected is then swept, as its check directories are.
    this.dir = mkdtempSync(path.join(tmpdir(), `${CHANNEL_DIR_PREFIX}${process.pid}-`));
    const address = path.join(this.dir, "s");
    try {
      // libuv cuts a longer name to fit (sun_path), and the socket would be made elsewhere.
      if (Buffer.byteLength(address) > MAX_SOCKET_NAME_BYTES) throw new Error(`${address} is too long for a socket's name`);
      this.server = net.createServer({ pauseOnConnect: true });
      // Reported later, and then it ends the sandbox; a failure to bind is known at once (a file
      // system without sockets, say), and a pipe serves instead: then nothing has attached.
      this.server.on("error", (error) => this.refuse(`the sandbox's input could not be set up: ${error.message}`));
      this.server.listen(address);
      if (!this.server.listening) throw new Error(`could not listen on ${address}`);
      this.stdio = net.connect(address);
      // Never read here: what arrives on this end is the sandbox's input.
      this.stdio.pause();
      this.stdio.on("error", () => undefined);
    } catch (error) {
      rmSync(this.dir, { recursive: true, force: true });
      throw error;
    }
    const token = randomBytes(TOKEN_BYTES);
    this.server.on("connection", (socket) => {
      socket.on("error", () => undefined);
      this.strangers.add(socket);
      let received = Buffer.alloc(0);
      socket.on("data", (chunk: Buffer) => {
        if (socket === this.hostEnd) {
          // Only the sandbox's end could send this, and the sandbox has no way to write to its stdin.
          this.refuse("something wrote back on the sandbox's input, which only the host writes to");
          return;
        }
        received = Buffer.concat([received, chunk]);
        if (received.length < TOKEN_BYTES) return;
        // Another process that connected too (it would need this owner-only directory) gets nothing.
        if (this.hostEnd !== null || !received.equals(token)) return void socket.destroy();
        this.accepted(socket);
      });
      socket.resume();
    });
    this.stdio.write(token);
  }

  attach(_child: ChildProcess, failed: (detail: string) => void): void {
    this.failed = failed;
    if (this.failure !== null) failed(this.failure);
  }

  private refuse(why: string): void {
    if (this.closed || this.failure !== null) return;
    this.failure = why;
    this.failed?.(why);
  }

  private accepted(socket: net.Socket): void {
    this.hostEnd = socket;
    this.strangers.delete(socket);
    for (const stranger of this.strangers) stranger.destroy();
    this.strangers.clear();
    this.server.close();
    rmSync(this.dir, { recursive: true, force: true });
    for (const [text, done] of this.queued) socket.write(text, () => done());
    this.queued = [];
  }

  get writable(): boolean {
    return !this.closed && (this.hostEnd?.writable ?? true);
  }

  write(text: string, done: () => void): void {
    if (this.hostEnd === null) return void this.queued.push([text, done]);
    const rest = this.writtenAtOnce(this.hostEnd, text);
    if (rest === null) done();
    else this.hostEnd.write(rest, () => done());
  }

  /**
   * Writes a small `text` into the socket itself, where the stream holds nothing (so its order is
   * kept): a reply to a small read went through Writable.write, a write request and two callbacks
   * a tick later, about 10 µs of the host's CPU while V8 is cold, 5 µs written so. Returns what is
   * left for the stream to write: null if the socket took it all, else what it did not take (all
   * of it where it took none: full, or failed, which the stream then reports as before). Linux
   * takes a text this short whole or not at all; a system that takes part gets the rest so.
   */
  private writtenAtOnce(socket: net.Socket, text: string): string | Buffer | null {
    if (text.length > MAX_DIRECT_WRITE_CHARS || socket.writableLength > 0 || !socket.writable) return text;
    const fd = descriptorOf(socket);
    if (fd === null) return text;
    let taken: number;
    try {
      taken = writeSync(fd, text);
    } catch {
      return text;
    }
    if (taken === Buffer.byteLength(text)) return null;
    return Buffer.from(text, "utf8").subarray(taken);
  }

  spin(on: boolean): void {
    if (this.closed) return;
    // Asked again at each reply: a sandbox spinning through a loop of reads stops once the machine
    // gets busy, not only at the next request that is slow to answer.
    if (on && !spinningPays()) on = false;
    if (on !== this.spinningOn) {
      if (on && spinningNow.size >= SPIN_LIMIT) return;
      if (!this.blockingSwitch()) return;
      this.spinningOn = on;
      if (on) spinningNow.add(this);
      else spinningNow.delete(this);
    }
    // Also asked at each reply: whether the sandbox itself spins through the next answer, or
    // sleeps through it while the host answers slowly (see sandboxSpinningPays).
    const sandboxSpins = on && sandboxSpinningPays();
    if (sandboxSpins === this.sandboxSpins) return;
    this.sandboxSpins = sandboxSpins;
    this.blockingSwitch()?.setBlocking(!sandboxSpins);
  }

  /** libuv's switch of the sandbox's end, where Node's handle shows one. */
  private blockingSwitch(): Required<BlockingSwitch> | null {
    const handle = (this.stdio as unknown as { _handle?: BlockingSwitch | null })._handle;
    return handle?.setBlocking ? (handle as Required<BlockingSwitch>) : null;
  }

  get spinning(): boolean {
    return this.spinningOn && !this.closed;
  }

  get allWritten(): boolean {
    return this.queued.length === 0 && this.hostEnd?.writableLength === 0;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    spinningNow.delete(this);
    for (const socket of this.strangers) socket.destroy();
    this.hostEnd?.destroy();
    this.stdio.destroy();
    if (this.server.listening) this.server.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
