// A command started in the instant tacit is killed outright (SIGKILL, SIGQUIT, a crash: no exit
// hook runs) could outlive it with no time limit. Each process on the way to it asks the kernel to
// kill it when its parent ends (setpriv --pdeathsig, then unshare --kill-child for the
// namespace's first process), but each asks only once it runs: a parent that died before then
// sends nothing, and the chain ran on. A CI run at load 14 did that (e3168a9). Checking that tacit
// is there after asking is not enough either: a dying Node ends thread by thread, and its main
// thread (the children's parent) can be gone, and unshare with it, while its other threads still
// hold its files open.
//
// So the command's first shell holds a lifeline: a socket whose other end only tacit holds (Node's
// end is close-on-exec, so no other child gets it), which reads end-of-file only once tacit has
// closed it or gone altogether. The shell writes a byte on it first (the write fails once tacit
// has gone, and nothing runs), then leaves a watcher reading it in the background, which kills
// what the command started as soon as it ends; only then does the command run. The parent-death
// signals stay: they end the chain at once, where the watcher needs tacit wholly gone.

import type { Readable } from "node:stream";

/** The exit status of a first shell that found tacit gone (nobody reads it: tacit has ended). */
const TACIT_GONE_STATUS = 125;

/**
 * What the watcher kills once tacit has gone: in a PID namespace, every process in it but its first
 * (`kill -1`; the kernel ends the namespace with that shell); without one, the process group the
 * shell leads (the executor starts it detached), which a command can leave. Named by the shell's
 * pid, not as the watcher's own group (`kill 0`): a shell started in its starter's group then
 * kills no group at all rather than its starter's.
 */
export type LifelineScope = "namespace" | "process-group";

/**
 * The shell text the first process runs before anything else, with the lifeline on its fd `fd`:
 * it goes on only while tacit holds the other end, starts the watcher (the shell's last
 * background job, `$!`), and closes its own copy, so that nothing it starts holds the lifeline.
 */
export function lifelineWatch(fd: number, scope: LifelineScope): string {
  const target = scope === "namespace" ? "-1" : "-$$";
  return (
    `{ printf . >&${fd}; } 2>/dev/null || exit ${TACIT_GONE_STATUS}; ` +
    `(read _ <&${fd}; kill -KILL ${target}) </dev/null >/dev/null 2>&1 & exec ${fd}>&-`
  );
}

/**
 * Reads tacit's end of a lifeline (`spawn`'s "pipe" in the lifeline's slot) until the child
 * closes it. Node reports a child closed only once each of its streams has ended, and a stream
 * nobody reads never ends.
 */
export function holdLifeline(stream: Readable): void {
  stream.on("error", () => undefined); // A child that ended before it checked.
  stream.resume();
}
