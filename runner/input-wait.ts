// Whether a sandbox's main thread waits, blocked, reading its stdin: the sign that it has
// finished writing its report. The stub writes each frame from the main thread, then, after a
// report, reads the next program there; agent code runs in the same realm and can write what
// the stub writes, so nothing in the protocol can tell the host the report's write is over. The
// kernel can: a write the main thread has returned from is in the pipe, and a thread sleeping in
// read(0) is not writing. /proc/<pid>/syscall says which system call a sleeping thread is in,
// and its first argument (the file descriptor); it needs the access /proc/<pid>/mem does
// (ptrace's, by the same user or with CAP_SYS_PTRACE), which tacit has to the sandbox it started,
// in its user and PID namespaces too (measured as root and as nobody).

import { readFileSync } from "node:fs";

/**
 * "reading-input": the main thread sleeps in read(2) on fd 0. "elsewhere": it runs, or sleeps in
 * another call or on another descriptor. "unknown": /proc does not say (no /proc, no access to the
 * process, an architecture whose numbers are not known here, or the process is gone).
 */
export type InputWait = "reading-input" | "elsewhere" | "unknown";

/** read(2)'s system call number, by Node's name of the architecture (x86_64's and the generic table's). */
const READ_SYSCALL: Partial<Record<NodeJS.Architecture, string>> = { x64: "0", arm64: "63", riscv64: "63", loong64: "63" };

/**
 * What the main thread of process `pid` (its thread group leader: Deno runs JavaScript there) is
 * doing. The file reads "running" for a thread on a CPU or about to be; "-1 …" for one that sleeps
 * but not in a system call; otherwise the call's number and its six arguments, in hex.
 */
export function inputWaitOf(pid: number): InputWait {
  const read = READ_SYSCALL[process.arch];
  if (read === undefined) return "unknown";
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/syscall`, "latin1");
  } catch {
    return "unknown";
  }
  const [call, fd] = text.trim().split(" ");
  if (call === undefined || call === "") return "unknown";
  return call === read && fd === "0x0" ? "reading-input" : "elsewhere";
}
