// tacit's own files, which no script may read or write whatever the allowed roots say: the
// config file (it may hold the LLM key), the secure output (plaintext secrets), tacit's home
// (remembered approvals and the audit signing key), the audit log and its lock, and the record
// directory. A script that could reach them
// could read secrets back, grant itself approvals, or forge and sign the log.

import type { RunnerConfig } from "../config.js";
import { tacitHome } from "../tacit-home.js";
import { isWithin, resolveRealOrSelf } from "./containment.js";

export interface ProtectedPath {
  /** Real (symlinks resolved) and absolute. */
  path: string;
  /** What it is, for the refusal. */
  what: string;
}

export function protectedPathsOf(config: RunnerConfig, env: NodeJS.ProcessEnv = process.env): ProtectedPath[] {
  const paths: ProtectedPath[] = [
    { path: resolveRealOrSelf(tacitHome(env)), what: "tacit's home (remembered approvals and the audit signing key)" },
  ];
  if (config.configFile) paths.push({ path: resolveRealOrSelf(config.configFile), what: "tacit's config file (--config, which may hold the LLM API key)" });
  if (config.library.secureOutput) paths.push({ path: resolveRealOrSelf(config.library.secureOutput), what: "the secure output file (--secure-output, which holds plaintext)" });
  if (config.auditLog) {
    paths.push({ path: resolveRealOrSelf(config.auditLog), what: "the audit log (--audit-log)" });
    paths.push({ path: resolveRealOrSelf(`${config.auditLog}.lock`), what: "the audit log's lock" });
  }
  if (config.recordPath) paths.push({ path: resolveRealOrSelf(config.recordPath), what: "the record directory (--record)" });
  return paths;
}

/** The protected path that `named` or `real` is (or lies inside), or null. */
export function protectedPathOf(paths: readonly ProtectedPath[], named: string, realPath: string): ProtectedPath | null {
  return paths.find((p) => isWithin(realPath, p.path) || isWithin(named, p.path)) ?? null;
}

/** As absolute classified-path patterns, so a recursive search skips them without opening them. */
export function asSearchExclusions(paths: readonly ProtectedPath[]): string[] {
  return paths.map((p) => p.path.replace(/[*?[\]{}()!+@\\]/g, "\\$&"));
}
