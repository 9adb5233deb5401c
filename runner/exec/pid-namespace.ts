// Commands run inside a PID namespace of their own when the host can make one (util-linux
// `unshare`, as root or through a user namespace). A process group is not enough: a child
// can leave it with setsid() and outlive its timeout, and tacit. When the first process of a
// PID namespace ends, the kernel kills every other process in it, wherever they moved.
//
// Where it can, the namespace also gets its own /proc (a mount namespace with a fresh proc
// mounted: `unshare --mount-proc`), so that a command sees only its own processes: with the
// host's /proc, `ps eww` or /proc/PID/environ shows it the command line and environment of
// every process of the user, tacit's own included (an API key passed in its environment).
// This hides them from an ordinary command; it is not a confinement against code that runs
// with the user's authority (it could, for one, unmount that /proc where it has the right).
//
// That first process is a shell the host chooses, which runs the command as its child and
// passes on its exit status; the command itself is not PID 1, which would ignore signals it
// sends itself. The command's argv reaches it verbatim as positional parameters. Before it, the
// shell waits for tacit's answer on the lifeline the command is started with on fd 3, which shows
// that tacit's end will end the namespace (see lifeline.ts).

import { spawnSync } from "node:child_process";
import { lifelineCheck } from "./lifeline.js";
import { executable } from "./program-path.js";

/** Where util-linux unshare is looked for (also by network-namespace.ts, for the sandbox). */
export const UNSHARE_CANDIDATES = ["/usr/bin/unshare", "/bin/unshare"];
/** The first process of a namespace: a shell tacit chooses (see above). */
export const SHELL = "/bin/sh";
/** Where a command started through argsBefore (or through the shell alone, without a namespace) gets its lifeline. */
export const COMMAND_LIFELINE_FD = 3;
const RUN_AS_CHILD = `${lifelineCheck(COMMAND_LIFELINE_FD)}; "$@"; exit $?`;

/** How to spawn a program in a namespace: the wrapper's program and the arguments before the command's. */
export interface NamespaceWrapper {
  program: string;
  /** They end in a shell that needs the lifeline on fd COMMAND_LIFELINE_FD. */
  argsBefore: string[];
  /** `unshare`'s own arguments, through its "--": what a wrapper with another first process (confinement.ts) starts from. */
  namespaceArgs: string[];
  /** True when the namespace has its own /proc (it sees only its own processes). */
  ownProc: boolean;
}

/**
 * Where there is no namespace: `program` run by a first shell once tacit has answered on its
 * lifeline, in the shell's place (the same process: its process group and parent-death signal).
 */
export function behindLifeline(program: string, args: readonly string[]): { program: string; args: string[] } {
  return { program: SHELL, args: ["-c", `${lifelineCheck(COMMAND_LIFELINE_FD)}; exec "$@"`, "tacit-exec", program, ...args] };
}

let probed: NamespaceWrapper | null | undefined;

/** Why commands lack part of the isolation, each heard once per process. */
export interface NamespaceNotices {
  /** No PID namespace at all: commands run in a process group only. */
  onUnavailable: (reason: string) => void;
  /** A PID namespace, but the host's /proc: commands can see every process of the user. */
  onSharedProc: (reason: string) => void;
}

/**
 * The wrapper this host supports, found once per process (a probe costs a few ms), or null.
 * `notices` hear once why commands will run without a namespace, or without their own /proc.
 */
export function namespaceWrapper(notices: NamespaceNotices): NamespaceWrapper | null {
  if (probed === undefined) probed = probeNamespaceWrapper(UNSHARE_CANDIDATES, notices.onUnavailable, notices.onSharedProc);
  return probed;
}

/**
 * unshare's flags for a PID namespace whose first process, and every process in it, dies with
 * unshare (which forks it: a PID namespace is its maker's children's); also the sandbox's (see
 * network-namespace.ts).
 */
export const PID_NAMESPACE_FLAGS: readonly string[] = ["--pid", "--fork", "--kill-child"];
/** unshare's flag for a user namespace where tacit's user is itself (see confinement.ts, which makes it root there). */
export const MAP_CURRENT_USER = "--map-current-user";
/** unshare's flag for a /proc of the namespace's own, mounted in its mount namespace. */
export const OWN_PROC_FLAG = "--mount-proc";

/** The shapes tried, best first: a PID namespace with its own /proc, then one without. */
const NAMESPACE_FLAGS: ReadonlyArray<{ flags: readonly string[]; ownProc: boolean }> = [
  { flags: ["--mount", OWN_PROC_FLAG, ...PID_NAMESPACE_FLAGS], ownProc: true },
  { flags: [...PID_NAMESPACE_FLAGS], ownProc: false },
];

/**
 * Tries `unshare` (the first of `candidates` that exists) as root, then through a user
 * namespace; with its own /proc first, then without (`onSharedProc` hears why).
 */
export function probeNamespaceWrapper(
  candidates: readonly string[],
  onUnavailable: (reason: string) => void,
  onSharedProc: (reason: string) => void = () => undefined,
): NamespaceWrapper | null {
  const unshare = candidates.find(executable);
  if (!unshare || !executable(SHELL)) {
    onUnavailable("util-linux `unshare` (or /bin/sh) is not installed");
    return null;
  }
  for (const { flags, ownProc } of NAMESPACE_FLAGS) {
    // As root a PID namespace needs nothing more; otherwise a user namespace mapping the user to itself.
    for (const userNamespace of [[], [MAP_CURRENT_USER]]) {
      const namespaceArgs = [...userNamespace, ...flags, "--"];
      const argsBefore = [...namespaceArgs, SHELL, "-c", RUN_AS_CHILD, "tacit-exec"];
      const probe = spawnSync(unshare, [...namespaceArgs, SHELL, "-c", "exit 0"], { stdio: "ignore", timeout: 5000 });
      if (probe.status !== 0) continue;
      if (!ownProc) onSharedProc("this host does not allow a mount namespace with its own /proc beside the PID namespace");
      return { program: unshare, argsBefore, namespaceArgs, ownProc };
    }
  }
  onUnavailable("this host does not allow creating a PID namespace (no root, and user namespaces are disabled)");
  return null;
}
