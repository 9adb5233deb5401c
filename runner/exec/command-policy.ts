// Which commands may run. Decided on the command's name alone: the host then finds the
// program on its own PATH, so a name cannot smuggle in a path the agent chose.

import path from "node:path";

/**
 * Used by --strict when --command-permissions is unset: file tools, shells, interpreters,
 * network tools and command runners — whatever would hand a script the authority it was
 * not given (read any file, run any code, reach any host).
 */
export const STRICT_DENYLIST: ReadonlySet<string> = new Set([
  // file tools
  "cat", "tac", "head", "tail", "less", "more", "cp", "mv", "rm", "rmdir", "dd", "tee", "ln", "chmod", "chown", "chgrp",
  "find", "locate", "touch", "truncate", "shred", "install", "mkfifo", "mknod", "split", "base64", "xxd", "od", "strings",
  "tar", "zip", "unzip", "gzip", "gunzip", "zcat", "bzip2", "xz", "7z", "rsync", "sed", "awk", "gawk", "mawk", "vi", "vim",
  "nvim", "nano", "emacs", "ed",
  // shells
  "sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "csh", "tcsh", "busybox", "pwsh", "powershell", "cmd",
  // interpreters
  "python", "python2", "python3", "node", "nodejs", "deno", "bun", "perl", "ruby", "php", "lua", "luajit", "tclsh",
  "wish", "java", "jshell", "osascript", "R", "Rscript", "julia", "ghci", "irb", "gdb", "lldb",
  // network tools
  "curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ssh", "scp", "sftp", "ftp", "tftp", "ping", "dig",
  "nslookup", "host", "openssl", "aria2c",
  // command runners and privilege
  "env", "xargs", "nohup", "timeout", "watch", "nice", "ionice", "chroot", "sudo", "su", "doas", "pkexec", "setsid",
  "strace", "ltrace", "script", "expect", "time", "parallel", "at", "crontab", "systemd-run", "docker", "podman",
  "kubectl", "npx", "npm", "pnpm", "yarn", "pip", "pip3", "make", "eval", "exec", "command", "builtin", "source",
].map((name) => name.toLowerCase()));

export interface CommandPolicy {
  /** Globs (`*` only) matched against the whole command name; null when unset. */
  commandPermissions: readonly string[] | null;
  strictMode: boolean;
}

function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
}

/** Why the policy refuses `command`, or null when it may run. */
export function commandRefusal(command: string, policy: CommandPolicy): string | null {
  if (command === "" || command.includes("/") || command.includes("\0")) {
    return `"${command}" is not a command name: give the name alone (like "git"); the host finds the program on its own PATH`;
  }
  if (policy.commandPermissions !== null) {
    if (policy.commandPermissions.some((glob) => globToRegExp(glob).test(command))) return null;
    return `"${command}" is not among the permitted commands (${policy.commandPermissions.join(", ") || "none"}); the operator can add it with --command-permissions (config libraryConfig.commandPermissions)`;
  }
  if (policy.strictMode) {
    if (!STRICT_DENYLIST.has(path.basename(command).toLowerCase())) return null;
    return `"${command}" is refused under --strict: it is a file tool, shell, interpreter, network tool or command runner; the operator can permit named commands with --command-permissions`;
  }
  return `no command may run: the operator has set neither --command-permissions (config libraryConfig.commandPermissions) nor --strict (config libraryConfig.strictMode)`;
}
