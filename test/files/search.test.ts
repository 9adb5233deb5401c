// grepRecursive over trees large enough that the search is split into batches, searched by
// the search thread alone and shared with the helper thread (which only machines of three
// cores or more give a search unless TACIT_SEARCH_HELPER=on, see grep-runner.ts): the matches
// must be exactly those of a plain walk, in the same order, with classified files and links out
// of the scope still never read; the result limit holds across both threads; and a
// catastrophic pattern is still ended by the time limit.

import { execFileSync } from "node:child_process";
import { lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeCanary, realTempDir, tacit, type TreeSpec, writeTree } from "./fixtures.js";

let root: string;
let outside: string;
const cleanups: Array<() => void> = [];
const canary = makeCanary();
const NEEDLE = "needle-7f3a";

/** Depth-first, name order, links to files followed (as grepRecursive promises), links to directories not. */
function expectedMatches(dir: string, pattern: RegExp, skip: (p: string) => boolean): Match[] {
  const found: Match[] = [];
  for (const name of readdirSync(dir).sort()) {
    const entry = path.join(dir, name);
    if (skip(entry)) continue;
    const stats = statSync(entry, { throwIfNoEntry: false });
    if (stats === undefined) continue; // a dead link
    if (stats.isDirectory()) {
      if (!lstatSync(entry).isSymbolicLink()) found.push(...expectedMatches(entry, pattern, skip));
    } else if (stats.isFile()) {
      readFileSync(entry, "utf8").split("\n").forEach((line, i, all) => {
        if (i === all.length - 1 && line === "") return;
        if (pattern.test(line)) found.push({ file: entry, lineNumber: i + 1, line });
      });
    }
  }
  return found;
}

type Match = { file: string; lineNumber: number; line: string };

/** Where two long match lists first differ (null when equal): a short failure message for a long list. */
function firstDifference(actual: Match[], expected: Match[]): { index: number; actual: Match | undefined; expected: Match | undefined } | null {
  for (let i = 0; i < Math.max(actual.length, expected.length); i++) {
    if (JSON.stringify(actual[i]) !== JSON.stringify(expected[i])) return { index: i, actual: actual[i], expected: expected[i] };
  }
  return null;
}

beforeAll(() => {
  ({ dir: root } = ((r) => (cleanups.push(r.cleanup), r))(realTempDir("tacit-search-")));
  ({ dir: outside } = ((r) => (cleanups.push(r.cleanup), r))(realTempDir("tacit-search-outside-")));
  writeTree(outside, { "secret.txt": `${NEEDLE} ${canary}\n` });
  // 90 directories (more than a batch keeps open), 3,150 files (three batches and more), some nested.
  const spec: TreeSpec = {};
  for (let d = 0; d < 90; d++) {
    const dir = d % 3 === 0 ? `top${d}/inner` : `top${d}`;
    for (let f = 0; f < 35; f++) {
      const k = d * 35 + f;
      const lines = [`file ${k}`, k % 5 === 0 ? `found ${NEEDLE} in ${k}` : `nothing in ${k}`, k % 11 === 0 ? `${NEEDLE} again` : "end"];
      spec[`${dir}/f${String(f).padStart(2, "0")}.${k % 4 === 0 ? "md" : "txt"}`] = lines.join("\n") + "\n";
    }
  }
  spec["top1/.env"] = `TOKEN=${canary} ${NEEDLE}\n`;
  spec["top2/.ssh/id_rsa"] = `${NEEDLE} ${canary}\n`;
  spec["top4/out.txt"] = { symlink: path.join(outside, "secret.txt") };
  spec["top5/outdir"] = { symlink: outside };
  spec["top7/alias.txt"] = { symlink: "../top8/f00.md" };
  spec["top10/env-link.txt"] = { symlink: "../top1/.env" };
  writeTree(root, spec);
  execFileSync("mkfifo", [path.join(root, "top13", "pipe.txt")]);
});
afterAll(() => {
  for (const cleanup of cleanups) cleanup();
});

const classifiedOrOut = (p: string): boolean =>
  /\/(\.env|\.ssh)$/.test(p) || p.endsWith("/top4/out.txt") || p.endsWith("/top5/outdir") || p.endsWith("/top10/env-link.txt") || p.endsWith("/pipe.txt");

/** The two ways a recursive search runs, whatever the machine. */
const threads = [
  ["with the helper thread", { TACIT_SEARCH_HELPER: "on" }],
  ["by the search thread alone", { TACIT_SEARCH_HELPER: "off" }],
] as const;

describe.each(threads)("grepRecursive over many files, %s", (_, env) => {
  it("finds exactly what a plain walk finds, in walk order, and nothing classified or outside", async () => {
    const result = await tacit(root, `requestFileSystem(".", (fs) => { println(JSON.stringify(fs.grepRecursive(".", ${JSON.stringify(NEEDLE)}))); });`, [], env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const expected = expectedMatches(root, new RegExp(NEEDLE), classifiedOrOut);
    expect(expected.length).toBeGreaterThan(900);
    expect(firstDifference(JSON.parse(result.stdout), expected)).toBeNull();
    expect(result.stdout).not.toContain(canary);
    expect(expected.some((m) => m.file === path.join(root, "top7", "alias.txt"))).toBe(true); // a link to a file inside is followed
  });

  it("does the same for a pattern that is not a literal, and with a glob", async () => {
    const script = `requestFileSystem(".", (fs) => {
  println(JSON.stringify(fs.grepRecursive(".", "^found .*[0-9]+$", "*.md")));
  println(JSON.stringify(fs.grepRecursive(".", "a|b")));
});`;
    const result = await tacit(root, script, [], env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const [md, any] = result.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(firstDifference(md, expectedMatches(root, /^found .*[0-9]+$/, classifiedOrOut).filter((m) => m.file.endsWith(".md")))).toBeNull();
    expect(firstDifference(any, expectedMatches(root, /a|b/, classifiedOrOut))).toBeNull();
    expect(result.stdout).not.toContain(canary);
  });
});

/**
 * The limits' trees, each made once for both ways a search runs (the tests only search them): made
 * for each, they were 3,500 files written twice, some seconds of CPU on a loaded machine.
 */
const limitTrees: { big?: string; catastrophic?: string } = {};

/** 2,000 files of 9 KiB, every line matching: 18 MB of matches, past the 16 MiB limit, found by the threads that search together. */
function bigTree(): string {
  if (limitTrees.big === undefined) {
    const made = realTempDir("tacit-search-big-");
    cleanups.push(made.cleanup);
    const body = Array.from({ length: 128 }, (_, i) => `line ${i} ${"x".repeat(60)}`).join("\n") + "\n";
    const spec: TreeSpec = {};
    for (let i = 0; i < 2000; i++) spec[`d${i % 20}/f${i}.txt`] = body;
    writeTree(made.dir, spec);
    limitTrees.big = made.dir;
  }
  return limitTrees.big;
}

/** 1,500 files of one line that a catastrophic pattern takes some 2^40 steps on. */
function catastrophicTree(): string {
  if (limitTrees.catastrophic === undefined) {
    const made = realTempDir("tacit-search-redos-");
    cleanups.push(made.cleanup);
    const spec: TreeSpec = {};
    for (let i = 0; i < 1500; i++) spec[`d${i % 10}/f${i}.txt`] = `${"a".repeat(40)}!\n`;
    writeTree(made.dir, spec);
    limitTrees.catastrophic = made.dir;
  }
  return limitTrees.catastrophic;
}

describe.each(threads)("limits, %s", (_, env) => {
  let big: string;
  beforeAll(() => {
    big = bigTree();
  });

  it("refuses a result past the limit, whichever thread found the matches, and the script goes on", async () => {
    const script = `requestFileSystem(".", (fs) => {
  try { fs.grepRecursive(".", "line"); println("returned"); } catch (e) { println("refused: " + (e as Error).message); }
  println("after: " + fs.grepRecursive(".", "line 5 ").length);
});`;
    const result = await tacit(big, script, [], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^refused: .*more than 16777216 characters of matches; narrow the pattern/m);
    expect(result.stdout).not.toContain("returned");
    expect(result.stdout).toContain("after: 2000\n");
  });

  it("ends a catastrophic pattern at the time limit (124), every search thread with it", async () => {
    const dir = catastrophicTree();
    // Each line takes some 2^40 steps: the search is stuck on the first lines it tries whatever the
    // limit, and the limit counts from the script's start (not tacit's nor Deno's), so half a second
    // proves what three did, with two and a half seconds less of every search thread spinning.
    const result = await tacit(dir, `requestFileSystem(".", (fs) => { println(fs.grepRecursive(".", "^(a+)+$").length); });`, ["--exec-timeout-ms", "500"], env);
    expect(result.code).toBe(124);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/time limit|timed out/i);
  });
});

describe.each(threads)("a literal pattern (its matches found from where the literal is), %s", (_, env) => {
  it("finds the lines and line numbers that the same pattern as a regular expression finds, whatever the bytes around", async () => {
    const { dir, cleanup } = realTempDir("tacit-literal-");
    try {
      const bytes = (...parts: Array<string | number[]>): Buffer => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));
      const files: Record<string, Buffer> = {
        "crlf.txt": bytes("needle first\r\nplain\r\nsecond needle and needle\r\n\r\nlast needle"),
        "bom.txt": bytes([0xef, 0xbb, 0xbf], "needle\n\n\nneedle\n"),
        // Invalid UTF-8 around the literal and before line ends: decoded as a read() decodes it.
        "invalid.txt": bytes([0xe2, 0x28], "needle", [0xff], "\n", [0xc3], "\n", [0xf0, 0x9f], "x needle y", [0xe2, 0x82], "\r\n"),
        "utf8.txt": bytes("日本 needle 👍\nnothing é\n→needle←\n"),
        "empty.txt": bytes(""),
        "newlines.txt": bytes("\n\n\n"),
        "none.txt": bytes("no match here\nneedl e\n"),
        "alone.txt": bytes("needle"),
        "cr-only.txt": bytes("a\rneedle\rb\n\r"),
        // Past one read (1 MiB): searched line by line, as before.
        "big.txt": bytes(`${"x".repeat(700_000)}\nneedle in big\r\n${"y".repeat(700_000)} needle\n`),
      };
      writeTree(dir, files);
      const r = await tacit(dir, `requestFileSystem(".", (fs) => {
  println(JSON.stringify(fs.grepRecursive(".", "needle")));
  println(JSON.stringify(fs.grepRecursive(".", "needl[e]")));
});`, [], env);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const [literal, regex] = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as Match[]);
      // The oracle: each file decoded whole, split at "\n", less a final "\r" per line.
      const expected: Match[] = [];
      for (const name of Object.keys(files).sort()) {
        const lines = files[name]!.toString("utf8").split("\n");
        if (lines.at(-1) === "") lines.pop();
        lines.forEach((raw, i) => {
          const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
          if (line.includes("needle")) expected.push({ file: path.join(dir, name), lineNumber: i + 1, line });
        });
      }
      expect(expected.length).toBe(13);
      expect(literal).toEqual(expected);
      expect(regex).toEqual(expected);
    } finally {
      cleanup();
    }
  });
});

describe("lines longer than a read", () => {
  it("grep and forEachLine read a line of many chunks whole, once, with its number (the line is joined when it ends)", async () => {
    const { dir, cleanup } = realTempDir("tacit-long-line-");
    try {
      // A first line of 3 MiB and a bit (the search reads 1 MiB at a time), CRLF endings, no newline at the end.
      writeTree(dir, { "long.txt": `${"a".repeat(3 * 1024 * 1024 + 17)}NEEDLE\r\nb\r\nc NEEDLE` });
      const r = await tacit(dir, `requestFileSystem(".", (fs) => {
  println(JSON.stringify(fs.grep("long.txt", "NEEDLE").map((m) => [m.lineNumber, m.line.length])));
  const lengths: number[] = [];
  fs.access("long.txt").forEachLine((line) => { lengths.push(line.length); });
  println(JSON.stringify(lengths));
});`);
      expect(r.stderr).toBe("");
      const [matches, lengths] = r.stdout.trim().split("\n");
      expect(JSON.parse(matches!)).toEqual([[1, 3 * 1024 * 1024 + 17 + 6], [3, 8]]);
      expect(JSON.parse(lengths!)).toEqual([3 * 1024 * 1024 + 17 + 6, 1, 8]);
    } finally {
      cleanup();
    }
  });
});

describe("a search by the walking thread alone (unit: one core, no helper)", () => {
  it("finds what a plain walk finds, in walk order, across batches", async () => {
    const { grepRecursive } = await import("../../runner/fs/grep-core.js");
    const { DEFAULT_CLASSIFIED_PATHS } = await import("../../runner/fs/classified-paths.js");
    const request = { dir: root, realDir: root, realRoot: root, pattern: NEEDLE, glob: null, classifiedPatterns: DEFAULT_CLASSIFIED_PATHS, hostSecrets: [], linkSkips: [] };
    const found = grepRecursive(request, new RegExp(NEEDLE)).matches;
    const expected = expectedMatches(root, new RegExp(NEEDLE), classifiedOrOut);
    expect(expected.length).toBeGreaterThan(900);
    expect(firstDifference(found, expected)).toBeNull();
    expect(JSON.stringify(found)).not.toContain(canary);
  });
});

describe("a search that fails part-way (unit)", () => {
  // The helper thread failing cannot be brought about from outside; a searcher that fails on
  // its second batch stands in for it. The walk must fail too, not return what it had.
  it("fails whole instead of returning the matches found before, and closes every directory it opened", async () => {
    const { grepRecursive } = await import("../../runner/fs/grep-core.js");
    const openDescriptors = () => readdirSync("/proc/self/fd").length;
    const before = openDescriptors();
    let batches = 0;
    const failing = () => {
      let pending: readonly unknown[] = [];
      return {
        begin: (tasks: readonly unknown[]) => {
          pending = tasks;
        },
        finish: () => {
          if (++batches === 2) throw new Error("the helper failed");
          return { matches: pending.map(() => []), unread: [] };
        },
      };
    };
    const request = { dir: root, realDir: root, realRoot: root, pattern: NEEDLE, glob: null, classifiedPatterns: [".env", ".ssh"], hostSecrets: [], linkSkips: [] };
    expect(() => grepRecursive(request, new RegExp(NEEDLE), failing)).toThrow("the helper failed");
    expect(batches).toBe(2);
    expect(openDescriptors()).toBe(before);
  });
});
