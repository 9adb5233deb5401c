// Type-check verdicts remembered across runs. Running the same script again (a pipeline step,
// a container entrypoint, a cron job) skips the checker, whose process costs a run about
// 60 ms of CPU and more of wall time, as Deno skips re-checking with its own check cache.
// Only "no type errors" is remembered: for the exact script text, against the exact
// interface text, compiler options and TypeScript version.
//
// The type check is for the agent's benefit, not the boundary (DESIGN.md, rule 5): the
// validator still runs on every script, and a stale or forged entry could at worst let a
// script with type errors run, under the same sandbox and monitor as any other. Entries are
// still owner-only, and one that is not is ignored.
//
// Entries live in $TACIT_HOME/typecheck-cache; TACIT_TYPECHECK_CACHE=off turns the cache off.

import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

const MAX_ENTRIES = 256;

/**
 * cyrb53 (a 53-bit string hash) with two seeds: names entry files. The entry holds the whole
 * script text and identity and is compared exactly, so a collision costs a miss, nothing more.
 */
function hash53(text: string, seed: number): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

export function textDigest(text: string): string {
  return hash53(text, 1).toString(16).padStart(14, "0") + hash53(text, 2).toString(16).padStart(14, "0");
}

interface Entry {
  identity: string;
  script: string;
}

export class TypeCheckCache {
  /**
   * `identity` names everything besides the script that decides the verdict (interface text,
   * options, checker version): an entry counts only for the same identity.
   */
  constructor(
    readonly dir: string,
    private readonly identity: string,
  ) {}

  private fileFor(script: string): string {
    return path.join(this.dir, `${textDigest(`${this.identity}\0${script}`)}.json`);
  }

  /** True if this script passed the same check before. */
  passed(script: string): boolean {
    let fd: number;
    try {
      fd = openSync(this.fileFor(script), "r");
    } catch {
      return false;
    }
    try {
      const stat = fstatSync(fd);
      const ownerOnly = (typeof process.getuid !== "function" || stat.uid === process.getuid()) && (stat.mode & 0o022) === 0;
      if (!ownerOnly || !stat.isFile()) return false;
      const entry = JSON.parse(readFileSync(fd, "utf8")) as Partial<Entry>;
      return entry.identity === this.identity && entry.script === script;
    } catch {
      return false;
    } finally {
      closeSync(fd);
    }
  }

  /** Remembers that this script passed. A cache that cannot be written is silently skipped. */
  remember(script: string): void {
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      const file = this.fileFor(script);
      // Written whole, then renamed: a concurrent run never reads half an entry.
      const temporary = `${file}.${process.pid}.tmp`;
      writeFileSync(temporary, JSON.stringify({ identity: this.identity, script } satisfies Entry), { mode: 0o600 });
      renameSync(temporary, file);
      this.prune();
    } catch {
      // A read-only home runs without the cache.
    }
  }

  /** Keeps the most recently written entries. */
  private prune(): void {
    const names = readdirSync(this.dir).filter((name) => name.endsWith(".json"));
    if (names.length <= MAX_ENTRIES) return;
    const byAge = names
      .map((name) => {
        try {
          return { name, mtime: statSync(path.join(this.dir, name)).mtimeMs };
        } catch {
          return { name, mtime: 0 };
        }
      })
      .sort((a, b) => a.mtime - b.mtime);
    for (const { name } of byAge.slice(0, names.length - MAX_ENTRIES)) {
      try {
        unlinkSync(path.join(this.dir, name));
      } catch {
        // Removed by a concurrent run.
      }
    }
  }
}
