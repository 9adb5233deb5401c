// What the two setups that mount a view of the host's files share: the confinement of allowed
// commands (exec/confinement.ts) and the sandbox's mount namespace (sandbox-mounts.ts). Each
// writes a mount table (fstab) and hands it to util-linux `mount -a`.

/** util-linux mount, where the host has it. */
export const MOUNT_CANDIDATES = ["/usr/bin/mount", "/bin/mount"];

/**
 * The source named by the mount table's remount lines (which the kernel ignores). Not "none":
 * `mount -a` skips a line whose source and target are a mount's own as already made, and mounts
 * named "none" exist (tracefs as perf mounts it, `mount -t tmpfs none …`); the setups, which
 * refuse where a mount was skipped, refused every command for it.
 */
export const REMOUNT_SOURCE = "tacit-remount";

/** A field of a mount table (fstab): space, tab, newline and backslash as octal escapes. */
export function tableField(value: string): string {
  return value.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, "0")}`);
}

/** The table's line that makes the mount at `point` read-only (bind mounts keep their own flags). */
export function readOnlyLine(point: string): string {
  return `${REMOUNT_SOURCE} ${tableField(point)} none remount,bind,ro 0 0`;
}
