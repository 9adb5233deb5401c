// What git takes for a repository's directory, and what in one names the commands git runs.

/**
 * A repository's own directory by its path (a `.git`, a submodule's or a linked worktree's under
 * it), when it holds HEAD; any other directory is one by its shape, as git tells (HEAD beside
 * objects and refs, or beside a commondir): a bare repository in the roots (a project's local
 * remote, `remote.git`) is one. A `commondir` there names the directory git reads that repository's
 * configuration and hooks from, in place of its own (see confinement.ts, gitMovesUndone).
 */
const GIT_DIRECTORY = /(?:^|\/)\.git(?:\/(?:modules\/.+|worktrees\/[^/]+))?$/i;
export const COMMONDIR = "commondir";
/**
 * What in a repository's directory names commands git runs with the user's full authority,
 * unconfined: its configuration (core.fsmonitor, aliases), its hooks (a bare repository's
 * pre-receive runs at the user's next `git push` to it), and where they are (commondir).
 */
export const REPOSITORY_CONTROLS: ReadonlySet<string> = new Set(["config", "config.worktree", "hooks", COMMONDIR]);

/** Whether `dir`, holding the entries named `names` (in lower case), is a repository's directory. */
export function isRepository(dir: string, names: ReadonlySet<string>): boolean {
  return names.has("head") && (GIT_DIRECTORY.test(dir) || names.has(COMMONDIR) || (names.has("objects") && names.has("refs")));
}
