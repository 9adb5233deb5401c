// requestFileSystem and the FileSystem/FileEntry objects it hands out. They hold nothing but
// the host's scope token and path strings; every operation is a request the host decides.

import type { Channel } from "./channel.js";
import type { ClassifiedApi } from "./classified.js";
import { withScope } from "./scope.js";
import { type FileInfo, type GrepMatch, LINE_LIMIT_CHARS, LINE_TOO_LONG } from "../protocol.js";

declare global {
  interface Uint8ArrayConstructor {
    fromBase64(base64: string): Uint8Array;
  }
}

/** POSIX path arithmetic for display only: the host resolves every path again itself. */
function absolutePath(root: string, requested: string): string {
  const joined = requested.startsWith("/") ? requested : `${root}/${requested}`;
  const parts: string[] = [];
  for (const part of joined.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return "/" + parts.join("/");
}

/** A dot or dot-dot component, anywhere in a path. */
const DOT_COMPONENT = /(?:^|\/)\.\.?(?:\/|$)/;

/**
 * absolutePath(root, requested) where `normalRoot` is absolutePath(root, ""): a relative path of
 * plain components only (none empty, "." or "..") is appended as it is, which is all the
 * component loop would do with it (a third of a µs of each `fs.access`, the loop).
 */
function pathBelow(root: string, normalRoot: string, requested: string): string {
  if (requested === "" || requested.startsWith("/") || requested.endsWith("/") || requested.includes("//") || DOT_COMPONENT.test(requested)) {
    return absolutePath(root, requested);
  }
  return normalRoot === "/" ? `/${requested}` : `${normalRoot}/${requested}`;
}

/**
 * A brace alternative ({ts,js}, {1..3}) or an extglob (@(…), !(…), and +(…), *(…), ?(…) with
 * alternatives: "*(1).png" is a literal parenthesis in many a file name).
 */
const UNSUPPORTED_GLOB = /\{[^{}]*(?:,|\.\.)[^{}]*\}|[@!]\([^)]*\)|[*+?]\([^)]*\|[^)]*\)/;

/**
 * A glob as the host matches it: *, **, ? and [...] only. Braces and extglobs would be taken as
 * the characters they are, so "**\/*.{ts,js}" found nothing in a tree of .ts and .js files, and
 * the script, told nothing, would take it that there were none: refused instead.
 */
function checkedGlob(glob: unknown, call: string): string {
  const text = String(glob);
  const found = UNSUPPORTED_GLOB.exec(text);
  if (found !== null) {
    throw new TypeError(
      `${call}: the glob ${JSON.stringify(text)} has ${found[0].startsWith("{") ? "a brace alternative" : "an extglob"} (${found[0]}), which tacit's globs do not ` +
        "expand: they take *, **, ? and [...] only. Call it once for each alternative (or use a class such as *.[tj]s)",
    );
  }
  return text;
}

/**
 * A grep pattern's source. The host compiles the source alone (new RegExp(source)), so a RegExp
 * whose flags change what matches (i, s, u, v) is refused: /HI/i found nothing in a file
 * holding "hi", without a word. g, y, d and m change nothing for a test of one line.
 */
function patternSource(pattern: unknown, call: string): string {
  if (!(pattern instanceof RegExp)) return String(pattern);
  const ignored = pattern.flags.replace(/[gydm]/g, "");
  if (ignored !== "") {
    throw new TypeError(
      `${call}: the pattern ${String(pattern)} has flags (${ignored}) that are not applied: the pattern is a RegExp's source, ` +
        "matched as new RegExp(source) matches. Write it without them (for case, a class such as [Hh][Ii])",
    );
  }
  return pattern.source;
}

export function createFileSystemApi(channel: Channel, classified: ClassifiedApi) {
  type Classified = ReturnType<ClassifiedApi["wrap"]>;
  class FileEntry {
    readonly #scope: string;
    readonly path: string;
    readonly name: string;

    constructor(scope: string, absolute: string) {
      this.#scope = scope;
      this.path = absolute;
      this.name = absolute.slice(absolute.lastIndexOf("/") + 1);
    }

    #info(): FileInfo {
      return channel.request({ kind: "FsStat", scope: this.#scope, path: this.path });
    }
    get exists(): boolean {
      return this.#info().exists;
    }
    get isDirectory(): boolean {
      return this.#info().isDirectory;
    }
    get isClassified(): boolean {
      return this.#info().isClassified;
    }
    get size(): number {
      return channel.request({ kind: "FsSize", scope: this.#scope, path: this.path });
    }
    read(): string {
      return channel.request({ kind: "FsRead", scope: this.#scope, path: this.path, as: "text" });
    }
    readBytes(): Uint8Array {
      return Uint8Array.fromBase64(channel.request({ kind: "FsRead", scope: this.#scope, path: this.path, as: "bytes" }));
    }
    readLines(): string[] {
      const lines = this.read().split(/\r?\n/);
      if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
      return lines;
    }
    forEachLine(op: (line: string, lineNumber: number) => void): void {
      const decoder = new TextDecoder();
      // The line being read, in pieces, joined once when it ends, within LINE_LIMIT_CHARS: the
      // text held so far was split again with every piece (the square of a long line's length:
      // 7.5 s for one line of 60 MB), and a file of one line was held whole.
      let pieces: string[] = [];
      let pendingChars = 0;
      const tooLong = (): Error => new Error(`${this.path}: ${LINE_TOO_LONG}`);
      const withoutCr = (line: string): string => (line.endsWith("\r") ? line.slice(0, -1) : line);
      let lineNumber = 0;
      let offset = 0;
      for (;;) {
        const chunk = channel.request({ kind: "FsReadChunk", scope: this.#scope, path: this.path, offset });
        const bytes = Uint8Array.fromBase64(chunk.base64);
        offset += bytes.length;
        const text = decoder.decode(bytes, { stream: !chunk.eof });
        let start = 0;
        for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
          let line = text.slice(start, newline);
          if (pendingChars + line.length > LINE_LIMIT_CHARS) throw tooLong();
          if (pieces.length > 0) {
            pieces.push(line);
            line = pieces.join("");
            pieces = [];
            pendingChars = 0;
          }
          op(withoutCr(line), ++lineNumber);
          start = newline + 1;
        }
        if (start < text.length) {
          pendingChars += text.length - start;
          if (pendingChars > LINE_LIMIT_CHARS) throw tooLong();
          pieces.push(text.slice(start));
        }
        if (chunk.eof) break;
      }
      if (pieces.length > 0) op(withoutCr(pieces.join("")), ++lineNumber);
    }
    write(content: string): void {
      channel.request({ kind: "FsWrite", scope: this.#scope, path: this.path, content: String(content), append: false });
    }
    append(content: string): void {
      channel.request({ kind: "FsWrite", scope: this.#scope, path: this.path, content: String(content), append: true });
    }
    delete(): void {
      channel.request({ kind: "FsDelete", scope: this.#scope, path: this.path });
    }
    mkdir(): void {
      channel.request({ kind: "FsMkdir", scope: this.#scope, path: this.path });
    }
    readClassified(): Classified {
      return classified.wrap(channel.request({ kind: "FsReadClassified", scope: this.#scope, path: this.path }));
    }
    writeClassified(content: Classified): void {
      const handle = classified.handleOf(content, "writeClassified(content)");
      channel.request({ kind: "FsWriteClassified", scope: this.#scope, path: this.path, handle });
    }
    children(): FileEntry[] {
      return channel.request({ kind: "FsList", scope: this.#scope, path: this.path, recursive: false }).map((p) => new FileEntry(this.#scope, p));
    }
    walk(): FileEntry[] {
      return channel.request({ kind: "FsList", scope: this.#scope, path: this.path, recursive: true }).map((p) => new FileEntry(this.#scope, p));
    }
    toString(): string {
      return `FileEntry(${this.path})`;
    }
  }

  class FileSystem {
    readonly #scope: string;
    readonly root: string;
    /** The root, normalized (see pathBelow). */
    readonly #normalRoot: string;

    constructor(scope: string, root: string) {
      this.#scope = scope;
      this.root = root;
      this.#normalRoot = absolutePath(root, "");
    }
    access(path: string): FileEntry {
      return new FileEntry(this.#scope, pathBelow(this.root, this.#normalRoot, String(path)));
    }
    grep(path: string, pattern: string | RegExp): GrepMatch[] {
      return channel.request({ kind: "FsGrep", scope: this.#scope, path: absolutePath(this.root, String(path)), pattern: patternSource(pattern, "grep()") });
    }
    grepRecursive(dir: string, pattern: string | RegExp, glob?: string): GrepMatch[] {
      return channel.request({
        kind: "FsGrepRecursive",
        scope: this.#scope,
        path: absolutePath(this.root, String(dir)),
        pattern: patternSource(pattern, "grepRecursive()"),
        glob: glob === undefined ? null : checkedGlob(glob, "grepRecursive()"),
      });
    }
    readClassified(path: string): Classified {
      return this.access(path).readClassified();
    }
    writeClassified(path: string, content: Classified): void {
      this.access(path).writeClassified(content);
    }
    find(dir: string, glob: string): string[] {
      return channel.request({ kind: "FsFind", scope: this.#scope, path: absolutePath(this.root, String(dir)), glob: checkedGlob(glob, "find()") });
    }
    toString(): string {
      return `FileSystem(${this.root})`;
    }
  }

  function requestFileSystem<T>(root: string, op: (fs: FileSystem) => T): T {
    let scope = "";
    return withScope(
      "requestFileSystem",
      () => {
        const granted = channel.request({ kind: "FsOpenScope", root: String(root) });
        scope = granted.scope;
        return new FileSystem(granted.scope, granted.root);
      },
      () => void channel.request({ kind: "CloseScope", scope }),
      op,
    );
  }

  return { requestFileSystem };
}
