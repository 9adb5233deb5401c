// mise's configuration in a directory the user trusted. mise trusts by path, not by content: `mise
// trust` records the directory (a link in mise's state directory, trusted-configs/), and every
// mise configuration file there, changed or new, is loaded with its dangerous features on from
// then on (only paranoid mode, off by default, hashes the content). Shown with mise 2026.9.15
// (npm's @jdxcode/mise): after `mise trust` of a mise.toml holding `[env] _.source = "./env.sh"`,
// a `touch PWNED` written into env.sh ran at the next `mise hook-env` (which mise's shell hook
// runs at every prompt and cd); so did a `[hooks] enter = "touch PWNED"` written into the
// trusted mise.toml itself, and a mise.local.toml created next to it (its hooks, and the
// script its `_.source` named). A mise.toml in a subdirectory is not trusted with it.
//
// So, in a directory mise trusts (a trusted-configs link leads to it or to a configuration file
// in it, or MISE_TRUSTED_CONFIG_PATHS holds it): a script may not change (nor create) a mise
// configuration file there (mise.toml, .mise.toml, mise.local.toml, mise.<env>.toml, .rtx.toml,
// .config/mise.toml, .config/mise/config.toml, .config/mise/conf.d/*.toml, .mise/config.toml,
// mise/config.toml, .tool-versions — whose `path:` versions put directories on PATH), nor a
// file such a configuration names with `_.source` or `_.file` (scripts run, dotenv files whose
// variables, PROMPT_COMMAND, PATH, go into the user's shell), nor a file of the directory a
// hook's command names. Elsewhere mise configuration stays writable: mise asks to trust it
// first (showing it). Reading is never refused. Costs a stat of the trusted-configs directory
// per operation (its links are read again only when it changed), and for a write inside a
// trusted directory, a few directory listings and the reading of its configuration files.
// Not covered: mise's trusted_config_paths setting (only the environment variable is read),
// trust shared from a git worktree's main checkout, what the named scripts run in turn, the
// programs in directories `_.path` puts on PATH, and tasks (they run only when asked for).

import { readdirSync, readlinkSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { readBoundedText, ReadDirectories } from "../bounded-file.js";
import { shellWords } from "../shell-word.js";
import { isWithin, resolveRealOrSelf } from "./containment.js";
import { OperationMemo } from "./operation-memo.js";
import { tomlAssignments, tomlStrings as stringsIn } from "./toml-lines.js";
import type { ProtectedPath } from "./protected-paths.js";

/** A configuration is a few lines; a larger one is judged by its first 64 KiB. */
const CONFIG_LIMIT_BYTES = 64 * 1024;

/**
 * A mise configuration file, as a path relative to the directory it configures (the one `mise
 * trust` records). In any case: on a case-insensitive file system `MISE.TOML` is mise.toml.
 */
const MISE_CONFIG =
  /^(?:\.?(?:mise|rtx)(?:\.[^/]+)?\.toml|\.config\/mise(?:\.[^/]+)?\.toml|\.config\/mise\/(?:config|mise)(?:\.[^/]+)?\.toml|\.config\/mise\/conf\.d\/[^/]+\.toml|\.?mise\/config(?:\.[^/]+)?\.toml|\.tool-versions)$/i;

/** The directories mise's configuration files lie in, relative to the directory they configure. */
const CONFIG_DIRS = ["", ".config", ".config/mise", ".config/mise/conf.d", ".mise", "mise"];

/** mise's trust records: a link per trusted directory (or configuration file). */
function trustedConfigsDir(env: NodeJS.ProcessEnv): string {
  const state = env.MISE_STATE_DIR || path.join(env.XDG_STATE_HOME || path.join(os.homedir(), ".local", "state"), "mise");
  return path.join(state, "trusted-configs");
}

/** Where each link in a trust records directory leads (as written and really), read again only when the directory changes. */
const trustedPaths = new ReadDirectories<readonly string[]>((dir) => {
  const paths: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return paths;
  }
  for (const entry of entries) {
    try {
      const target = path.resolve(dir, readlinkSync(path.join(dir, entry)));
      // A trusted directory that is gone: its name is enough.
      const real = resolveRealOrSelf(target);
      paths.push(...(real === target ? [target] : [target, real]));
    } catch {
      // Not a link: not a trust record.
    }
  }
  return paths;
});

/** The directories mise trusts (a link to a configuration file trusts the directory it configures), read once per operation (the links again only when their directory changed). */
const trustedMemo = new OperationMemo<ReadonlySet<string>>();

function trustedRoots(env: NodeJS.ProcessEnv = process.env): ReadonlySet<string> {
  return trustedMemo.get("", () => {
    const paths = trustedPaths.get(trustedConfigsDir(env))?.value ?? [];
    return new Set(paths.map((entry) => configRootOf(entry) ?? entry));
  });
}

/** The environment's MISE_TRUSTED_CONFIG_PATHS entries (each trusts everything below it). */
const envTrusted = (env: NodeJS.ProcessEnv = process.env): string[] =>
  (env.MISE_TRUSTED_CONFIG_PATHS ?? "")
    .split(path.delimiter)
    .filter((entry) => entry !== "")
    .map((entry) => path.resolve(entry.replace(/^~(?=\/|$)/, os.homedir())));

/** Whether mise trusts the configuration of `root`. */
const isTrusted = (root: string, trusted: ReadonlySet<string>, fromEnv: readonly string[]): boolean =>
  trusted.has(root) || fromEnv.some((entry) => isWithin(root, entry));

/**
 * The directory `file` configures if it is a mise configuration file, or null: the farthest one
 * that makes it one (.config/mise/config.toml configures the directory above .config, not .config).
 */
function configRootOf(file: string): string | null {
  const parts = file.split(path.sep);
  for (let up = Math.min(4, parts.length - 1); up >= 1; up--) {
    if (MISE_CONFIG.test(parts.slice(-up).join("/"))) return parts.slice(0, -up).join(path.sep) || path.sep;
  }
  return null;
}

/** A file a trusted configuration names, and how. */
interface Named {
  file: string;
  config: string;
  by: string;
  /** A glob (`_.source = "env/*.sh"`): `file` is a pattern. */
  glob: boolean;
}

/** A path a configuration in `root` names, resolved as mise does (`{{config_root}}` and relative paths from the root), or null when only mise knows it. */
function namedPath(value: string, root: string): string | null {
  const text = value.replace(/\{\{\s*config_root\s*\}\}/g, root).replace(/^~(?=\/|$)/, os.homedir());
  if (text === "" || text.includes("{{") || text.includes("{%") || text.includes("$")) return null;
  return path.resolve(root, text);
}

/** What the configuration `config` of `root` (text `text`) names to load or run. */
function namedBy(text: string, config: string, root: string): Named[] {
  const named: Named[] = [];
  const add = (value: string, by: string): void => {
    const file = namedPath(value, root);
    if (file !== null) named.push({ file, config, by, glob: /[*?[]/.test(value) });
  };
  for (const { key: full, value } of tomlAssignments(text)) {
    const by = `${full} = ${value.split("\n")[0]!.trim()}${value.includes("\n") ? " …" : ""}`;
    // _.source and _.file, as `[env] _.source = …`, `_ = { source = … }`, `[env._.source] path = …`, `[[env._.file]]`.
    if (/(?:^|\.)_\.(?:source|file)(?:\.path)?$/.test(full) || (/(?:^|\.)_$/.test(full) && /\b(?:source|file)\s*=/.test(value))) {
      for (const s of stringsIn(full.endsWith("_") ? (/\b(?:source|file)\s*=\s*(\[[^\]]*\]|\{[^}]*\}|"[^"]*"|'[^']*')/.exec(value)?.[1] ?? "") : value)) add(s, by);
    } else if (/^hooks(?:\.|$)/.test(full)) {
      // A hook's command (a string, an array of them, or { script = … }): the words that name a file in the directory.
      for (const command of stringsIn(value)) {
        for (const word of shellWords(command, { home: os.homedir() })) {
          if (word.expands || word.text.startsWith("-") || word.text === "") continue;
          const file = namedPath(word.text, root);
          if (file !== null && isWithin(file, root) && file !== root && statSync(file, { throwIfNoEntry: false })?.isFile()) named.push({ file, config, by, glob: false });
        }
      }
    }
  }
  return named;
}

/** The configuration files of `root`, remembered for the operation. */
const configsAt = new OperationMemo<readonly string[]>();

function configsOf(root: string): readonly string[] {
  return configsAt.get(root, () => {
    const configs: string[] = [];
    for (const dir of CONFIG_DIRS) {
      let entries: string[];
      try {
        entries = readdirSync(path.join(root, dir));
      } catch {
        continue;
      }
      for (const entry of entries) {
        const relative = dir === "" ? entry : `${dir}/${entry}`;
        if (MISE_CONFIG.test(relative)) configs.push(path.join(root, relative));
      }
    }
    return configs;
  });
}

/** What the configurations of the trusted `root` name, remembered for the operation. */
const namedAt = new OperationMemo<readonly Named[]>();

function namedIn(root: string): readonly Named[] {
  return namedAt.get(root, () =>
    configsOf(root).flatMap((config) => {
      if (config.endsWith(".tool-versions")) return [];
      const text = readBoundedText(config, CONFIG_LIMIT_BYTES);
      return text === null ? [] : namedBy(text, config, root);
    }),
  );
}

/** A glob of mise's (`*`, `?`, `**`) as a regular expression over a whole path. */
function globMatches(glob: string, file: string): boolean {
  let source = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      source += ".*";
      i++;
    } else if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else source += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`).test(file);
}

/** The mise configuration of a trusted directory `changed` (a path a script would change) is, or a file such a configuration names; or null. */
export function miseChangeOf(changed: string): ProtectedPath | null {
  const trusted = trustedRoots();
  const fromEnv = envTrusted();
  if (trusted.size === 0 && fromEnv.length === 0) return null;
  const root = configRootOf(changed);
  if (root !== null && isTrusted(root, trusted, fromEnv)) {
    return {
      path: changed,
      what: `mise's configuration of ${root}, a directory mise trusts`,
      readable: true,
      refusal:
        "scripts may read it but not change it (nor create it): mise trusts a directory by its path, not by what its configuration says, " +
        "so its shell hook would load a changed or new configuration there at the user's next prompt or cd without asking again, running " +
        "its hooks and the scripts its `_.source` names and exporting its variables into the user's shell, outside the sandbox. " +
        "Ask the user to change it",
    };
  }
  // A file the configuration of a trusted directory above it names.
  for (let at = path.dirname(changed); ; at = path.dirname(at)) {
    const hit = isTrusted(at, trusted, fromEnv) ? namedIn(at).find(({ file, glob }) => (glob ? globMatches(file, changed) : isWithin(changed, file))) : undefined;
    if (hit) {
      return {
        path: changed,
        what: `a file mise loads or runs for ${hit.config} (${hit.by}), in a directory mise trusts`,
        readable: true,
        refusal:
          "scripts may read it but not change it: mise's shell hook loads it at the user's next prompt or cd in that directory, running " +
          "its code or exporting its variables (PROMPT_COMMAND, PATH, …) into the user's shell, outside the sandbox, without asking " +
          "(mise trusts the directory, not the files' content). Ask the user to change it",
      };
    }
    if (path.dirname(at) === at) return null;
  }
}

