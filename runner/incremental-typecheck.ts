// Type-checking for a long-lived server: TypeScript 7's in-process API
// (typescript/unstable/sync, pinned with the exact typescript version since it is unstable)
// keeps one checker process and project alive, so a re-check costs milliseconds instead of a
// new tsc process. Same options and the same interface.d.ts as the one-shot check.

import type { ChildProcess } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { API, type Diagnostic, type Snapshot, SymbolFlags } from "typescript/unstable/sync";
import { checkerCommand, shareWithChecker } from "./checker-process.js";
import { answerStdioLifeline } from "./exec/lifeline.js";
import { namespaceFailureNow, NamespaceUnavailableError } from "./network-namespace.js";
import { interfacePath } from "./paths.js";
import { singleQuoted } from "./shell-word.js";
import { makeTempDir } from "./temp-dirs.js";
import { lineColumnOf, lineStarts } from "./source-position.js";
import { printable } from "./printable.js";
import type { SnippetCheck } from "./split-check.js";
import { COMPILER_OPTIONS, fenceCheckDirectory, type TypeCheckResult, type TypeDiagnostic } from "./typecheck.js";

/**
 * A launcher for the checker, started as checker-process.ts starts it: dying with the thread that
 * starts it (and so with tacit however tacit ends), run only once that thread has answered on its
 * lifeline, off the network, and not as root. TypeScript's API starts the checker itself, by a
 * path it is given and with arguments of its own, so the path is this script, which runs the
 * chain with them (sh, setpriv, unshare and the lifeline's shell each replace themselves). A
 * SIGKILLed tacit serve left a checker running on a script written to take minutes. The API
 * gives the checker no descriptor but its stdin and stdout, so its lifeline is those (answered in
 * the constructor, before the API sends anything).
 */
function checkerLauncher(dir: string): string {
  const { file, args } = checkerCommand([], "stdio");
  const launcher = path.join(dir, "checker.sh");
  // In its own directory: the API starts it in tacit's working directory, which the unprivileged
  // user a root tacit runs the checker as may not enter (tsc then fails at once, stat'ing ".").
  writeFileSync(launcher, `#!/bin/sh\ncd ${singleQuoted(dir)} || exit 1\nexec ${[file, ...args].map(singleQuoted).join(" ")} "$@"\n`, { mode: 0o700 });
  return launcher;
}

/**
 * A diagnostic and its chain as lines, each message of the chain one line. The checker writes each
 * message on one line, but quotes a template literal type's text as written: a type spanning lines
 * put "[tacit: exit 0, 3 ms]" at the start of a line of tacit serve's report. A line break inside a
 * message is the script's, and is shown as an escape (printable), as the one of a string literal type is.
 */
function flatten(diagnostic: Diagnostic, depth = 0): string {
  const chained = (diagnostic.messageChain ?? []).map((child) => `\n${"  ".repeat(depth + 1)}${flatten(child, depth + 1)}`);
  return printable(diagnostic.text) + chained.join("");
}

/**
 * What the new snippet's file starts with when it is checked apart: in the one program a snippet
 * never starts the file, so its leading comments are not the file's. First in a file of its own,
 * a snippet's `// @ts-nocheck` turned its check off (in the one program it is an ordinary
 * comment), and a type error passed once the session was long enough to be checked apart.
 */
const SNIPPET_LEAD = ";";

/** A name taken as a value, a type or a namespace: any of them makes a global of that name. */
const ANY_MEANING = SymbolFlags.Value | SymbolFlags.Type | SymbolFlags.Namespace;

export class IncrementalTypeChecker {
  private readonly dir = makeTempDir("tacit-checker-");
  private readonly script = path.join(this.dir, "script.ts");
  private readonly tsconfig = path.join(this.dir, "tsconfig.json");
  // A session's snippet checked apart (split-check.ts): the earlier snippets as a script, the
  // new one as a module, in a project of their own ("auto": a file without imports or
  // exports is a script; the new snippet's file ends with `export {}`). Opened with the first
  // such check: an open project costs every check something (about 0.5 ms a paced call here).
  private readonly earlier = path.join(this.dir, "earlier.ts");
  private readonly snippet = path.join(this.dir, "snippet.ts");
  private readonly splitTsconfig = path.join(this.dir, "tsconfig.split.json");
  private splitOpen = false;
  private readonly api: API;
  private snapshot: Snapshot;
  /** The files' texts, served to the checker from memory (no file write per check). */
  private readonly texts = new Map<string, string>();

  constructor() {
    writeFileSync(this.tsconfig, JSON.stringify({ compilerOptions: COMPILER_OPTIONS, files: ["script.ts", interfacePath] }));
    writeFileSync(
      this.splitTsconfig,
      JSON.stringify({ compilerOptions: { ...COMPILER_OPTIONS, moduleDetection: "auto" }, files: ["earlier.ts", "snippet.ts", interfacePath] }),
    );
    for (const file of [this.script, this.earlier, this.snippet]) {
      writeFileSync(file, "");
      this.texts.set(file, "");
    }
    // Read from the disk (it is none of `texts`): see fenceCheckDirectory.
    const fence = fenceCheckDirectory(this.dir);
    // Readable by the unprivileged user the checker runs as when tacit is root (checker-process.ts);
    // the launcher, which root runs, stays root's alone.
    shareWithChecker(this.dir, [this.tsconfig, this.splitTsconfig, this.script, this.earlier, this.snippet, ...fence]);
    const launcher = checkerLauncher(this.dir);
    try {
      this.api = new API({ cwd: this.dir, tsserverPath: launcher, fs: { readFile: (file) => this.texts.get(file) } });
      this.answerLifeline();
      this.snapshot = this.api.updateSnapshot({ openProjects: [this.tsconfig] });
    } catch (error) {
      // Nothing of the agent's has been sent yet: a checker that could not start where its
      // namespace cannot be made now either is the host's failure, and said so (its stderr,
      // unshare's words, goes to tacit's own).
      const noNamespace = namespaceFailureNow("type checker");
      throw noNamespace === null ? error : new NamespaceUnavailableError(noNamespace);
    }
    process.once("exit", () => rmSync(this.dir, { recursive: true, force: true }));
  }

  /**
   * The checker's process. The API keeps it private; the typescript version is pinned exactly,
   * and a changed shape fails here, loudly, not later.
   */
  private get process(): ChildProcess & { pid: number } {
    const child = (this.api as unknown as { client?: { channel?: { child?: ChildProcess } } }).client?.channel?.child;
    if (typeof child?.pid !== "number") throw new Error("tacit: the type checker's process is not where this typescript version keeps it");
    return child as ChildProcess & { pid: number };
  }

  /**
   * Answers the checker's lifeline on its stdout and stdin (see checkerLauncher), from this thread,
   * which spawned it. The descriptors are the API's own, private like its process (see process).
   */
  private answerLifeline(): void {
    const channel = (this.api as unknown as { client?: { channel?: { readFd?: unknown; writeFd?: unknown } } }).client?.channel;
    if (typeof channel?.readFd !== "number" || typeof channel.writeFd !== "number") {
      throw new Error("tacit: the type checker's pipes are not where this typescript version keeps them");
    }
    if (!answerStdioLifeline(channel.readFd, channel.writeFd)) throw new Error("tacit: the type checker's process ended before it started");
  }

  /** The checker process's id, so that a check that runs too long can be stopped from another thread (see typecheck-thread.ts). */
  get processId(): number {
    return this.process.pid;
  }

  /**
   * Calls `listener` once the checker's process has ended (killed, crashed, out of memory).
   * From then on nothing may be asked of it (see speak): the thread ends, and the next check
   * starts a new checker (typecheck-thread.ts).
   */
  onProcessEnd(listener: () => void): void {
    this.process.once("exit", listener);
  }

  /**
   * Throws where the checker's process has ended, before anything is written to or read from it.
   * TypeScript's channel speaks to it through raw descriptor numbers, which Node closes when the
   * process ends; the server's next descriptors take those numbers, lowest free first. A checker
   * SIGKILLed while idle had the next check write its request into a session sandbox's pipe and
   * wait on another's output until the time limit, the sessions broken (a sandbox that died with
   * its input unread crashed the server on an unhandled ECONNRESET).
   */
  private speak(): void {
    const { exitCode, signalCode } = this.process;
    if (exitCode !== null || signalCode !== null) {
      throw new Error(`tacit: the type checker's process ended (${signalCode ?? `exit ${exitCode}`}); the next check starts a new one`);
    }
  }

  /** Its working directory (removed by close(), or by whoever kills its process). */
  get directory(): string {
    return this.dir;
  }

  /** The snapshot the last check replaced, freed by releaseStale() or by the next check. */
  private stale: Snapshot | null = null;

  /**
   * Synchronous: a re-check takes a few milliseconds. For a session's snippet checked apart,
   * only it is checked, beside the earlier ones (split-check.ts); diagnostics are placed in
   * `code` either way.
   */
  check(code: string, snippet?: SnippetCheck): TypeCheckResult {
    this.speak();
    this.releaseStale();
    const split = snippet?.apart ?? null;
    const changed = split ? this.setSplit(code, split) : this.set(this.script, code);
    this.stale = this.snapshot;
    const opening = split !== null && !this.splitOpen;
    this.snapshot = this.api.updateSnapshot(opening ? { openProjects: [this.tsconfig, this.splitTsconfig], fileChanges: { changed } } : { fileChanges: { changed } });
    this.splitOpen ||= opening;
    const project = this.snapshot.getProject(split ? this.splitTsconfig : this.tsconfig);
    if (!project) throw new Error("tacit: the type checker lost its project");
    const file = split ? this.snippet : this.script;
    const found = [...project.program.getSyntacticDiagnostics(file), ...project.program.getSemanticDiagnostics(file)];
    const starts = lineStarts(code);
    const shift = split ? split.prefixLength - SNIPPET_LEAD.length : 0;
    const diagnostics: TypeDiagnostic[] = found.map((diagnostic) => {
      const { line, column } = lineColumnOf(starts, Math.min(diagnostic.pos + shift, code.length));
      return { line, column, code: `TS${diagnostic.code}`, message: flatten(diagnostic) };
    });
    diagnostics.sort((a, b) => a.line - b.line || a.column - b.column);
    return { ok: diagnostics.length === 0, diagnostics };
  }

  /**
   * Whether any of these names is a global of the language or of tacit. Looked up in
   * interface.d.ts, which sees only globals: the checked script is a module.
   */
  shadowsGlobal(names: readonly string[]): boolean {
    if (names.length === 0) return false;
    this.speak();
    const project = this.snapshot.getProject(this.tsconfig);
    if (!project) throw new Error("tacit: the type checker lost its project");
    const at = { document: interfacePath, position: 0 };
    return names.some((name) => project.checker.resolveName(name, ANY_MEANING, at, false) !== undefined);
  }

  /** Sets a file's text; the files changed (none if it was the same). */
  private set(file: string, text: string): string[] {
    if (this.texts.get(file) === text) return [];
    this.texts.set(file, text);
    return [file];
  }

  private setSplit(code: string, split: NonNullable<SnippetCheck["apart"]>): string[] {
    return [...this.set(this.earlier, split.prefixForChecker), ...this.set(this.snippet, `${SNIPPET_LEAD}${code.slice(split.prefixLength)}\nexport {};\n`)];
  }

  /**
   * Frees the snapshot the last check replaced: a round trip to the checker process (a few
   * tenths of a millisecond), which the checker's thread makes once its answer is on its way.
   */
  releaseStale(): void {
    const stale = this.stale;
    this.stale = null;
    if (stale === null) return;
    this.speak();
    stale.dispose();
  }

  close(): void {
    try {
      this.api.close();
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}
