// The network-namespace probe's success, remembered across runs. Before its first sandbox a
// process probed which namespaces it could make (network-namespace.ts): a spawnSync of the whole
// unshare, mount setup and user switch the sandbox then ran again for real, about 20 ms of CPU
// and more of wall time that every `tacit run` waited for before Deno could start. So where the
// strongest shape tried worked, the run notes it in its home, keyed by everything that decides
// the answer, and the next run with the same key starts its sandbox without probing.
//
// Only a success of the first shape tried is remembered, so a note can never make a run use a
// weaker shape than a probe would: the shapes before it were passed over without probing (by
// facts found afresh each run), and a failure's reasons, which the warnings quote, are always
// probed anew. A note that is wrong (forged, or the host changed in a way the key does not see,
// say namespaces used up) makes the sandbox fail to start, which the host reports in its own
// words (namespaceFailureNow re-runs the probe); the note is then forgotten. Nothing runs on a
// wrong note: it fails closed.
//
// The key: the boot (a reboot may change anything), the namespaces this process is in and what it
// sees and holds there (a container, a user namespace with other limits, a mount namespace where
// another program is bound over mount(8), a process without CAP_SYS_ADMIN: each is another host),
// the kernel's settings that allow or limit namespaces, and the probe's exact command (the
// programs, the mount plan, tacit's own files). The note is an owner-only file in tacit's home, which scripts may not
// write (fs/protected-paths.ts), read as the home's other files are (audit/own-file.ts); any
// problem with it means a probe, as before.

import { mkdirSync, readFileSync, readlinkSync, unlinkSync } from "node:fs";
import { createHash } from "node:crypto";
import path from "node:path";
import { readOwnFile, replaceOwnFile } from "./audit/own-file.js";
import { tacitHome, tacitHomeSettingProblem } from "./tacit-home.js";

const NOTE_NAME = "namespace-probe";

/** The kernel's settings that decide whether a user may make the namespaces tacit asks for. */
const NAMESPACE_SETTINGS = [
  "/proc/sys/user/max_user_namespaces",
  "/proc/sys/user/max_net_namespaces",
  "/proc/sys/user/max_mnt_namespaces",
  "/proc/sys/user/max_pid_namespaces",
  "/proc/sys/user/max_ipc_namespaces",
  "/proc/sys/kernel/unprivileged_userns_clone",
  "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
];
const OWN_NAMESPACES = ["user", "net", "mnt", "pid", "ipc"];
/** This process's privileges, as /proc/self/status gives them (its other lines change from process to process). */
const PRIVILEGE_FIELDS = /^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):.*$/gm;

function readOr(read: () => string): string {
  try {
    return read();
  } catch {
    return "-";
  }
}

/** The note's file, or null where tacit's home is not one to trust (a relative TACIT_HOME, which the CLI refuses later). */
function noteFile(): { file: string; home: string } | null {
  if (process.platform !== "linux" || tacitHomeSettingProblem() !== null) return null;
  const home = tacitHome();
  return { file: path.join(home, NOTE_NAME), home };
}

/** What the note says for `command` on this host now; null where there is no boot to key it by. */
function keyOf(command: readonly string[]): string | null {
  const boot = readOr(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim());
  if (boot === "-") return null;
  const facts = {
    boot,
    // A namespace's number may be used again once it is gone; what is in view, and who this is
    // in it, tells namespaces apart too: the mounts (the programs the setup runs among them, and
    // each mount's own number), the user namespace's maps, the capabilities held.
    namespaces: OWN_NAMESPACES.map((kind) => readOr(() => readlinkSync(`/proc/self/ns/${kind}`))),
    mounts: createHash("sha256").update(readOr(() => readFileSync("/proc/self/mountinfo", "utf8"))).digest("hex"),
    maps: ["uid_map", "gid_map", "setgroups"].map((file) => readOr(() => readFileSync(`/proc/self/${file}`, "utf8"))),
    privileges: readOr(() => readFileSync("/proc/self/status", "utf8").match(PRIVILEGE_FIELDS)?.join("\n") ?? ""),
    settings: NAMESPACE_SETTINGS.map((file) => readOr(() => readFileSync(file, "utf8").trim())),
    command,
  };
  return `works ${createHash("sha256").update(JSON.stringify(facts)).digest("hex")}\n`;
}

/** What the note says of a probe's command: whether a run found it works, and how to note that it does. */
export interface ProbeNote {
  remembered: boolean;
  /** Notes that the command worked (nothing where it is remembered already, or the note may not be written). */
  remember(): void;
}

const NO_NOTE: ProbeNote = { remembered: false, remember: () => undefined };
const REMEMBERED: ProbeNote = { remembered: true, remember: () => undefined };

/**
 * The note on `command` (a probe's) on this host, as now: read once, its key made once. A run that
 * starts on the note writes nothing; one that probed writes it, in tacit's home (made owner-only
 * if missing) where that is the user's own.
 */
export function probeNote(command: readonly string[]): ProbeNote {
  const note = noteFile();
  const key = note === null ? null : keyOf(command);
  if (note === null || key === null) return NO_NOTE;
  const refuse = () => new Error("not the user's own");
  try {
    if (readOwnFile(note.file, 0o077, refuse, note.home) === key) return REMEMBERED;
  } catch {
    return NO_NOTE; // A note, or a home, others may change: neither used nor written.
  }
  return {
    remembered: false,
    remember: () => {
      try {
        // Made owner-only where missing; one that exists is left as it is (tacit's other uses of it
        // judge its mode themselves: one others may write is refused, not quietly mended here).
        mkdirSync(note.home, { recursive: true, mode: 0o700 });
        // Checked again as a read checks it, the home perhaps made only now: a home others may write is not written in.
        readOwnFile(note.file, 0o077, refuse, note.home);
        replaceOwnFile(note.file, key, { sync: false });
      } catch {
        // Not noted: the next run probes, as every run did before.
      }
    },
  };
}

/** Forgets the note: a sandbox failed to start on it. */
export function forgetProbe(): void {
  const note = noteFile();
  if (note === null) return;
  try {
    unlinkSync(note.file);
  } catch {
    // None, or not ours to remove: a wrong one fails closed again, and says so.
  }
}
