// A command started in the instant tacit is killed outright (SIGKILL, SIGQUIT, a crash: no exit
// hook runs) could outlive it with no time limit. Each process on the way to it asks the kernel to
// kill it when its parent ends (setpriv --pdeathsig, then unshare --kill-child for the
// namespace's first process), but each asks only once it runs: a parent that died before then
// sends nothing, and the chain ran on. A CI run at load 14 did that (e3168a9). Checking that tacit
// is there after asking is not enough either: a dying Node ends thread by thread, and its main
// thread (the children's parent) can be gone, and unshare with it, while its other threads still
// hold its files open.
//
// So the command's first shell, which starts after every one of those requests, asks tacit's main
// thread on a lifeline (a socket whose other end only tacit holds; Node's end is close-on-exec, so
// no other child gets it) and waits for its answer before anything runs. An answer means the main
// thread was alive after every request was made. The kernel signals a child when the thread that
// started it ends, and that is the main thread (Node spawns from it): its end, whenever it comes,
// kills setpriv's process (unshare), whose end kills the first shell, whose end ends the
// namespace. With tacit gone first, the write fails or the read finds end-of-file, and nothing
// runs. No process stays behind to watch: a watcher costs a fork per command (0.4 ms here).

import type { Readable, Writable } from "node:stream";

/** The exit status of a first shell that found tacit gone (nobody reads it: tacit has ended). */
const TACIT_GONE_STATUS = 125;

/**
 * The shell text the first process runs before anything else, with the lifeline on its fd `fd`:
 * it asks (a byte), goes on only once tacit's answer (a line) has come, and closes its copy, so
 * that nothing it starts holds the lifeline.
 */
export function lifelineCheck(fd: number): string {
  return `{ printf . >&${fd} && read _ <&${fd}; } 2>/dev/null || exit ${TACIT_GONE_STATUS}; exec ${fd}>&-`;
}

/**
 * Answers a command's first shell on tacit's end of its lifeline (`spawn`'s "pipe" in the
 * lifeline's slot): from this, the main thread, whose end is what ends the command (see above).
 * The stream is read to its end, or Node would never report the child closed.
 */
export function answerLifeline(stream: Readable & Writable): void {
  stream.on("error", () => undefined); // A child that ended before it asked, or before the answer.
  stream.once("data", () => {
    if (!stream.destroyed) stream.write("\n");
  });
  stream.resume();
}
