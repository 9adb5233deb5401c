// How the type checker's process is started: TypeScript's native tsc, behind a lifeline, off the
// network, and, when tacit runs as root, as the sandbox's unprivileged user. The one-shot check
// (typecheck.ts) and tacit serve's incremental checker (incremental-typecheck.ts) both start it so.
//
// Dies with tacit. Each process on the way to tsc asks the kernel to kill it when its parent (the
// thread of tacit that spawned it) ends (setpriv --pdeathsig, see parent-death.ts), but only once it
// runs: a chain started in the instant tacit was SIGKILLed ran a check written to take minutes to
// its end. So the last process before tsc is a shell that waits for that thread's answer on a
// lifeline, as a command's first shell does (exec/lifeline.ts): an answer means the thread was
// alive after every request was made; tacit gone first, nothing runs.
//
// As whom. The checker runs no agent code, but it reads the agent's, and as root it could read
// every file root may, and had every capability root has. As root, where the sandbox switches to
// its unprivileged user (sandbox-user.ts), the checker runs as that user too, with no capability and
// no way to gain one, where that user can reach tsc, its lib files, interface.d.ts and the
// temporary directory the checker's own directory is made in (nothing binds them back for it, as
// the sandbox's mount namespace does: a tacit installed under a /root only root may enter keeps a
// checker that runs as root, as before). Its working directory is shared with that user's group
// for reading only (shareWithChecker): root still owns every file in it.

import { chmodSync, chownSync, readdirSync, realpathSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { lifelineCheck, stdioLifelineCheck } from "./exec/lifeline.js";
import { COMMAND_LIFELINE_FD, SHELL } from "./exec/pid-namespace.js";
import { executable } from "./exec/program-path.js";
import { offTheNetwork, sandboxNetwork } from "./network-namespace.js";
import { diesWithTacit, SETPRIV_CANDIDATES } from "./parent-death.js";
import { interfacePath, tscExecutable } from "./paths.js";
import { WITHOUT_CAPABILITIES } from "./sandbox-mounts.js";
import { asSandboxUser, SANDBOX_GID, SANDBOX_UID, switchesToSandboxUser } from "./sandbox-user.js";

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
  const user = checkerUserSwitch();
  if (user === null) {
    const isolated = offTheNetwork(behindLifeline[0]!, behindLifeline.slice(1));
    return diesWithTacit(isolated.file, isolated.args);
  }
  // This setpriv asks for the parent-death signal itself, after its switch (which clears it): the
  // shell after it asks on the lifeline, so no setpriv is needed before unshare.
  const network = sandboxNetwork();
  if (network.kind === "own-namespace" && !network.userNamespace) {
    // Root's own network namespace: unshare needs root's capability, so the switch comes after it.
    return { file: network.program, args: [...network.argsBefore, ...user, ...behindLifeline] };
  }
  // A user namespace (made by the unprivileged user, as the sandbox's is), or none at all.
  const isolated = offTheNetwork(behindLifeline[0]!, behindLifeline.slice(1));
  return { file: user[0]!, args: [...user.slice(1), isolated.file, ...isolated.args] };
}

let userSwitch: readonly string[] | null | undefined;

/**
 * setpriv and its arguments, through its "--", that make the checker the sandbox's unprivileged
 * user without a capability (as the sandbox is made where it has no mount namespace); null where
 * it runs as tacit does: tacit is not root, or that user cannot be switched to (see
 * switchesToSandboxUser) or could not reach what the checker reads. Decided once per thread.
 */
export function checkerUserSwitch(): readonly string[] | null {
  if (userSwitch !== undefined) return userSwitch;
  userSwitch = null;
  const setpriv = SETPRIV_CANDIDATES.find(executable);
  if (setpriv === undefined || !switchesToSandboxUser() || !sandboxUserReachesChecker()) return userSwitch;
  // WITHOUT_CAPABILITIES ends with setpriv's "--".
  userSwitch = [setpriv, ...asSandboxUser(), ...WITHOUT_CAPABILITIES];
  return userSwitch;
}

/**
 * Lets the checker, where it runs as the sandbox's user, read `dir` (its working directory, made
 * owner-only by makeTempDir) and `files` in it: their group becomes that user's, with read (and,
 * for `dir`, search) for the group only. Root keeps owning them, so the checker can change none;
 * a file not named (the serve checker's launcher) stays root's alone. Nothing where the checker runs as tacit.
 */
export function shareWithChecker(dir: string, files: readonly string[]): void {
  if (checkerUserSwitch() === null) return;
  const owner = process.geteuid!();
  for (const file of files) {
    chownSync(file, owner, SANDBOX_GID);
    chmodSync(file, 0o640);
  }
  // Last: until now, no one but root could enter it.
  chownSync(dir, owner, SANDBOX_GID);
  chmodSync(dir, 0o750);
}

/** Permission bits: read, write (unused here), execute or search. */
const READ = 4;
const SEARCH = 1;

/**
 * Whether the sandbox's user (SANDBOX_UID, group SANDBOX_GID, no other group) may do `want` to the
 * file `stat` describes, by its mode bits (an ACL is not read: one that refused that user what
 * the bits allow would make each check fail, saying that tsc or a file could not be read).
 */
function sandboxUserMay(stat: { uid: number; gid: number; mode: number }, want: number): boolean {
  const bits = stat.uid === SANDBOX_UID ? stat.mode >> 6 : stat.gid === SANDBOX_GID ? stat.mode >> 3 : stat.mode;
  return (bits & want) === want;
}

/** Whether the sandbox's user may `want` the file `file`, reached from / (each directory on the way, as named and as it really is, searchable). */
function sandboxUserReaches(file: string, want: number): boolean {
  try {
    const real = realpathSync(file);
    for (const named of new Set([file, real])) {
      for (let dir = path.dirname(named); ; dir = path.dirname(dir)) {
        if (!sandboxUserMay(statSync(dir), SEARCH)) return false;
        if (dir === path.dirname(dir)) break;
      }
    }
    return sandboxUserMay(statSync(real), want);
  } catch {
    return false;
  }
}

/**
 * Whether the sandbox's user can reach what the checker reads and runs: tsc, its lib files (read
 * by name, from tsc's own directory), interface.d.ts, and the temporary directory its working
 * directory is made in. A few dozen stats, once per thread.
 */
function sandboxUserReachesChecker(): boolean {
  const tsc = tscExecutable();
  const libDir = path.dirname(tsc);
  try {
    const libs = readdirSync(libDir).filter((name) => name.startsWith("lib.") && name.endsWith(".d.ts"));
    return (
      sandboxUserReaches(tsc, READ | SEARCH) &&
      sandboxUserReaches(libDir, READ | SEARCH) &&
      libs.every((name) => sandboxUserMay(statSync(path.join(libDir, name)), READ)) &&
      sandboxUserReaches(interfacePath, READ) &&
      sandboxUserReaches(tmpdir(), SEARCH)
    );
  } catch {
    return false;
  }
}
