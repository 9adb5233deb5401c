// Who the sandbox and the pure evaluator run as when tacit runs as root (a container's entrypoint,
// CI). Without a user of their own they were root outside their namespaces: their capabilities
// were dropped, but the kernel's owner check still let uid 0 read every root-owned file left in
// view (/etc/shadow, /etc/ssl/private, the host's SSH keys), so native code in Deno (its
// permissions and the validator bypassed) read them. As root, tacit runs them as nobody
// (65534:65534, no supplementary group), which owns nothing in view and may read only what anyone
// may (see network-namespace.ts for where the switch is made).
//
// Why nobody, shared with other processes of the host: the sandbox cannot reach them. In its own
// PID namespace it sees no pid but its own and can signal no process outside; in its own network
// and IPC namespaces it reaches no abstract socket, System V object or message queue of theirs;
// every mount in its view is read-only, so no file nobody owns can be written. The other way is
// not closed: a process of the host that runs as nobody sees the sandbox's pid in the host's
// /proc and could signal or trace it as any process of the same uid could (a pure evaluator holds
// plaintext), as it could tacit's if tacit ran as nobody. An id of its own would close that, but
// one not mapped in a container's user namespace (rootless ones map 65536 ids, 65534 the
// highest usable) cannot be switched to at all: nobody is the one id such hosts all have.

import { readFileSync } from "node:fs";
import { parentDeathWrapper } from "./parent-death.js";

export const SANDBOX_UID = 65534;
export const SANDBOX_GID = 65534;

/** util-linux setpriv's arguments that make the program SANDBOX_UID:SANDBOX_GID, with no supplementary group. */
const AS_SANDBOX_USER = [`--reuid=${SANDBOX_UID}`, `--regid=${SANDBOX_GID}`, "--clear-groups"];

/**
 * setpriv's arguments that switch to the sandbox's user (see AS_SANDBOX_USER), then set the
 * parent-death signal again where setpriv knows it: the kernel clears it when a process's uid
 * changes, and the sandbox would outlive a tacit killed by SIGKILL (see parent-death.ts).
 */
export function asSandboxUser(): string[] {
  return parentDeathWrapper() === null ? [...AS_SANDBOX_USER] : [...AS_SANDBOX_USER, "--pdeathsig", "KILL"];
}

/**
 * Whether this process's sandboxes switch to the sandbox's user: where it runs as root, and the
 * user and group are mapped in its user namespace (the initial one maps every id; one made with
 * `unshare --map-root-user` maps root alone, where setpriv could not switch: its sandboxes stay
 * root there, as that root is whoever made the namespace outside).
 */
export function switchesToSandboxUser(): boolean {
  return process.geteuid?.() === 0 && mapsId("uid_map", SANDBOX_UID) && mapsId("gid_map", SANDBOX_GID);
}

/** Whether /proc/self/`file` (uid_map or gid_map: lines of "inside outside count") maps `id`. */
function mapsId(file: "uid_map" | "gid_map", id: number): boolean {
  let table: string;
  try {
    table = readFileSync(`/proc/self/${file}`, "utf8");
  } catch {
    return false;
  }
  return table.split("\n").some((line) => {
    const [inside, , count] = line.trim().split(/\s+/).map(Number);
    return inside !== undefined && count !== undefined && id >= inside && id < inside + count;
  });
}
