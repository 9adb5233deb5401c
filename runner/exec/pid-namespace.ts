// Commands run inside a PID namespace of their own when the host can make one (util-linux
// `unshare`, as root or through a user namespace). A process group is not enough: a child
// can leave it with setsid() and outlive its timeout, and tacit. When the first process of a
// PID namespace ends, the kernel kills every other process in it, wherever they moved.
//
// That first process is a shell the host chooses, which runs the command as its child and
// passes on its exit status; the command itself is not PID 1, which would ignore signals it
// sends itself. The command's argv reaches it verbatim as positional parameters.

import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";

const UNSHARE_CANDIDATES = ["/usr/bin/unshare", "/bin/unshare"];
const SHELL = "/bin/sh";
const RUN_AS_CHILD = '"$@"; exit $?';

/** How to spawn a program in a namespace: the wrapper's program and the arguments before the command's. */
export interface NamespaceWrapper {
  program: string;
  argsBefore: string[];
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

let probed: NamespaceWrapper | null | undefined;

/**
 * The wrapper this host supports, found once per process (a probe costs a few ms), or null.
 * `onUnavailable` hears once why commands will run without one.
 */
export function namespaceWrapper(onUnavailable: (reason: string) => void): NamespaceWrapper | null {
  if (probed === undefined) probed = probeNamespaceWrapper(UNSHARE_CANDIDATES, onUnavailable);
  return probed;
}

/** Tries `unshare` (the first of `candidates` that exists) as root, then through a user namespace. */
export function probeNamespaceWrapper(candidates: readonly string[], onUnavailable: (reason: string) => void): NamespaceWrapper | null {
  const unshare = candidates.find(executable);
  if (!unshare || !executable(SHELL)) {
    onUnavailable("util-linux `unshare` (or /bin/sh) is not installed");
    return null;
  }
  // As root a PID namespace needs nothing more; otherwise a user namespace mapping the user to itself.
  for (const userNamespace of [[], ["--map-current-user"]]) {
    const argsBefore = [...userNamespace, "--pid", "--fork", "--kill-child", "--", SHELL, "-c", RUN_AS_CHILD, "tacit-exec"];
    const probe = spawnSync(unshare, [...argsBefore, SHELL, "-c", "exit 0"], { stdio: "ignore", timeout: 5000 });
    if (probe.status === 0) return { program: unshare, argsBefore };
  }
  onUnavailable("this host does not allow creating a PID namespace (no root, and user namespaces are disabled)");
  return null;
}
