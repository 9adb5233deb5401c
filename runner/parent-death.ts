// A child process that dies with tacit, however tacit ends. The exit hooks (exit-cleanup.ts)
// run only when Node exits by itself or by a signal it handles: SIGKILL (the OOM killer, a
// supervisor's last resort), SIGQUIT (Ctrl-\) or a crash end tacit without them, and a command
// (with the PID namespace it runs in) or a sandbox spinning in a loop then ran on, with no time
// limit left: its timer was in the process that had gone. util-linux `setpriv --pdeathsig`
// asks the kernel to send SIGKILL when the parent ends, then runs the program in its place
// (same process, same pid and process group). Kept free of dependencies: the CLI loads it first.

import { accessSync, constants, readFileSync } from "node:fs";

/** util-linux setpriv, where the host has it. */
export const SETPRIV_CANDIDATES = ["/usr/bin/setpriv", "/bin/setpriv"];

let setpriv: string | null | undefined;

/**
 * Whether `file` is a setpriv that knows --pdeathsig (util-linux 2.33 and later). Read from
 * its text, not by running it: a probe costs 10-30 ms here, before every first sandbox.
 */
function knowsParentDeathSignal(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return readFileSync(file).includes("--pdeathsig");
  } catch {
    return false;
  }
}

/** The setpriv to wrap children in, found once per process, or null (they run unwrapped, as before). */
export function parentDeathWrapper(): string | null {
  if (setpriv === undefined) setpriv = SETPRIV_CANDIDATES.find(knowsParentDeathSignal) ?? null;
  return setpriv;
}

/** `file` with `args`, made to receive SIGKILL when tacit ends, where the host has the means. */
export function diesWithTacit(file: string, args: readonly string[]): { file: string; args: string[] } {
  const wrapper = parentDeathWrapper();
  return wrapper === null ? { file, args: [...args] } : { file: wrapper, args: ["--pdeathsig", "KILL", "--", file, ...args] };
}
