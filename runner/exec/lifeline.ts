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

import { readSync, writeSync } from "node:fs";
import type { Readable, Writable } from "node:stream";

/** The exit status of a first shell that found tacit gone (nobody reads it: tacit has ended). */
const TACIT_GONE_STATUS = 125;

/** The shell's question (a byte written on fd `ask`) and its wait for tacit's answer (a line read on fd `answer`). */
function askAndWait(ask: number, answer: number): string {
  return `{ printf . >&${ask} && read _ <&${answer}; } 2>/dev/null || exit ${TACIT_GONE_STATUS}`;
}

/**
 * The shell text the first process runs before anything else, with the lifeline on its fd `fd`:
 * it asks (a byte), goes on only once tacit's answer (a line) has come, and closes its copy, so
 * that nothing it starts holds the lifeline.
 */
export function lifelineCheck(fd: number): string {
  return `${askAndWait(fd, fd)}; exec ${fd}>&-`;
}

/**
 * lifelineCheck for a program whose only channel to tacit is its standard input and output, which
 * it then needs itself: tacit serve's type checker, which TypeScript's API starts with no other
 * descriptor (runner/incremental-typecheck.ts). The question goes out on stdout, the answer comes
 * in on stdin, and both are left open for the program. Answered with answerStdioLifeline, before
 * anything else is written to the program or read from it.
 */
export function stdioLifelineCheck(): string {
  return askAndWait(1, 0);
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

/** What a wait for the question on a non-blocking descriptor pauses on (a millisecond at a time). */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * Answers the first shell of stdioLifelineCheck, on tacit's ends of its stdout (`fromChild`) and
 * stdin (`toChild`): synchronously, from the thread that spawned it, whose end is what ends it
 * (tacit serve's checker thread). Reads exactly the question, so the program's own output that
 * follows is left for its reader. False where the child ended before it asked (the namespace could
 * not be made, say) or before the answer reached it.
 */
export function answerStdioLifeline(fromChild: number, toChild: number): boolean {
  const question = Buffer.alloc(1);
  for (;;) {
    try {
      if (readSync(fromChild, question, 0, 1, null) === 0) return false;
      break;
    } catch (error) {
      // A descriptor left non-blocking: the question has not come yet.
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") return false;
      Atomics.wait(PAUSE, 0, 0, 1);
    }
  }
  try {
    writeSync(toChild, "\n");
    return true;
  } catch {
    return false;
  }
}
