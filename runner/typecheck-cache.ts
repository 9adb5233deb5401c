// Type-check verdicts remembered across runs. Running the same script again (a pipeline step,
// a container entrypoint, a cron job) skips the checker, whose process costs a run about
// 60 ms of CPU and more of wall time, as Deno skips re-checking with its own check cache.
// Only "no type errors" is remembered: for the exact script text, against the exact
// interface text, compiler options and TypeScript version.
//
// The type check is for the agent's benefit, not the boundary (DESIGN.md, rule 5): the
// validator still runs on every script, and a stale or forged entry could at worst let a
// script with type errors run, under the same sandbox and monitor as any other. Entries are
// still owner-only, and one that is not is ignored, as is a cache directory (or tacit home) that
// is not the user's own or that others can write (another user's TACIT_HOME): there another user
// could plant a link at the name an entry is written under, and the run wrote its entry into the
// file the link named, any file the user can write.
//
// Entries live in $TACIT_HOME/typecheck-cache; TACIT_TYPECHECK_CACHE=off turns the cache off.

import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
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

/** A file or directory of this user's that nobody else may write. */
function ownedAndPrivate(stat: { uid: number; mode: number }): boolean {
  return (typeof process.getuid !== "function" || stat.uid === process.getuid()) && (stat.mode & 0o022) === 0;
}

/** A real directory of this user's that nobody else may write (a link to one is not). */
function privateDirectory(dir: string): boolean {
  try {
    const stat = lstatSync(dir);
    return stat.isDirectory() && ownedAndPrivate(stat);
  } catch {
    return false;
  }
}

/**
 * The cache directory, and the tacit home it is in, are private: whoever could write the home
 * could put another directory, or a link, in the cache's place between this check and a write.
 */
function privateCache(dir: string): boolean {
  return privateDirectory(path.dirname(dir)) && privateDirectory(dir);
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
    if (!privateCache(this.dir)) return false;
    let fd: number;
    try {
      fd = openSync(this.fileFor(script), constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch {
      return false;
    }
    try {
      const stat = fstatSync(fd);
      if (!ownedAndPrivate(stat) || !stat.isFile()) return false;
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
      if (!privateCache(this.dir)) return;
      const file = this.fileFor(script);
      // Written whole, then renamed: a concurrent run never reads half an entry. Made anew
      // (O_EXCL): whatever is at the name (a link, a crashed run's leftover) is removed, never
      // written through, and one that comes back in between fails the write.
      const temporary = `${file}.${process.pid}.tmp`;
      try {
        unlinkSync(temporary);
      } catch {
        // Nothing there, as usual.
      }
      writeFileSync(temporary, JSON.stringify({ identity: this.identity, script } satisfies Entry), { mode: 0o600, flag: "wx" });
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
