// What only a shell expands, found in a value tacit reads as written: a config file's paths and
// patterns, a comma-separated flag's later items, an environment variable an MCP client's
// settings set. Light (no zod), for tacit-home.ts, which main.ts loads first of all.

import os from "node:os";
import path from "node:path";

/**
 * Where `value`, a path or a classified pattern, holds what only a shell expands: "~" (a leading
 * ~, ~/… or ~user), or "$NAME" for a variable the environment sets (at the start of a component);
 * null if it holds neither. tacit reads a config file's values and the items of a comma-separated
 * flag as written (a shell expands ~ only at a word's start): "~/sink.log" made a directory "~"
 * in the working directory for the plaintext, and the classified pattern "~/.secret" matched
 * nothing, so the file it meant was read as plain text.
 */
export function shellOnlyPart(value: string, env: NodeJS.ProcessEnv): { part: string; why: string; expanded: string | null } | null {
  const tildeWhy = "a shell expands ~ only at the start of a word, and a config file's values and a comma-separated flag's later items reach tacit as written";
  if (/^~(?:$|\/)/.test(value)) return { part: "~", why: tildeWhy, expanded: path.join(os.homedir(), value.slice(1)) };
  if (/^~[A-Za-z_]/.test(value)) return { part: value.split("/")[0]!, why: tildeWhy, expanded: null };
  const variable = /(?:^|\/)\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/.exec(value);
  const name = variable?.[1] ?? variable?.[2];
  if (name === undefined || env[name] === undefined) return null;
  // Only HOME's value is shown in the fix, and only where it leads the value: another variable's may be a secret.
  const expanded = name === "HOME" && variable!.index === 0 ? `${env.HOME}${value.slice(variable![0].length)}` : null;
  return { part: `$${name}`, why: "a config file's values, and a flag's value in single quotes, reach tacit as written, and tacit expands no variable", expanded };
}
