// Descriptors tacit was given by whatever started it, beyond stdin, stdout and stderr. One
// opened without close-on-exec (a harness's pipe, a shell's `3>file`, an MCP client's log)
// would pass on to every process tacit starts: to the sandbox, whose code (past the validator)
// writes to or reads from any descriptor by its number with Node's process.binding("pipe_wrap")
// (Pipe#open(fd): no permission is asked; test/attacks/runtime.test.ts writes to fd 0 so), and
// to every permitted command, which could with `>&3`, whatever the policy said. tacit uses none of them,
// so it closes them before it starts anything. Node's own descriptors are all opened
// close-on-exec (libuv does so everywhere), which is how they are told apart.

import { closeSync, openSync, readdirSync, readSync } from "node:fs";

/** O_CLOEXEC as /proc/PID/fdinfo prints it (the "flags:" field is octal). */
const O_CLOEXEC = 0o2000000;
/** fdinfo begins "pos:\t<n>\nflags:\t<octal>\n"; the rest (mnt_id, ino, ...) is not needed. */
const FDINFO_HEAD_BYTES = 128;

/**
 * Closes every descriptor above 2 that would survive exec; returns the numbers closed. Without
 * /proc (not Linux, or not mounted) nothing can be told apart, and nothing is closed.
 */
export function closeInheritedDescriptors(): number[] {
  let names: string[];
  try {
    names = readdirSync("/proc/self/fd");
  } catch {
    return [];
  }
  const closed: number[] = [];
  const buffer = Buffer.allocUnsafe(FDINFO_HEAD_BYTES);
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    const flags = flagsOf(fd, buffer);
    if (flags === null || (flags & O_CLOEXEC) !== 0) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // Closed between the look and now: nothing left to pass on.
    }
  }
  return closed;
}

/**
 * The descriptor's open flags, or null if it is gone (the directory listing's own descriptor,
 * for one). Three system calls: readFileSync, which asks /proc for a size it does not give,
 * took 2.6 times as long, and Node starts with about twenty descriptors to look at.
 */
function flagsOf(fd: number, buffer: Buffer): number | null {
  let info: string;
  try {
    const handle = openSync(`/proc/self/fdinfo/${fd}`, "r");
    try {
      info = buffer.toString("latin1", 0, readSync(handle, buffer, 0, buffer.length, 0));
    } finally {
      closeSync(handle);
    }
  } catch {
    return null;
  }
  const flags = /^flags:\s*([0-7]+)$/m.exec(info);
  return flags === null ? null : Number.parseInt(flags[1]!, 8);
}
