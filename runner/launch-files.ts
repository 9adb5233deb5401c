// The files that decide how tacit itself is started: npm's configuration, which `npx tacit`
// reads before it starts tacit (its `node-options` becomes NODE_OPTIONS, so a `--require` there
// runs a file of anyone's choosing inside tacit, with your authority, before tacit's first line;
// `script-shell`, `userconfig` and kin are as bad), and the MCP clients' settings this README
// tells you to register tacit in (the command that starts tacit, its policy flags, and the
// client's own tool denials). A script that could write them, with nothing but
// requestFileSystem("."), would run code of its own outside the sandbox, or widen its own policy,
// the next time tacit starts. fs/protected-paths.ts lets scripts read them but not change them.

import os from "node:os";
import path from "node:path";
import { resolveRealOrSelf } from "./fs/containment.js";

/**
 * Relative to the directory tacit was started in: the project settings of the MCP clients the
 * README names (and OpenCode's .opencode, whose plugins it runs at start).
 */
const CLIENT_PROJECT_FILES = [".mcp.json", ".vscode/mcp.json", "opencode.json", "opencode.jsonc", ".opencode", ".claude/settings.json", ".claude/settings.local.json"];

/** Relative to the home directory: the same clients' user settings. */
const CLIENT_USER_FILES = [".claude.json", ".claude/settings.json", ".config/opencode/opencode.json", ".config/opencode/opencode.jsonc"];

/** An npm setting from the environment (npm reads npm_config_x in any case). */
function npmSetting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const wanted = `npm_config_${name}`;
  const key = Object.keys(env).find((k) => k.toLowerCase() === wanted && env[k]);
  return key === undefined ? undefined : env[key];
}

/**
 * Every place, absolute, as named and where it really leads: npm's project configuration
 * (.npmrc in the start directory and each directory above it, since npm's project is the
 * nearest one with a package.json or node_modules), its user and global configuration, npm's
 * own package, and the MCP clients' settings.
 */
export function tacitLaunchFiles(cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): string[] {
  const places: string[] = [];
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    places.push(path.join(dir, ".npmrc"));
    if (path.dirname(dir) === dir) break;
  }
  const localPrefix = npmSetting(env, "local_prefix");
  if (localPrefix) places.push(path.join(path.resolve(localPrefix), ".npmrc"));
  const home = env.HOME ? path.resolve(env.HOME) : os.homedir();
  const userConfig = npmSetting(env, "userconfig");
  places.push(userConfig ? path.resolve(userConfig) : path.join(home, ".npmrc"));
  // The global configuration is under npm's prefix (by default the Node install's).
  const nodePrefix = path.dirname(path.dirname(path.resolve(process.execPath)));
  const prefix = path.resolve(npmSetting(env, "prefix") ?? nodePrefix);
  const globalConfig = npmSetting(env, "globalconfig");
  places.push(globalConfig ? path.resolve(globalConfig) : path.join(prefix, "etc", "npmrc"));
  // And the npm installed with that Node, which runs `npx tacit` (its builtin npmrc included):
  // with a Node under your home (nvm) and the home a root, a script that rewrote it would run
  // at the next npx, as a replaced Node would (paths.ts).
  for (const node of [process.execPath, resolveRealOrSelf(path.resolve(process.execPath))]) {
    places.push(path.join(path.dirname(path.dirname(path.resolve(node))), "lib", "node_modules", "npm"));
  }
  for (const file of CLIENT_PROJECT_FILES) places.push(path.resolve(cwd, file));
  for (const file of CLIENT_USER_FILES) places.push(path.join(home, file));
  return [...new Set(places.flatMap((place) => [place, resolveRealOrSelf(place)]))];
}
