// Shared pieces of the files-and-secrets suite: real temp trees, the real CLI run inside
// them, a script prelude that reports each attempt on one parseable line, and the checks
// that look at the tree from the outside (never taking the script's word for it).

import { randomUUID } from "node:crypto";
import { lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { type CliResult, runCli, tempDir, unchecked } from "../helpers.js";

export type { CliResult };

/** A JS string literal for embedding a value in script text. */
export const lit = (value: string | number): string => JSON.stringify(value);

/** A random value that can only reach output if a secret leaked. */
export function makeCanary(): string {
  return `canary-${randomUUID()}`;
}

/** Every file under `dir`, with what it holds, by path relative to it. */
export function filesUnder(dir: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    found[path.relative(dir, file)] = readFileSync(file, "utf8");
  }
  return found;
}

/** A temp dir by its real path (so paths the host reports compare equal). */
export function realTempDir(prefix: string, base?: string): { dir: string; cleanup: () => void } {
  const { dir, cleanup } = tempDir(prefix, base);
  return { dir: realpathSync(dir), cleanup };
}

export type TreeSpec = Record<string, string | Buffer | { symlink: string } | { dir: true }>;

/** Creates files (parents made), directories and symlinks under `root`, in the order given. */
export function writeTree(root: string, spec: TreeSpec): void {
  for (const [name, content] of Object.entries(spec)) {
    const target = path.join(root, name);
    mkdirSync(path.dirname(target), { recursive: true });
    if (typeof content === "string" || Buffer.isBuffer(content)) writeFileSync(target, content);
    else if ("symlink" in content) symlinkSync(content.symlink, target);
    else mkdirSync(target, { recursive: true });
  }
}

/**
 * A program that runs Node with the permission bits binding it (written into `dir`): this Node when
 * not root, else this Node under util-linux `setpriv` without CAP_DAC_OVERRIDE and
 * CAP_DAC_READ_SEARCH, whom a directory of mode 000 then stops as it stops any user.
 */
export function nodeBoundByPermissions(dir: string): string {
  if (process.getuid?.() !== 0) return process.execPath;
  const wrapper = path.join(dir, "node-without-dac-override");
  writeFileSync(wrapper, `#!/bin/sh\nexec setpriv --bounding-set -dac_override,-dac_read_search --inh-caps -all ${JSON.stringify(process.execPath)} "$@"\n`, { mode: 0o755 });
  return wrapper;
}

/** `tacit run --no-check -` (see unchecked) with the script on stdin, working directory `cwd` (the default allowed root). */
export function tacit(cwd: string, script: string, args: string[] = [], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(unchecked(["run", ...args, "-"]), { cwd, input: script, env });
}



/**
 * Script prelude: `attempt(label, f)` runs `f` and prints one line
 *   @@<label>\t<ok|SecurityError|Error|TypeError…>\t<JSON of the result or the message>
 * which `attempts()` parses. Every attempt is judged by the test, never by the script.
 */
export const ATTEMPT_PRELUDE = `
function attempt(label: string, f: () => unknown): void {
  try {
    const value = f();
    println("@@" + label + "\\tok\\t" + JSON.stringify(value === undefined ? null : value));
  } catch (e) {
    const error = e as Error;
    println("@@" + label + "\\t" + (e instanceof SecurityError ? "SecurityError" : String(error?.name)) + "\\t" + JSON.stringify(String(error?.message)));
  }
}
`;

export interface Attempt {
  status: string;
  /** The result (status "ok") or the error message. */
  value: unknown;
}

/** The `attempt` lines of a script's output, by label. */
export function attempts(stdout: string): Map<string, Attempt> {
  const found = new Map<string, Attempt>();
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("@@")) continue;
    const [label, status, json] = line.slice(2).split("\t");
    found.set(label!, { status: status!, value: JSON.parse(json!) });
  }
  return found;
}

/** The attempt with this label, which must have been made. */
export function attemptOf(found: Map<string, Attempt>, label: string): Attempt {
  const result = found.get(label);
  expect(result, `attempt "${label}" was not reported`).toBeDefined();
  return result!;
}

/** Every attempt in `labels` was refused with a SecurityError whose message matches `message`. */
export function expectRefused(found: Map<string, Attempt>, labels: readonly string[], message?: RegExp): void {
  for (const label of labels) {
    const { status, value } = attemptOf(found, label);
    expect(status, `${label}: ${JSON.stringify(value)}`).toBe("SecurityError");
    if (message) expect(String(value), label).toMatch(message);
  }
}

/** Regular files under `root` (symlinks are not followed nor listed), absolute. */
export function regularFiles(root: string): string[] {
  const files: string[] = [];
  const visit = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      const stat = lstatSync(full);
      if (stat.isDirectory()) visit(full);
      else if (stat.isFile()) files.push(full);
    }
  };
  visit(root);
  return files.sort();
}

/**
 * The canary is nowhere the agent could see: not in stdout or stderr, and not in any regular
 * file under `root` except those `mayHold` accepts (classified files, the sink).
 */
export function expectNoLeak(canary: string, seen: { stdout: string; stderr: string }, root: string, mayHold: (file: string) => boolean): void {
  expect(seen.stdout.includes(canary), "canary leaked to stdout").toBe(false);
  expect(seen.stderr.includes(canary), "canary leaked to stderr").toBe(false);
  for (const file of regularFiles(root)) {
    if (mayHold(file)) continue;
    expect(readFileSync(file, "latin1").includes(canary), `canary leaked into the ordinary file ${file}`).toBe(false);
  }
}
