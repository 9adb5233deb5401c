// A path through a directory that another process swaps for a link, again and again, while
// scripts use it. Resolving a path, tacit looks at each component (lstat) and reads a link's
// text (readlink): a link swapped back for the directory between the two made readlink fail
// (EINVAL), and the call failed with "invalid path (it changed while being resolved)", where a
// moment earlier or later it answers or is refused. Now the component is looked at again, as it
// is now. Through the real CLI with a real Deno; the swaps come from a real process of their
// own, racing the calls, so each outcome is counted over many tries (printed) and every one of
// them is judged: an answer the real file gives, a SecurityError naming the path once, or no
// such file (between the swapper's two renames). Nothing outside the scope, of tacit's home
// inside it or of a classified file reaches the output.
//
// The directory a walk(), find(), grepRecursive() or children() is asked about, swapped while
// the call opens it (the host resolves the path, finds a directory, then opens it):
//   - for a link out of the scope, the call failed with a plain Error that named the path twice
//     ("X: X: the directory changed …"), and grepRecursive said "not a directory";
//   - for a link to another directory inside the scope, the call listed that one under the name
//     asked about: the top directory was only checked to be inside the scope. tacit's own home
//     inside the root, which every call on it is refused, had its files' names listed that way.
// Now each call answers with the real directory's entries, or fails with a SecurityError that
// names the path once, says what happened and what to do.

import type { ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeCanary, realTempDir, tacit } from "./fixtures.js";
import { killAndWait, startBusyNode } from "../processes.js";

let base: string;
let cleanup: () => void;
let tree: string;
let outside: string;
/** tacit's home for the runs, inside the allowed root: every call on it is refused. */
let home: string;
const canary = { outsideName: makeCanary(), outsideContent: makeCanary(), homeName: makeCanary(), classifiedContent: makeCanary() };

/** Each swapped directory of the tree, and what its link, swapped in for it, leads to. */
const SWAPS = [
  { name: "out", link: () => outside },
  { name: "own", link: () => home },
  { name: "keys", link: () => path.join(tree, ".ssh") },
];

/** Swaps each directory for its link and back, by two renames each way, until killed; says "swapping" after 100 rounds. */
const SWAPPER = `
const fs = require("node:fs");
const [tree, ...pairs] = process.argv.slice(1);
const at = (name) => tree + "/" + name;
const swaps = [];
for (let i = 0; i < pairs.length; i += 2) {
  const name = pairs[i];
  fs.symlinkSync(pairs[i + 1], at(".link-" + name));
  swaps.push(name);
}
let isLink = false;
for (let count = 1; ; count++) {
  for (const name of swaps) {
    try {
      if (isLink) { fs.renameSync(at(name), at(".link-" + name)); fs.renameSync(at(".parked-" + name), at(name)); }
      else { fs.renameSync(at(name), at(".parked-" + name)); fs.renameSync(at(".link-" + name), at(name)); }
    } catch {}
  }
  isLink = !isLink;
  if (count === 100) process.stdout.write("swapping\\n");
}
`;

// A tree of its own for each test: the swapper leaves it in whatever state it was killed in.
beforeEach(() => {
  ({ dir: base, cleanup } = realTempDir("tacit-swapped-"));
  tree = path.join(base, "tree");
  outside = path.join(base, "outside");
  home = path.join(tree, "home");
  const write = (file: string, text: string): void => {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  };
  for (const { name } of SWAPS) {
    write(path.join(tree, name, "a.txt"), `needle ${name} a\n`);
    write(path.join(tree, name, "inner/b.txt"), `needle ${name} b\n`);
  }
  write(path.join(tree, ".ssh/id_ed25519"), `needle ${canary.classifiedContent}\n`);
  write(path.join(outside, `${canary.outsideName}.txt`), `needle ${canary.outsideContent}\n`);
  write(path.join(outside, canary.outsideName, "nested.txt"), `needle ${canary.outsideContent}\n`);
  write(path.join(home, `${canary.homeName}.txt`), "needle home\n");
});
afterEach(() => cleanup());

function startSwapper(): Promise<ChildProcess> {
  return startBusyNode(SWAPPER, [tree, ...SWAPS.flatMap(({ name, link }) => [name, link()])], "the swapper");
}


const ROUNDS = 250;

interface Outcome {
  dir: string;
  call: string;
  answer?: string[];
  error?: string;
  message?: string;
}

/**
 * Runs `calls` (name → a function of a swapped directory's name giving a list of strings) on each
 * swapped directory ROUNDS times while the swapper swaps, and returns each call's outcome. Checks
 * that the run ended normally and that no canary and no path outside the scope reached its output.
 */
async function outcomesWhileSwapped(calls: string): Promise<Outcome[]> {
  const script = `
requestFileSystem(".", (fs) => {
  const below = (p: string): string => p.slice(fs.root.length + 1);
  const calls: Record<string, (dir: string) => string[]> = ${calls};
  for (let i = 0; i < ${ROUNDS}; i++) {
    for (const dir of ${JSON.stringify(SWAPS.map(({ name }) => name))}) {
      for (const [call, f] of Object.entries(calls)) {
        let outcome: unknown;
        try {
          outcome = { answer: f(dir).sort() };
        } catch (e) {
          outcome = { error: e instanceof SecurityError ? "SecurityError" : String((e as Error)?.name), message: String((e as Error)?.message) };
        }
        println("@@" + JSON.stringify({ dir, call, ...(outcome as object) }));
      }
    }
  }
});
println("done");
`;
  const swapper = await startSwapper();
  let r: Awaited<ReturnType<typeof tacit>>;
  try {
    r = await tacit(tree, script, ["--exec-timeout-ms", "240000"], { TACIT_HOME: home });
  } finally {
    await killAndWait(swapper);
  }
  expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
  expect(r.stdout.trimEnd().endsWith("done"), r.stdout.slice(-2000)).toBe(true);
  for (const [what, value] of Object.entries(canary)) {
    expect(r.stdout.includes(value), `${what} reached stdout`).toBe(false);
    expect(r.stderr.includes(value), `${what} reached stderr`).toBe(false);
  }
  expect(r.stdout, "a path outside the scope was named").not.toContain(outside);
  return r.stdout.split("\n").filter((line) => line.startsWith("@@")).map((line) => JSON.parse(line.slice(2)) as Outcome);
}

/**
 * Judges a failed outcome on `named` (and counts it): a SecurityError whose message begins with
 * the path and names it once, or nothing of that name at the moment (the swapper renames twice
 * each way: between the two, there is none).
 */
function judgeFailure(outcome: Outcome, named: string, counts: Map<string, number>): void {
  const key = `${outcome.dir} ${outcome.call} ${outcome.error}: ${outcome.message!.replaceAll(named, "<path>").slice(0, 110)}`;
  counts.set(key, (counts.get(key) ?? 0) + 1);
  if (outcome.error === "Error" && outcome.message === `${named}: no such file or directory`) return;
  expect(outcome.error, `${outcome.call}("${outcome.dir}") failed with other than a SecurityError: ${outcome.message}`).toBe("SecurityError");
  expect(outcome.message!.startsWith(`${named}: `), outcome.message).toBe(true);
  expect(outcome.message!.split(named).length - 1, `the path named more than once: ${outcome.message}`).toBe(1);
}

function count(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** How often each outcome came (the race decides; a record for the log, not a check). */
function logCounts(counts: Map<string, number>): void {
  console.log([...counts].sort().map(([key, n]) => `${String(n).padStart(5)} ${key}`).join("\n"));
}

describe("a path through a directory that another process swaps for a link", () => {
  it("is resolved as it is now: a read answers, or is refused with a SecurityError, never fails with \"invalid path\"", async () => {
    // Resolving a path, tacit looks at each component (lstat) and reads a link's text (readlink):
    // a link swapped back for the directory between the two made readlink fail (EINVAL), and the
    // read failed with "invalid path (it changed while being resolved)".
    const outcomes = await outcomesWhileSwapped(`{ read: (dir) => [fs.access(dir + "/a.txt").read()], exists: (dir) => [String(fs.access(dir + "/inner/b.txt").exists)] }`);
    expect(outcomes.length).toBe(ROUNDS * SWAPS.length * 2);
    const counts = new Map<string, number>();
    for (const outcome of outcomes) {
      const file = outcome.call === "read" ? "a.txt" : "inner/b.txt";
      if (outcome.answer !== undefined) {
        count(counts, `${outcome.dir} ${outcome.call} answered ${JSON.stringify(outcome.answer)}`);
        // exists is false where the link leads to what holds no inner/b.txt (or nothing is there).
        const expected = outcome.call === "read" ? [[`needle ${outcome.dir} a\n`]] : [["true"], ["false"]];
        expect(expected, `${outcome.call}("${outcome.dir}/${file}") answered what the file never held`).toContainEqual(outcome.answer);
        continue;
      }
      judgeFailure(outcome, path.join(tree, outcome.dir, file), counts);
    }
    logCounts(counts);
  }, 300_000);
});

/** What each call answers of a swapped directory `name` that is where it was resolved (a directory of a.txt and inner/b.txt). */
function realAnswer(name: string, call: string): { whole: string[]; top: string[] } {
  const files = [`${name}/a.txt`, `${name}/inner/b.txt`];
  if (call === "grepRecursive") return { whole: files.map((f) => `${f}:needle ${f.includes("inner") ? `${name} b` : `${name} a`}`).sort(), top: [] };
  const children = [`${name}/a.txt`, `${name}/inner`];
  if (call === "children") return { whole: children, top: children };
  // A walk's subdirectory met while the top was swapped away is gone by then, and left out (left-out.ts).
  return { whole: [...children, `${name}/inner/b.txt`].sort(), top: children };
}

const LISTINGS = `{
  walk: (dir) => fs.access(dir).walk().map((e) => below(e.path)),
  children: (dir) => fs.access(dir).children().map((e) => below(e.path)),
  find: (dir) => fs.find(dir, "*").map(below),
  grepRecursive: (dir) => fs.grepRecursive(dir, "needle").map((m) => below(m.file) + ":" + m.line),
}`;

describe("the directory a listing or search is asked about, swapped for a link while it is opened", () => {
  it("is listed as the real directory or refused with a SecurityError naming it once; never another directory, in the scope or out", async () => {
    const outcomes = await outcomesWhileSwapped(LISTINGS);
    expect(outcomes.length).toBe(ROUNDS * SWAPS.length * 4);
    const counts = new Map<string, number>();
    for (const outcome of outcomes) {
      if (outcome.answer !== undefined) {
        count(counts, `${outcome.dir} ${outcome.call} answered`);
        const real = realAnswer(outcome.dir, outcome.call);
        // keys/ leads, as a link, to the classified .ssh: listed by its names, never searched.
        const asLink = outcome.dir === "keys" ? (outcome.call === "grepRecursive" ? [] : ["keys/id_ed25519"]) : null;
        if (asLink !== null && JSON.stringify(outcome.answer) === JSON.stringify(asLink)) continue;
        if (outcome.call === "walk" || outcome.call === "find") {
          for (const entry of real.top) expect(outcome.answer, `${outcome.call}("${outcome.dir}") lost the top's own entries`).toContain(entry);
          for (const entry of outcome.answer) expect(real.whole, `${outcome.call}("${outcome.dir}") answered with what the directory never held`).toContain(entry);
        } else {
          expect(outcome.answer, `${outcome.call}("${outcome.dir}") answered with another directory's entries`).toEqual(real.whole);
        }
        continue;
      }
      judgeFailure(outcome, path.join(tree, outcome.dir), counts);
    }
    logCounts(counts);
  }, 300_000);
});
