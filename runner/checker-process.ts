// How the type checker's process is started: TypeScript's native tsc, behind a lifeline, off the
// network, and dying with tacit. The one-shot check (typecheck.ts) and tacit serve's incremental
// checker (incremental-typecheck.ts) both start it so.
//
// Each process on the way to tsc asks the kernel to kill it when its parent (the thread of tacit
// that spawned it) ends (setpriv --pdeathsig, see parent-death.ts), but only once it runs: a chain
// started in the instant tacit was SIGKILLed ran a check written to take minutes to its end. So
// the last process before tsc is a shell that waits for that thread's answer on a lifeline, as a
// command's first shell does (exec/lifeline.ts): an answer means the thread was alive after every
// request was made; tacit gone first, nothing runs.

import { lifelineCheck, stdioLifelineCheck } from "./exec/lifeline.js";
import { COMMAND_LIFELINE_FD, SHELL } from "./exec/pid-namespace.js";
import { offTheNetwork } from "./network-namespace.js";
import { diesWithTacit } from "./parent-death.js";
import { tscExecutable } from "./paths.js";

/** Where the one-shot checker's first shell gets its lifeline: fd 3, as a command's (spawn's fourth stdio slot). */
export const CHECKER_LIFELINE_FD = COMMAND_LIFELINE_FD;

/**
 * How the checker's first shell gets its lifeline: on CHECKER_LIFELINE_FD (answered with
 * answerLifeline), or on its stdin and stdout, where TypeScript's API starts it with no other
 * descriptor (answered with answerStdioLifeline).
 */
export type CheckerLifeline = "descriptor" | "stdio";

/**
 * tsc with `args`, as the checker runs: see above. Every process on the way runs the next in its
 * place (setpriv, unshare without --fork, the shell's exec): the pid spawned is tsc's.
 */
export function checkerCommand(args: readonly string[], lifeline: CheckerLifeline): { file: string; args: string[] } {
  const check = lifeline === "descriptor" ? lifelineCheck(CHECKER_LIFELINE_FD) : stdioLifelineCheck();
  const behindLifeline = [SHELL, "-c", `${check}; exec "$@"`, "tacit-checker", tscExecutable(), ...args];
  const isolated = offTheNetwork(behindLifeline[0]!, behindLifeline.slice(1));
  return diesWithTacit(isolated.file, isolated.args);
}
