// Whether a sandbox's main thread waits, blocked, reading its stdin: the sign that it has
// finished writing its report. The stub writes each frame from the main thread, then, after a
// report, reads the next program there; agent code runs in the same realm and can write what
// the stub writes, so nothing in the protocol can tell the host the report's write is over. The
// kernel can: a write the main thread has returned from is in the pipe, and a thread sleeping in
// read(0) is not writing. /proc/<pid>/syscall says which system call a sleeping thread is in,
// and its first argument (the file descriptor); it needs the access /proc/<pid>/mem does
// (ptrace's, by the same user or with CAP_SYS_PTRACE), which tacit has to the sandbox it started,
// in its user and PID namespaces too (measured as root and as nobody).

import { closeSync, openSync, readSync } from "node:fs";

/**
 * "reading-input": the main thread sleeps in read(2) on fd 0. "running": it runs, or waits for a
 * CPU to run on. "sleeping-elsewhere": it sleeps in another call, or on another descriptor (in a
 * write to a full pipe, say). "unknown": /proc does not say (no /proc, no access to the process,
 * an architecture whose numbers are not known here, or the process is gone).
 */
export type InputWait = "reading-input" | "running" | "sleeping-elsewhere" | "unknown";

/** read(2)'s system call number, by Node's name of the architecture (x86_64's and the generic table's). */
const READ_SYSCALL: Partial<Record<NodeJS.Architecture, string>> = { x64: "0", arm64: "63", riscv64: "63", loong64: "63" };

/** "running", or a number and seven fields of up to 18 characters each. */
const SYSCALL_TEXT_BYTES = 256;

/**
 * The main thread (the thread group leader: Deno runs JavaScript there) of one process, looked at
 * through its /proc/<pid>/syscall, opened at the first look and read again at each (one pread; the
 * kernel checks access at each read). The open file stays the process's: should it end and its
 * pid be reused, reads fail rather than show another process.
 */
export class MainThreadLook {
  private fd: number | null | undefined;
  private readonly buffer = Buffer.alloc(SYSCALL_TEXT_BYTES);

  /** `pid` finds the process (null where it is not running) at the first look. */
  constructor(private readonly pid: () => number | null) {}

  /**
   * What the main thread is doing. The file reads "running" for a thread on a CPU or waiting for
   * one; "-1 …" for one that sleeps but not in a system call; otherwise the call's number and its
   * six arguments, in hex.
   */
  inputWait(): InputWait {
    const read = READ_SYSCALL[process.arch];
    if (read === undefined) return "unknown";
    if (this.fd === undefined) {
      const pid = this.pid();
      if (pid === null) return "unknown";
      try {
        this.fd = openSync(`/proc/${pid}/syscall`, "r");
      } catch {
        this.fd = null;
      }
    }
    if (this.fd === null) return "unknown";
    let length: number;
    try {
      length = readSync(this.fd, this.buffer, 0, this.buffer.length, 0);
    } catch {
      return "unknown";
    }
    const [call, fd] = this.buffer.toString("latin1", 0, length).trim().split(" ");
    if (call === undefined || call === "") return "unknown";
    if (call === "running") return "running";
    return call === read && fd === "0x0" ? "reading-input" : "sleeping-elsewhere";
  }

  /** Lets go of the open file. */
  close(): void {
    if (typeof this.fd === "number") closeSync(this.fd);
    this.fd = null;
  }
}
