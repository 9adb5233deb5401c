// The sandbox's network, closed by the kernel as well as by Deno. Deno's permissions keep a
// script off the network (no --allow-net), but native parts of Deno have done I/O that no
// permission covers (node:sqlite's files, WebGPU's drivers: see sandbox-process.ts). So, where
// the host allows it, the sandbox, the pure evaluator and the type checker (which reads the
// agent's code, and needs no network) each run in a network namespace of their own
// (util-linux `unshare --user --net`). Its only interface is a loopback that is down: no address,
// no route, so no connection can be made whatever Deno allows, not to the internet, not to a
// service on the host's 127.0.0.1, not to the host's abstract Unix sockets (which belong to a
// network namespace). A Unix socket with a path is a file: this does not close it (Deno's file
// permissions do, and, for the sandbox and the pure evaluator, their mount namespace: the same
// unshare gives them one where the host allows, hiding the host's files, see sandbox-mounts.ts;
// the probe tries that first, and the network namespace alone where it cannot be made). With the
// mount namespace comes an IPC namespace (IPC_FLAG): System V shared memory, semaphores and
// message queues belong to one, not to a file, and from the host's, native code read a segment
// of the user's and could leave segments that outlive the sandbox.
//
// With the mount namespace also comes a PID namespace (PID_FLAGS), with a /proc of its own: in
// the host's, native code saw every process of the user in /proc, read their command lines and
// environments, and could stop or kill them (tacit itself, the person's shell and editor, other
// sandboxes). In its own it sees, and can signal, only the processes of its namespace, and any it
// starts die with it (the kernel kills a namespace's processes with its first). unshare
// then forks: the process tacit spawns stays outside, waits for the namespace's first process
// (the setup, then the program in its place: Deno is that first process) and ends as it does;
// the host reads and signals the program's own pid through it (namespaced-program.ts). The
// program runs in a session and process group of its own (sandbox-mounts.ts SETSID_CANDIDATES):
// in the group of the unshare outside, it could stop or kill that unshare.
//
// The user namespace is what lets a user without root make the network one. It also leaves the
// sandbox no capability outside it: as root, tacit's sandbox had all of root's, the means to
// enter the host's network namespace again among them. As root, the sandbox and the pure evaluator
// run as an unprivileged user (sandbox-user.ts): root's own namespaces are tried first, without a
// user namespace (root may make them), the mount setup runs as real root (which reaches tacit's
// files under a /root only root may enter, and binds them back where the covers make the way to
// them open to all), and its last setpriv switches to that user with no capability, no way to gain
// one (no_new_privs: a setuid-root program gives nothing back) and no supplementary group. Such a
// process has no capability in the namespaces' owner, the host's user namespace, so it cannot enter
// another namespace or lift a cover. A user namespace made by root switched to that user first
// (its root is that user outside) is the fallback where root may not make namespaces itself: its
// setup runs as that user, which cannot reach tacit's files under a directory only root may
// enter; and any process of that uid on the host has every capability in such a namespace and could
// enter the sandbox's, which root's own namespaces do not allow. Without a PID namespace, unshare makes
// the namespaces and runs the program in its place (no --fork): the same process, whose pid the
// host's watchdogs read in /proc, and whose parent-death signal (parent-death.ts) stays set;
// with one, its forked first process dies with it (--kill-child).

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { printableCut } from "./printable.js";
import { OWN_PROC_FLAG, PID_NAMESPACE_FLAGS, UNSHARE_CANDIDATES } from "./exec/pid-namespace.js";
import { executable } from "./exec/program-path.js";
import { bootstrapPath, denoExecutable, pureEvaluatorPath } from "./paths.js";
import { forgetProbe, probeNote } from "./namespace-probe-memo.js";
import { MOUNT_SETUP_FAILED, MOUNT_SETUP_FAILED_STATUS, sandboxMountPlan, WITHOUT_CAPABILITIES } from "./sandbox-mounts.js";
import { asSandboxUser, SANDBOX_UID, switchesToSandboxUser } from "./sandbox-user.js";
import { SETPRIV_CANDIDATES } from "./parent-death.js";

/** How the sandbox is kept off the network, found once per process (see sandboxNetwork). */
export type SandboxNetwork =
  | {
      kind: "own-namespace";
      /** util-linux unshare, and its arguments before the program's: the network namespace alone, as the type checker runs in it. */
      program: string;
      argsBefore: string[];
      /** false: a network namespace without a user namespace (root, where user namespaces are refused). */
      userNamespace: boolean;
      /**
       * unshare's arguments before the program's for the sandbox and the pure evaluator: with a mount
       * namespace of their own that hides the host's files (sandbox-mounts.ts), where one could be
       * made; the same as argsBefore otherwise.
       */
      sandboxArgsBefore: string[];
      /**
       * What runs unshare for the sandbox and the pure evaluator, with its arguments: setpriv, which
       * switches root to the sandbox's user before unshare makes a user namespace (see
       * sandboxUserFirst); empty where unshare is spawned itself.
       */
      sandboxUserFirst: string[];
      /** null: the sandbox's mount namespace hides the host's files; otherwise why there is none. */
      filesInView: string | null;
      /**
       * null: the sandbox and the pure evaluator run in a PID namespace of their own, with its own
       * /proc, and see no process of the host's; otherwise why they do not.
       */
      processesInView: string | null;
    }
  | { kind: "host-network"; reason: string }
  /** --no-network-namespace (config networkNamespace: false): the user chose the host's, knowingly; nothing is probed or said. */
  | { kind: "declined" };

/**
 * The shapes tried, best first. Those without a user namespace only as root (no one else may make
 * a network or mount namespace without one), and first where root's sandbox switches to the
 * unprivileged user (see above); otherwise as root whose user namespaces are refused (the sysctl
 * user.max_user_namespaces=0), or whose sandbox cannot reach tacit's files from one (below). A
 * mount namespace (hiding the host's files, see sandbox-mounts.ts) where it can be made; the
 * network namespace alone where not: the files were in view before it, the network is not.
 */
const SHAPES: ReadonlyArray<{ flags: readonly string[]; userNamespace: boolean; mounts: boolean; pids: boolean }> = [
  { flags: ["--user", "--map-root-user", "--net", "--mount"], userNamespace: true, mounts: true, pids: true },
  { flags: ["--user", "--map-root-user", "--net", "--mount"], userNamespace: true, mounts: true, pids: false },
  { flags: ["--user", "--net"], userNamespace: true, mounts: false, pids: false },
  { flags: ["--net", "--mount"], userNamespace: false, mounts: true, pids: true },
  { flags: ["--net", "--mount"], userNamespace: false, mounts: true, pids: false },
  { flags: ["--net"], userNamespace: false, mounts: false, pids: false },
];

/**
 * `shapes` for root whose sandbox switches to the unprivileged user: at each level of confinement
 * (mounts and PIDs, mounts, the network alone), root's own namespaces before a user namespace. A
 * shape of less confinement never comes before one of more: root whose own mount setup fails (one
 * without CAP_DAC_OVERRIDE cannot make the mount points in a cover of mode 0555) was given the
 * network namespace alone, and the host's files in view, where the user namespace's setup would
 * have made the mounts.
 */
function rootsOwnFirst(shapes: typeof SHAPES): typeof SHAPES {
  const level = (shape: (typeof SHAPES)[number]): number => (shape.mounts ? (shape.pids ? 0 : 1) : 2);
  return [...shapes].sort((a, b) => level(a) - level(b) || Number(a.userNamespace) - Number(b.userNamespace));
}

/**
 * unshare's flags for the sandbox's PID namespace (see above), tried with the mount namespace: a
 * /proc of its own needs one. --fork, since a PID namespace is its maker's children's; --kill-child,
 * so that the namespace's first process, and with it every process in it, dies with the process
 * tacit spawned (which a kill, a time limit's or tacit's own death, reaches).
 */
const PID_FLAGS: readonly string[] = [...PID_NAMESPACE_FLAGS, OWN_PROC_FLAG];

/**
 * What the probe runs in the namespace: nothing. unshare makes the namespaces, then fails to run
 * this file, which does not exist, and exits with 127 (util-linux's EX_EXEC_ENOENT); with 1 where
 * the namespaces could not be made. Running no program makes the probe cheaper (on a loaded
 * machine, medians of 300: 1.4 ms against 3.8 ms for /bin/true), and it is paid before the first
 * sandbox of every `tacit run`. The file is looked for in the directory of the sandbox's bootstrap:
 * root in a user namespace has none of root's capabilities, nor has the unprivileged user root's
 * sandbox switches to, and where a directory on the way does not let them in (a `sudo tacit run`
 * from a home that Ubuntu makes 0750, where no mount namespace binds tacit's files back) the exec
 * fails with EACCES instead, 126, and the sandbox could not have read its bootstrap there. Anyone
 * else enters there what they enter outside (the same user and groups, no capabilities in either).
 */
const NOTHING = path.join(path.dirname(bootstrapPath), "tacit-probe-runs-nothing");
const RAN_NOTHING = 127;
/**
 * What runs NOTHING in a probe where setpriv switches root's sandbox to the unprivileged user:
 * coreutils env, as that user (exit 127 and 126 as unshare's). setpriv itself still holds root's
 * capabilities as it executes its program (the kernel drops them at that exec): NOTHING run by it
 * was reached through a /root that user may not enter, and the sandbox then failed to start.
 */
const ENV_CANDIDATES = ["/usr/bin/env", "/bin/env"];

/** The program a probe runs: NOTHING, run by env where setpriv switches to the unprivileged user just before (see ENV_CANDIDATES). */
function probeProgram(switchesJustBefore: boolean): string[] {
  const env = switchesJustBefore ? ENV_CANDIDATES.find(executable) : undefined;
  return env === undefined ? [NOTHING] : [env, NOTHING];
}
const COULD_NOT_ENTER = 126;
/** unshare's exit status when it could not make the namespaces (util-linux's EXIT_FAILURE). */
const UNSHARE_FAILED = 1;
/** What of unshare's stderr a message quotes: its first line, at most this long. */
const MAX_SAID_CHARS = 300;

/**
 * unshare's flag for an IPC namespace, made with the mount namespace wherever that is (see
 * SHAPES). Left out of the command a message quotes (as PID_FLAGS are), which names the shape
 * tried by the flags the README gives it; unshare's reason, quoted after it, says which
 * namespace it could not make.
 */
const IPC_FLAG = "--ipc";

let found: SandboxNetwork | undefined;

/** How sandboxes started by this process are kept off the network (probed once, or as an earlier run found: namespace-probe-memo.ts). */
export function sandboxNetwork(): SandboxNetwork {
  found ??= probeSandboxNetwork();
  return found;
}

/**
 * --no-network-namespace (config networkNamespace: false): every sandbox, pure evaluator and type
 * checker this process starts from now on runs in the host's network namespace, with no probe and
 * no warning. Called before the first of them starts (see checkSandboxNetwork in cli/load-config.ts).
 */
export function declineNetworkNamespace(): void {
  found = { kind: "declined" };
}

/**
 * Takes `network`, found by the thread that starts this one (a worker thread's modules are its
 * own), as this thread's: no second probe, and --no-network-namespace holds here too.
 */
export function adoptSandboxNetwork(network: SandboxNetwork): void {
  found = network;
}

function probeSandboxNetwork(): SandboxNetwork {
  if (process.platform !== "linux") return { kind: "host-network", reason: `network namespaces are Linux's, and this is ${process.platform}` };
  const unshare = UNSHARE_CANDIDATES.find(executable);
  if (unshare === undefined) return { kind: "host-network", reason: "util-linux `unshare` is not installed" };
  const root = process.geteuid?.() === 0;
  const setpriv = SETPRIV_CANDIDATES.find(executable);
  // As root, the sandbox runs as an unprivileged user (see sandbox-user.ts): in the shapes without
  // a user namespace, tried first, the setup runs as real root and its last setpriv switches; in
  // those with one, setpriv switches before unshare, whose user namespace's root is then that user.
  const switchUser = setpriv !== undefined && switchesToSandboxUser();
  const plan = sandboxMountPlan([denoExecutable(), bootstrapPath, pureEvaluatorPath]);
  const switchingPlan = switchUser && !("unavailable" in plan) ? plan.as(asSandboxUser()) : plan;
  const failures: string[] = [];
  let filesInView: string | null = "unavailable" in plan ? plan.unavailable : null;
  // The host's processes are in view wherever the mount namespace is not (a /proc of its own needs one).
  let processesInView: string | null = "unavailable" in plan ? plan.unavailable : null;
  const childrenListed = listsChildren();
  const shapes = switchUser ? rootsOwnFirst(SHAPES) : SHAPES;
  for (const { flags, userNamespace, mounts, pids } of shapes) {
    if (!userNamespace && !root) continue;
    if (mounts && "unavailable" in plan) continue;
    if (pids && childrenListed !== null) {
      processesInView = childrenListed;
      continue;
    }
    const switchesInside = switchUser && !userNamespace;
    const shapePlan = switchesInside ? switchingPlan : plan;
    const setup = "unavailable" in shapePlan ? null : pids ? shapePlan.argsBeforeInOwnSession : shapePlan.argsBefore;
    if (pids && setup === null) {
      processesInView = OWN_SESSION_UNAVAILABLE;
      continue;
    }
    const networkFlags = flags.filter((flag) => flag !== "--map-root-user" && flag !== "--mount");
    const namespaceFlags = pids ? [...flags, IPC_FLAG, ...PID_FLAGS] : mounts ? [...flags, IPC_FLAG] : [...flags];
    // In the mount namespace the setup runs first, as root (of the user namespace, where there is
    // one); then the program, without a capability (and, in a PID namespace, in a session of its own).
    // Without a mount setup, root's sandbox switches user (and drops its capabilities) in a setpriv of its own.
    const unprivileged = switchesInside && !mounts ? [setpriv!, ...asSandboxUser(), ...WITHOUT_CAPABILITIES] : [];
    const sandboxArgsBefore = mounts && setup !== null ? [...namespaceFlags, "--", ...setup] : [...namespaceFlags, "--", ...unprivileged];
    const sandboxUserFirst = switchUser && userNamespace ? [setpriv!, ...asSandboxUser(), "--"] : [];
    const command = probeCommand(unshare, sandboxArgsBefore, sandboxUserFirst, probeProgram(switchesInside));
    // The first shape tried may have been found to work by an earlier run (namespace-probe-memo.ts).
    const note = failures.length === 0 ? probeNote(command) : null;
    const failure = note?.remembered === true ? null : probeFailure(command);
    if (failure === null) {
      note?.remember();
      return {
        kind: "own-namespace",
        program: unshare,
        argsBefore: [...networkFlags, "--"],
        userNamespace,
        sandboxArgsBefore,
        sandboxUserFirst,
        filesInView: mounts ? null : filesInView,
        processesInView: pids ? null : processesInView,
      };
    }
    const tried = `\`unshare ${[...flags, ...(pids ? PID_FLAGS : [])].join(" ")}\` ${failure}`;
    failures.push(tried);
    if (pids) processesInView = tried;
    else if (mounts) filesInView = processesInView = tried;
  }
  return { kind: "host-network", reason: failures.join("; ") };
}

/**
 * Why no PID namespace is made where util-linux setsid is missing: its first process would share
 * a process group with the unshare outside it, which it could stop or kill (see sandbox-mounts.ts
 * SETSID_CANDIDATES).
 */
const OWN_SESSION_UNAVAILABLE =
  "util-linux `setsid` is not installed, without which the sandbox's first process could signal the `unshare` outside its PID namespace through their process group";

/**
 * null where the kernel lists a process's children in /proc (CONFIG_PROC_CHILDREN), which is how
 * the host finds the program in its PID namespace (see namespaced-program.ts); otherwise why no PID
 * namespace is made: the memory and CPU watchdogs could not find what to read.
 */
function listsChildren(): string | null {
  return existsSync(`/proc/${process.pid}/task/${process.pid}/children`)
    ? null
    : "this kernel does not list a process's children in /proc (CONFIG_PROC_CHILDREN), by which tacit would find the sandbox in its PID namespace";
}

/** Whether `unshareArgs` (unshare's, through its "--") make a PID namespace: the spawned process is then not the program's (see namespaced-program.ts). */
export function forksNamespaceInit(unshareArgs: readonly string[]): boolean {
  const end = unshareArgs.indexOf("--");
  return (end === -1 ? unshareArgs : unshareArgs.slice(0, end)).includes("--pid");
}

/** The command a probe runs: `unshare argsBefore program`, after `first` where it is given. */
function probeCommand(unshare: string, argsBefore: readonly string[], first: readonly string[] = [], program = [NOTHING]): string[] {
  return first.length === 0 ? [unshare, ...argsBefore, ...program] : [...first, unshare, ...argsBefore, ...program];
}

/** null where `command` (a probeCommand) makes its namespaces and enters them; otherwise why it did not. */
function probeFailure(command: readonly string[]): string | null {
  const probe = spawnSync(command[0]!, command.slice(1), { env: {}, stdio: ["ignore", "ignore", "pipe"], encoding: "utf8", timeout: 5000 });
  return probe.status === RAN_NOTHING ? null : whyFailed(probe.status, probe.stderr ?? "", probe.error);
}

/** What to do where the unprivileged user root's sandbox runs as cannot reach tacit's files (see sandbox-user.ts). */
const INSTALL_WHERE_ALL_MAY_READ =
  "install tacit where every user may read its files and enter the directories above them (under /usr/local or /opt, " +
  "not a home directory or /root that only its owner may enter)";

/** What a failed probe says, with what it means here. */
function whyFailed(status: number | null, stderr: string, error: Error | undefined): string {
  if (status === COULD_NOT_ENTER) {
    const asWhom = switchesToSandboxUser()
      ? ` by the unprivileged user (uid ${SANDBOX_UID}) the sandbox runs as when tacit runs as root, so that it cannot read what root owns; ${INSTALL_WHERE_ALL_MAY_READ}`
      : "";
    return `made the namespace, but tacit's files (${path.dirname(bootstrapPath)}) could not be reached from inside it${asWhom}`;
  }
  // unshare's own words (a locale may translate them), one line, cut, shown on a terminal.
  const words = stderr.trim().replace(/^unshare: /, "").replace(MOUNT_SETUP_FAILED, "could not set up the sandbox's mounts:").split("\n")[0]!;
  const said = printableCut(words, MAX_SAID_CHARS) || error?.message || `exited with ${status}`;
  // --mount-proc's own failure: the kernel mounts a new proc file system only where the one in view is not partly hidden.
  if (said.startsWith("mount /proc failed")) return `failed: ${said} (a proc file system cannot be mounted here: a container whose /proc has parts masked or read-only, say)`;
  if (said.includes("No space left on device")) return `failed: ${said} (the kernel's limit on user or network namespaces is 0, or reached)`;
  if (said.includes("Operation not permitted")) {
    return `failed: ${said} (unprivileged user namespaces are disabled, an AppArmor or seccomp policy refuses them, or a network namespace alone needs root)`;
  }
  return `failed: ${said}`;
}

/**
 * `file` with `args` as the sandbox or the pure evaluator: in a network namespace of its own where
 * this process found one, and a mount namespace that hides the host's files where it found that
 * too (see sandbox-mounts.ts), with the file size limits `limited` sets (by the setup in the mount
 * namespace, by `limited` otherwise).
 */
export function confinedSandbox(file: string, args: readonly string[], limited: Launcher): ConfinedLaunch {
  const network = sandboxNetwork();
  if (network.kind !== "own-namespace") {
    const program = limited(file, args);
    const [first, ...firstArgs] = rootWithoutNamespace();
    return first === undefined ? { ...program, forksInit: false } : { file: first, args: [...firstArgs, program.file, ...program.args], forksInit: false };
  }
  // The mount namespace's setup sets the file size limits itself (see sandbox-mounts.ts).
  const program = network.filesInView === null ? { file, args: [...args] } : limited(file, args);
  const unshareArgs = [...network.sandboxArgsBefore, program.file, ...program.args];
  const [first, ...firstArgs] = network.sandboxUserFirst;
  return {
    ...(first === undefined ? { file: network.program, args: unshareArgs } : { file: first, args: [...firstArgs, network.program, ...unshareArgs] }),
    forksInit: forksNamespaceInit(network.sandboxArgsBefore),
  };
}

let withoutNamespace: string[] | undefined;

/**
 * setpriv and its arguments, run before root's sandbox where it has no namespace of its own (none
 * could be made, or --no-network-namespace): it ran as root with every capability. As the
 * unprivileged user without a capability (see sandbox-user.ts) where that user can reach tacit's
 * files (without a mount namespace, nothing binds them back: not under a /root only root may
 * enter); otherwise without a capability but as root, which still reads what root owns (see
 * rootWithoutNamespaceFinding), as where that user cannot be switched to (root of a user namespace
 * that maps root alone). Each tried once, as the probe does; empty where tacit is not root (or
 * neither can run).
 */
function rootWithoutNamespace(): string[] {
  if (withoutNamespace !== undefined) return withoutNamespace;
  withoutNamespace = [];
  const setpriv = SETPRIV_CANDIDATES.find(executable);
  if (setpriv === undefined || process.geteuid?.() !== 0) return withoutNamespace;
  const tries = switchesToSandboxUser() ? [[...asSandboxUser(), ...WITHOUT_CAPABILITIES], [...WITHOUT_CAPABILITIES]] : [[...WITHOUT_CAPABILITIES]];
  for (const args of tries) {
    const probe = spawnSync(setpriv, [...args, ...probeProgram(true)], { env: {}, stdio: "ignore", timeout: 5000 });
    if (probe.status === RAN_NOTHING) {
      withoutNamespace = [setpriv, ...args];
      break;
    }
  }
  return withoutNamespace;
}

/**
 * What a warning about a sandbox without namespaces adds where tacit runs as root and its sandbox
 * could not switch to the unprivileged user (see rootWithoutNamespace); "" otherwise.
 */
function rootWithoutNamespaceFinding(): string {
  if (!switchesToSandboxUser() || rootWithoutNamespace().includes(`--reuid=${SANDBOX_UID}`)) return "";
  return (
    ". As root, the sandbox then runs as root (without capabilities, where setpriv could drop them), which reads what root owns: " +
    `the unprivileged user (uid ${SANDBOX_UID}) it would run as cannot reach tacit's files (${path.dirname(bootstrapPath)}); ${INSTALL_WHERE_ALL_MAY_READ}`
  );
}

/**
 * How a sandbox is started. `forksInit`: in a PID namespace of its own, so the process spawned
 * waits outside it for the program, which is its only child (see namespaced-program.ts).
 */
export interface ConfinedLaunch {
  file: string;
  args: string[];
  forksInit: boolean;
}

/** `file` with `args`, as another program that runs it in its place (prlimit, say). */
export type Launcher = (file: string, args: readonly string[]) => { file: string; args: string[] };

/** `file` with `args`, run in a network namespace of its own where this process found one (see sandboxNetwork): the type checker, which reads the agent's files. */
export function offTheNetwork(file: string, args: readonly string[]): { file: string; args: string[] } {
  const network = sandboxNetwork();
  return network.kind === "own-namespace" ? { file: network.program, args: [...network.argsBefore, file, ...args] } : { file, args: [...args] };
}

/** What did not happen for a start that failed in unshare, by what it was to start. */
const LEFT_UNDONE = {
  sandbox: "nothing of the script ran",
  "type checker": "the script was neither checked nor run",
  "pure evaluator": "the map function did not run",
} as const;

/**
 * A process tacit needed could not start because the host could not make its namespace (see
 * namespaceFailureAtStart): the host's failure, said as such (exit 2 from the CLI, as for a
 * refusal before anything ran), not as tacit's internal error.
 */
export class NamespaceUnavailableError extends Error {
  override name = "NamespaceUnavailableError";
}

/**
 * Why a sandbox (type checker, pure evaluator) that ended before it did anything did not start,
 * where that was the host's doing: `unshare` could not make its namespaces (or the mount namespace's
 * setup its mounts: then it says why on stderr and exits with MOUNT_SETUP_FAILED_STATUS), though the probe had
 * (a limit on namespaces reached since: tacit serve's sessions hold one each, and so does every
 * other sandbox or container of the user). unshare then says why on stderr and exits with 1;
 * null otherwise. A script can write the same words to stderr and exit with 1 itself (node:process
 * is not Deno's to refuse), so they only point the way: see namespaceFailureNow.
 */
export function namespaceFailureAtStart(
  end: { code: number | null; signal: string | null; stderr: string },
  what: keyof typeof LEFT_UNDONE = "sandbox",
): string | null {
  if (end.signal !== null) return null;
  const unshareFailed = end.code === UNSHARE_FAILED && end.stderr.startsWith("unshare: ");
  // Or the mount namespace's setup gave up (a mount the probe made, refused since).
  const setupFailed = end.code === MOUNT_SETUP_FAILED_STATUS && end.stderr.startsWith(MOUNT_SETUP_FAILED);
  if (!unshareFailed && !setupFailed) return null;
  return namespaceFailureNow(what);
}

/**
 * Whether the namespace a process was started in cannot be made now: tried again with the
 * probe's own command, and said in the host's words (that try's), never the failed process's.
 * Null where this process makes none, or the try succeeds. About 1.5 ms: only on a failure.
 */
export function namespaceFailureNow(what: keyof typeof LEFT_UNDONE): string | null {
  const network = found;
  if (network?.kind !== "own-namespace") return null;
  // The probe's own command for what failed to start: the sandbox's (the mount namespace's setup and all), or the checker's.
  const probeArgs = what === "type checker" ? network.argsBefore : network.sandboxArgsBefore;
  const failure =
    what === "type checker"
      ? probeFailure(probeCommand(network.program, probeArgs))
      : probeFailure(probeCommand(network.program, probeArgs, network.sandboxUserFirst, probeProgram(probeArgs.includes(`--reuid=${SANDBOX_UID}`))));
  if (failure === null) return null;
  // What this run was started on, remembered or probed, no longer holds: the next run probes.
  forgetProbe();
  const flags = probeArgs
    .slice(0, probeArgs.indexOf("--"))
    .filter((flag) => flag !== IPC_FLAG && !PID_FLAGS.includes(flag))
    .join(" ");
  return (
    `the ${what} could not start: this host could not make its network namespace (\`unshare ${flags}\` ${failure}), so ${LEFT_UNDONE[what]}; this is the host's doing, not the ` +
    "script's. Free namespaces (end sessions no longer needed with delete_repl_session, or other sandboxes and containers of " +
    "this user) or raise the kernel's limits (sysctl user.max_user_namespaces and user.max_net_namespaces), then run the " +
    "script again; or give tacit --no-network-namespace (config networkNamespace: false; a running tacit serve must be " +
    "restarted with it) to run sandboxes in the host's network namespace, with Deno's permission checks alone keeping scripts " +
    "off the network"
  );
}

/** How to give the sandbox a namespace of its own, for a warning or a refusal. */
const HOW_TO_HAVE_ONE =
  "To have one, run tacit on Linux where util-linux `unshare --user --net` works: with unprivileged user namespaces allowed (sysctl " +
  "user.max_user_namespaces above 0, and kernel.unprivileged_userns_clone=1 where it exists; on Ubuntu 23.10 and later, " +
  "kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile that lets unshare make them), or in a container whose " +
  "seccomp profile allows unshare";

/** How to run without one, knowingly: named in the warning, never the default. */
const HOW_TO_DECLINE = "--no-network-namespace (config networkNamespace: false) runs without it and without this warning";

/**
 * What is said before anything runs, or null where nothing need be: where sandboxes run in the
 * host's network namespace without the user's choice, a warning; with `required`
 * (--require-network-namespace), the refusal to throw instead. `checker`: for `tacit check`,
 * which runs no script, only the type checker (which runs in the namespace too, see
 * typecheck.ts): it is not warned about, but a requirement holds for it.
 */
export function sandboxNetworkFinding(required: boolean, checker = false): { warning: string } | { refusal: string } | null {
  // Nothing to say for a checker: the probe waits for one to start (a cached verdict starts none).
  if (checker && !required) return null;
  const network = sandboxNetwork();
  if (network.kind === "own-namespace") {
    if (checker) return null;
    return filesInViewFinding(required, network.filesInView) ?? processesInViewFinding(required, network.processesInView);
  }
  if (required) {
    const why = network.kind === "declined" ? "--no-network-namespace (config networkNamespace: false) asks for none" : `none can be made here: ${network.reason}`;
    return {
      refusal:
        `refused, nothing was run: --require-network-namespace (config requireNetworkNamespace) asks that the ${checker ? "type checker" : "sandbox"} ` +
        `run in a network namespace of its own, and ${why}. ${HOW_TO_HAVE_ONE}; or drop --require-network-namespace to run with ` +
        "Deno's permission checks alone keeping scripts off the network",
    };
  }
  if (network.kind === "declined") return null;
  return {
    warning:
      `the sandbox runs in the host's network namespace: ${network.reason}. Only Deno's permission checks keep scripts off the ` +
      "network: native code in Deno that does I/O no permission covers could reach the internet, services on 127.0.0.1 and " +
      `abstract Unix sockets. ${HOW_TO_HAVE_ONE}; --require-network-namespace refuses to run without it; ${HOW_TO_DECLINE}${rootWithoutNamespaceFinding()}`,
  };
}

/**
 * Where the sandbox has its network namespace but the host's files are in view (its mount
 * namespace could not be made, see sandbox-mounts.ts): the same flags as for the network decide,
 * since one `unshare` makes both. A warning, or with `required` the refusal; null where they are hidden.
 */
function filesInViewFinding(required: boolean, why: string | null): { warning: string } | { refusal: string } | null {
  if (why === null) return null;
  const risk =
    "only Deno's permission checks keep scripts off the host's files: native code in Deno that does I/O no permission covers " +
    "(node:sqlite's temporary files) could tell which files exist and create files in any directory the user can write; " +
    `and, without the PID namespace that comes with the mount namespace, ${PROCESSES_RISK}`;
  if (required) {
    return {
      refusal:
        "refused, nothing was run: --require-network-namespace (config requireNetworkNamespace) asks that the sandbox run in " +
        `namespaces of its own, and the mount namespace that hides the host's files from it could not be made here: ${why}; ${risk}. ` +
        `${HOW_TO_HAVE_ONE}, and mounts (tmpfs and bind) are allowed in it; or drop --require-network-namespace`,
    };
  }
  return {
    warning:
      `the sandbox sees the host's files: its mount namespace could not be made here: ${why}. It still has a network namespace of ` +
      `its own, but ${risk}. --require-network-namespace refuses to run without it; ${HOW_TO_DECLINE}`,
  };
}

/** What native code in a sandbox that sees the host's processes could do: said where its PID namespace could not be made. */
const PROCESSES_RISK =
  "native code in Deno could list the user's processes in /proc, read their command lines and environments, and stop or " +
  "kill them (tacit itself, the person's shell and editor, other sandboxes)";

/**
 * Where the sandbox hides the host's files but not its processes (its PID namespace, with a /proc
 * of its own, could not be made beside the mount namespace). A warning, or with `required` the
 * refusal; null where they are hidden.
 */
function processesInViewFinding(required: boolean, why: string | null): { warning: string } | { refusal: string } | null {
  if (why === null) return null;
  if (required) {
    return {
      refusal:
        "refused, nothing was run: --require-network-namespace (config requireNetworkNamespace) asks that the sandbox run in " +
        `namespaces of its own, and the PID namespace that hides the host's processes from it could not be made here: ${why}; ` +
        `${PROCESSES_RISK}. ${HOW_TO_HAVE_ONE}, and a proc file system may be mounted in it; or drop --require-network-namespace`,
    };
  }
  return {
    warning:
      `the sandbox sees the host's processes: its PID namespace could not be made here: ${why}. It still has network and mount ` +
      `namespaces of its own, but ${PROCESSES_RISK}. --require-network-namespace refuses to run without it; ${HOW_TO_DECLINE}`,
  };
}
