// The user's own configuration, in their home directory: the hidden entries directly in it
// (~/.bashrc, ~/.profile, ~/.zshrc, ~/.ssh, ~/.config, ~/.local, ~/.gitconfig, …) and everything
// below them. Programs run or trust what lies there with the user's full authority, outside the
// sandbox, without asking: the shell its startup files at the user's next terminal, sshd the keys
// in ~/.ssh/authorized_keys and the commands of ~/.ssh/rc, ssh the ProxyCommand of ~/.ssh/config,
// git ~/.gitconfig's aliases and core.fsmonitor, the desktop session ~/.config/autostart, systemd
// the user's units, kubectl and the AWS CLI the credential commands of ~/.kube/config and
// ~/.aws/config, direnv ~/.config/direnv/direnvrc for every .envrc, … Where an allowed root holds the
// home directory (tacit started in it: the working directory is the default root), a script could
// change any of them. Shown through the real CLI, started in a home directory with no flags: a
// script appended `touch PWNED` to ~/.bashrc and a key to ~/.ssh/authorized_keys, and the user's
// next `bash -i` made PWNED.
// So a script may read them (classified ones aside) but not change, create or delete anything
// there, unless the operator made that entry, or a directory inside it, an allowed root of its own
// (`--allowed-roots ~/.config/nvim`: editing that configuration is then the point). Judged for the
// home directory as named and where it led when first asked, by HOME and by the password database. Not covered: another user's home directory,
// and ~/bin, which some profiles put on PATH (an executable there can be rewritten).

import os from "node:os";
import path from "node:path";
import { isWithin, namedAndReal } from "./containment.js";
import type { ProtectedPath } from "./protected-paths.js";

let known: { home: string; homes: readonly string[] } | undefined;
let byPasswd: { home: string | null } | undefined;

/**
 * The user's home as the password database has it, or null where it gives none. HOME may name
 * another (a test, a sandboxed shell, a client that sets it), and os.homedir() reads HOME first;
 * the programs that trust what lies in the real home (sshd, a login shell, the desktop session)
 * do not.
 */
export function passwdHome(): string | null {
  if (byPasswd === undefined) {
    let home: string | null = null;
    try {
      home = os.userInfo().homedir || null;
    } catch {
      // No entry for this user: no home to protect there.
    }
    byPasswd = { home: home === null ? null : path.resolve(home) };
  }
  return byPasswd.home;
}

/**
 * The home directory as HOME names it and as the password database has it (passwdHome), each as
 * named and where it leads (one entry where they are the same), resolved once for the process's
 * home: every change a script makes asks, and a realpath each time cost a run of 10,000 deletes
 * a measurable share of its time limit. With HOME set elsewhere, a run started in the real home
 * let a script create files there, and a confined command read ~/.npmrc, the real home's hidden
 * entries being protected by neither.
 */
export function homes(): readonly string[] {
  const home = path.resolve(os.homedir());
  if (known?.home !== home) {
    const passwd = passwdHome();
    const named = passwd === null ? [home] : [home, passwd];
    known = { home, homes: namedAndReal(named) };
  }
  return known.homes;
}

/**
 * The hidden entry of the home directory that `changed` (a path a script would change) is or lies
 * in, as a protected path; or null. None where an allowed root (`roots`) that holds `changed` lies
 * inside that entry: the operator chose to let scripts work there.
 */
export function homeConfigChangeOf(changed: string, roots: readonly string[]): ProtectedPath | null {
  for (const home of homes()) {
    if (changed === home || !isWithin(changed, home)) continue;
    const first = path.relative(home, changed).split(path.sep)[0]!;
    if (!first.startsWith(".")) continue;
    const entry = path.join(home, first);
    if (roots.some((root) => isWithin(changed, root) && isWithin(root, entry))) return null;
    return {
      path: entry,
      what: `the user's own configuration in their home directory (${entry})`,
      readable: true,
      refusal:
        "scripts may read it but not change it (nor create or delete anything there): shells, ssh, git, the desktop session and other " +
        "programs run or trust what lies there with the user's full authority, outside the sandbox (a line added to ~/.bashrc runs at the " +
        "user's next terminal, a key added to ~/.ssh/authorized_keys logs its owner in). Work in a project directory, or ask the user; to " +
        "let scripts change a configuration directory there, the operator can make it, or a directory inside it, an allowed root of its own " +
        "(--allowed-roots ~/.config/nvim)",
    };
  }
  return null;
}
