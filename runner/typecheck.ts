// Type-checks a script against library/interface.d.ts with TypeScript 7's native checker:
// lib es2023 only (no DOM, no @types), strict, every file a module. Runs after the validator,
// which has already refused anything that would make the checker read other files.

import { type ChildProcess, spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import { CHECKER_LIFELINE_FD, checkerCommand, shareWithChecker } from "./checker-process.js";
import { CollectedBytes } from "./collected-bytes.js";
import { answerLifeline } from "./exec/lifeline.js";
import { cleanUpAtExit } from "./exit-cleanup.js";
import { interfaceFile } from "./interface-file.js";
import { monotonicMs } from "./monotonic.js";
import { namespaceFailureAtStart, NamespaceUnavailableError } from "./network-namespace.js";
import { printable } from "./printable.js";
import { randomBytes } from "./random-token.js";
import { interfacePath, typescriptVersion } from "./paths.js";
import { DEFAULT_MEMORY_LIMIT_MB, RSS_ALLOWANCE_MB } from "./limits.js";
import { watchResidentMemory } from "./resident-memory.js";
import { tacitHome } from "./tacit-home.js";
import { makeTempDir } from "./temp-dirs.js";
import { textDigest, TypeCheckCache } from "./typecheck-cache.js";

export interface TypeDiagnostic {
  line: number;
  column: number;
  code: string;
  message: string;
}

export interface TypeCheckResult {
  ok: boolean;
  diagnostics: TypeDiagnostic[];
  /** A session's snippet (split-check.ts): whether one of its names is a global already, answered after the verdict. */
  shadowsGlobal?: Promise<boolean>;
}

export const COMPILER_OPTIONS = {
  // "tacit" is found here, by its own name, as the checker looks for it: otherwise in a
  // node_modules of every directory above the check's own (see fenceCheckDirectory). The module
  // the script imports stays the one interface.d.ts declares, which the checker takes first.
  paths: { tacit: [interfacePath] },
  target: "es2023",
  lib: ["es2023"],
  module: "esnext",
  moduleResolution: "bundler",
  moduleDetection: "force",
  types: [],
  strict: true,
  noEmit: true,
  noResolve: true,
  skipLibCheck: true,
  allowJs: false,
  pretty: false,
};

/**
 * Writes what keeps the checker in its own directory `dir` (a check's, made in the temporary
 * directory), and gives the files' names. The checker looks for the package.json that holds the
 * script in its directory and each one above it, up to the first it finds: above, in the
 * temporary directory, which any local user can add to (/tmp), and a script too where it is
 * among its roots. It read what was planted there: a FIFO held every check until its time
 * limit, and every script was refused, told to simplify its types. An empty one here ends that
 * search at once, and says what nothing there said (no "type" of its own). "tacit" is looked for
 * through COMPILER_OPTIONS.paths, not in the node_modules above.
 */
export function fenceCheckDirectory(dir: string): string[] {
  const packageJson = path.join(dir, "package.json");
  writeFileSync(packageJson, "{}\n");
  return [packageJson];
}

/** What the one-shot checker may write on each of stdout and stderr (its diagnostics) before it is stopped. */
const CHECKER_OUTPUT_LIMIT = 16 * 1024 * 1024;

/**
 * The name the one-shot check gives the script: random, so that no line the script makes the
 * checker print can start like one of its diagnostics. The checker quotes a template literal type's
 * text as written, line breaks and all, and a type spanning lines put a line
 * "script.ts(1,1): error TS0000: …" of the script's choosing in the report, read as a type error.
 */
export function checkedScriptName(): string {
  return `script-${randomBytes(12).toString("hex")}.ts`;
}

/**
 * The diagnostics in tsc's report on `fileName` (see checkedScriptName): each starts a line
 * `<fileName>(3,7): error TS2322: message`, the lines of its message chain indented. Any other line
 * follows a line break the checker quoted from a type (see flatten in incremental-typecheck.ts), and
 * is the message's own, that line break shown as an escape (printable), as tacit serve shows it.
 */
export function parseTscOutput(output: string, fileName: string): TypeDiagnostic[] {
  const header = `${fileName}(`;
  const diagnostics: TypeDiagnostic[] = [];
  for (const line of output.replace(/\n$/, "").split("\n")) {
    const match = line.startsWith(header) ? /^\((\d+),(\d+)\): error (TS\d+): (.*)$/.exec(line.slice(fileName.length)) : null;
    const last = diagnostics[diagnostics.length - 1];
    if (match) {
      diagnostics.push({ line: Number(match[1]), column: Number(match[2]), code: match[3]!, message: match[4]! });
    } else if (last === undefined) {
      continue;
    } else if (/^\s+\S/.test(line)) {
      last.message += "\n" + line.trimEnd();
    } else {
      last.message += printable("\n") + line;
    }
  }
  return diagnostics;
}

/**
 * The verdict on a script whose check ran past its limit (the evaluation's time limit): the
 * checker is stopped, since types can be written to take it minutes, and the script refused.
 */
export function typeCheckTimedOut(limitMs: number): TypeCheckResult {
  return {
    ok: false,
    diagnostics: [
      {
        line: 1,
        column: 1,
        code: "check-time-limit",
        message:
          `type-checking took longer than ${limitMs} ms, so it was stopped and the script was not run. Simplify its types, ` +
          "or have the operator raise the limit (--exec-timeout-ms) or run without type-checking (--no-check)",
      },
    ],
  };
}

/**
 * The resident memory the type checker may use: the sandbox's, its heap limit and allowance
 * (--memory-limit-mb). TypeScript's checker has no heap limit of its own, and types can be
 * written to make it grow about 50 MB a second for as long as the time limit lets it (a script
 * of deeply nested mismatched types took it past 3 GB in under a minute).
 */
export function checkerMemoryLimitMb(memoryLimitMb: number): number {
  return memoryLimitMb + RSS_ALLOWANCE_MB;
}

/** The verdict on a script whose check grew the checker past its memory limit: stopped, and the script refused. */
export function typeCheckOverMemory(limitMb: number): TypeCheckResult {
  return {
    ok: false,
    diagnostics: [
      {
        line: 1,
        column: 1,
        code: "check-memory-limit",
        message:
          `type-checking took the checker past ${limitMb} MiB of memory, so it was stopped and the script was not run. Simplify its types, ` +
          "or have the operator raise the limit (--memory-limit-mb) or run without type-checking (--no-check)",
      },
    ],
  };
}

/** A one-shot check's time limit, counted from when it was made. */
export class CheckDeadline {
  private readonly startedAt = monotonicMs();
  private timer: NodeJS.Timeout | null = null;
  private expire: (() => void) | null = null;

  constructor(private readonly current: number) {}

  get limitMs(): number {
    return this.current;
  }

  /** Calls `expire` once the limit has passed (at once if it has already). */
  arm(expire: () => void): void {
    this.expire = expire;
    this.schedule();
  }

  disarm(): void {
    this.expire = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    const expire = this.expire!;
    this.timer = setTimeout(() => {
      this.disarm();
      expire();
    }, Math.max(0, this.startedAt + this.current - monotonicMs()));
  }
}

export class TypeCheckerError extends Error {
  override name = "TypeCheckerError";
}

/** The installed interface's digest: the build's, while the text is the one it was made from. */
function interfaceDigest(): string {
  const read = interfaceFile();
  return read.digest ?? textDigest(read.source);
}

/** The verdict cache in tacit home `home` (see typecheck-cache.ts). */
export function typeCheckCacheIn(home: string): TypeCheckCache {
  const identity = JSON.stringify({
    typescript: typescriptVersion(),
    options: COMPILER_OPTIONS,
    interface: interfaceDigest(),
  });
  return new TypeCheckCache(path.join(home, "typecheck-cache"), identity);
}

let defaultCache: TypeCheckCache | null | undefined;

/** The cache in tacit's home; null with TACIT_TYPECHECK_CACHE=off. Decided once per process. */
export function typeCheckCache(): TypeCheckCache | null {
  if (defaultCache === undefined) defaultCache = process.env.TACIT_TYPECHECK_CACHE === "off" ? null : typeCheckCacheIn(tacitHome());
  return defaultCache;
}

/**
 * With `noResolve` the checker loads nothing but the script, interface.d.ts and its own lib
 * files — no triple-slash reference or import target is ever loaded (verified with strace;
 * test/attacks/checker-reads.test.ts) — so a check may start before the validator has looked at
 * the code; its answer is used only if the validator passes. It still resolves the names of
 * modules: it stats the paths they give and reads the package.json of a directory one names, and
 * says where a JavaScript file was found (TS7016), which is why only a script the validator
 * passed (naming no module but "tacit") has its diagnostics shown.
 */
export async function typeCheck(
  code: string,
  limit: number | CheckDeadline,
  cache: TypeCheckCache | null = typeCheckCache(),
  memoryLimitMb: number = DEFAULT_MEMORY_LIMIT_MB,
): Promise<TypeCheckResult> {
  const deadline = typeof limit === "number" ? new CheckDeadline(limit) : limit;
  if (cache?.passed(code)) return { ok: true, diagnostics: [] };
  const dir = makeTempDir("tacit-check-");
  try {
    const scriptName = checkedScriptName();
    const script = path.join(dir, scriptName);
    const tsconfig = path.join(dir, "tsconfig.json");
    writeFileSync(script, code);
    writeFileSync(tsconfig, JSON.stringify({ compilerOptions: COMPILER_OPTIONS, files: [scriptName, interfacePath] }));
    const fence = fenceCheckDirectory(dir);
    // Readable by the unprivileged user the checker runs as when tacit is root (checker-process.ts).
    shareWithChecker(dir, [script, tsconfig, ...fence]);
    const memoryLimit = checkerMemoryLimitMb(memoryLimitMb);
    const { exitCode, stdout, stderr } = await new Promise<{ exitCode: number | "timeout" | "memory"; stdout: string; stderr: string }>((resolve, reject) => {
      // Killed by the kernel if tacit ends without its exit hooks, and run only once this, the
      // main thread, has answered on its lifeline (see checker-process.ts): a script can make a
      // check take minutes, and its time limit is a timer in this process. Off the network, and
      // not as root (see there too).
      const checker = checkerCommand(["-p", tsconfig], "descriptor");
      let child: ChildProcess;
      try {
        child = spawn(checker.file, checker.args, { cwd: dir, env: { PATH: process.env.PATH ?? "" }, stdio: ["ignore", "pipe", "pipe", "pipe"] });
      } catch (error) {
        reject(new TypeCheckerError(`the type checker could not run: ${(error as Error).message}`));
        return;
      }
      answerLifeline(child.stdio[CHECKER_LIFELINE_FD] as Readable & Writable);
      const out = new CollectedBytes(CHECKER_OUTPUT_LIMIT);
      const err = new CollectedBytes(CHECKER_OUTPUT_LIMIT);
      let tooMuch = false;
      const collect = (into: CollectedBytes) => (chunk: Buffer) => {
        if (into.append(chunk) || tooMuch) return;
        tooMuch = true;
        child.kill("SIGKILL");
      };
      child.stdout!.on("data", collect(out));
      child.stderr!.on("data", collect(err));
      let ended = false;
      // Once: a process that could not be started reports an error, and may not report its close.
      const end = (code: number | null, signal: NodeJS.Signals | null, failedToStart: Error | null): void => {
        if (ended) return;
        ended = true;
        release();
        deadline.disarm();
        stopWatch();
        const stdout = out.bytes().toString("utf8");
        const stderr = err.bytes().toString("utf8");
        if (overMemory) resolve({ exitCode: "memory", stdout, stderr });
        else if (timedOut) resolve({ exitCode: "timeout", stdout, stderr });
        else if (failedToStart !== null) reject(new TypeCheckerError(`the type checker could not run: ${failedToStart.message}`));
        else if (tooMuch) reject(new TypeCheckerError(`the type checker could not run: it wrote more than ${CHECKER_OUTPUT_LIMIT} bytes on a stream, so it was stopped`));
        else if (code === null) reject(new TypeCheckerError(`the type checker could not run: it was killed by ${signal ?? "a signal"}`));
        else resolve({ exitCode: code, stdout, stderr });
      };
      child.once("error", (error) => end(null, null, error));
      child.once("close", (code, signal) => end(code, signal, null));
      // A process that exits early (a rejected script) leaves no check behind.
      const release = cleanUpAtExit(child, dir);
      let timedOut = false;
      deadline.arm(() => {
        timedOut = true;
        child.kill("SIGKILL");
      });
      // The checker's own process: each process on the way to it replaces itself with the next.
      let overMemory = false;
      const stopWatch =
        child.pid === undefined
          ? () => undefined
          : watchResidentMemory(child.pid, memoryLimit * 1024, () => {
              overMemory = true;
              child.kill("SIGKILL");
            });
    });
    if (exitCode === "timeout") return typeCheckTimedOut(deadline.limitMs);
    if (exitCode === "memory") return typeCheckOverMemory(memoryLimit);
    const diagnostics = parseTscOutput(stdout, scriptName);
    if (exitCode !== 0 && diagnostics.length === 0) {
      const noNamespace = namespaceFailureAtStart({ code: exitCode, signal: null, stderr }, "type checker");
      if (noNamespace !== null) throw new NamespaceUnavailableError(noNamespace);
      throw new TypeCheckerError(`the type checker failed (exit ${exitCode}): ${(stdout + stderr).trim().slice(0, 2000)}`);
    }
    if (diagnostics.length === 0) cache?.remember(code);
    return { ok: diagnostics.length === 0, diagnostics };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The checker escapes line breaks and controls in the string literal types it quotes (not in a
 * template literal type's text: see flatten in incremental-typecheck.ts), but not the characters
 * that change how a line is shown: a right-to-left override in a string literal type reversed
 * the rest of the line on terminals that lay out bidirectional text, a zero-width space hid in
 * a name. Each line of the message (continuation lines are the checker's own) goes through
 * printable(), as the validator's messages do.
 */
export function formatTypeDiagnostic(fileName: string, d: TypeDiagnostic): string {
  return `${fileName}:${d.line}:${d.column} error ${d.code}: ${d.message.split("\n").map(printable).join("\n")}`;
}
