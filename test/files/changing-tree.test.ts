// walk(), find(), grepRecursive() and children() of a tree that another process changes while
// they run: a directory swapped again and again for a link to a directory outside the scope,
// another for a link to a classified directory, a file for a link to a file outside, and a
// subtree removed and made again. Whatever state each call meets, nothing outside the scope is
// listed or read, nothing classified is read, and every call either answers or throws an error
// the script catches: the run ends normally. Through the real CLI, with a real Deno; the
// changes come from a real process of their own. The outside files' names and contents, and the
// classified file's contents, are canaries; the test reads the run's whole output for them.

import type { ChildProcess } from "node:child_process";
import { lstatSync, mkdirSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { makeCanary, realTempDir, tacit } from "./fixtures.js";
import { killAndWait, startBusyNode, startBusyPython } from "../processes.js";

let base: string;
let cleanup: () => void;
let tree: string;
let outside: string;
const outsideName = makeCanary();
const outsideContent = makeCanary();
const classifiedContent = makeCanary();

/** Runs in a process of its own: swaps and churns until killed; says "swapping" once it has swapped 100 times. */
const CHANGER = `
const fs = require("node:fs");
const [tree, outside] = process.argv.slice(1);
const at = (name) => tree + "/" + name;
const isLink = (p) => { try { return fs.lstatSync(p).isSymbolicLink(); } catch { return false; } };
// Each swapped name: a real directory (or file) parked beside it while a link stands in its place.
const swaps = [
  { name: "sub", parked: ".parked-sub", link: ".link-sub", target: outside },
  { name: "keys", parked: ".parked-keys", link: ".link-keys", target: at(".ssh") },
  { name: "data.txt", parked: ".parked-data.txt", link: ".link-data.txt", target: outside + "/${outsideName}.txt" },
];
for (const swap of swaps) fs.symlinkSync(swap.target, at(swap.link));
let count = 0;
for (;;) {
  for (const swap of swaps) {
    try {
      if (isLink(at(swap.name))) { fs.renameSync(at(swap.name), at(swap.link)); fs.renameSync(at(swap.parked), at(swap.name)); }
      else { fs.renameSync(at(swap.name), at(swap.parked)); fs.renameSync(at(swap.link), at(swap.name)); }
    } catch {}
  }
  try {
    fs.rmSync(at("churn"), { recursive: true, force: true });
    fs.mkdirSync(at("churn/a/b"), { recursive: true });
    fs.writeFileSync(at("churn/a/b/f.txt"), "needle churn\\n");
  } catch {}
  if (++count === 100) process.stdout.write("swapping\\n");
}
`;

// A tree of its own for each test: the changer leaves it in whatever state it was killed in.
beforeEach(() => {
  ({ dir: base, cleanup } = realTempDir("tacit-changing-tree-"));
  tree = path.join(base, "tree");
  outside = path.join(base, "outside");
  const write = (file: string, text: string): void => {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  };
  write(path.join(tree, "sub/inside.txt"), "needle sub\n");
  write(path.join(tree, "sub/deeper/more.txt"), "needle deeper\n");
  write(path.join(tree, "keys/ordinary.txt"), "needle keys\n");
  write(path.join(tree, "data.txt"), "needle data\n");
  write(path.join(tree, "steady/s.txt"), "needle steady\n");
  write(path.join(tree, ".ssh/id_ed25519"), `needle ${classifiedContent}\n`);
  write(path.join(outside, `${outsideName}.txt`), `needle ${outsideContent}\n`);
  write(path.join(outside, outsideName, "nested.txt"), `needle ${outsideContent}\n`);
});
afterEach(() => cleanup());

/** Starts the changer on `tree`; resolves once it is swapping. */
function startChanger(): Promise<ChildProcess> {
  return startBusyNode(CHANGER, [tree, outside], "the changer");
}


const SCRIPT = `
const seen: string[] = [];
const errors: Record<string, number> = {};
function call(label: string, f: () => string[]): void {
  try {
    seen.push(label + ": " + f().join(" | "));
  } catch (e) {
    const name = e instanceof SecurityError ? "SecurityError" : String((e as Error)?.name);
    errors[label + " " + name] = (errors[label + " " + name] ?? 0) + 1;
    seen.push(label + " threw " + name + ": " + String((e as Error)?.message));
  }
}
requestFileSystem(".", (fs) => {
  for (let i = 0; i < 60; i++) {
    call("walk", () => fs.access(".").walk().map((entry) => entry.path));
    call("find", () => fs.find(".", "*"));
    call("grepRecursive", () => fs.grepRecursive(".", "needle").map((m) => m.file + ":" + m.line));
    call("children of sub", () => fs.access("sub").children().map((entry) => entry.path));
    call("walk of sub", () => fs.access("sub").walk().map((entry) => entry.path));
    call("grepRecursive of keys", () => fs.grepRecursive("keys", "needle").map((m) => m.file + ":" + m.line));
    call("read data.txt", () => [fs.access("data.txt").read()]);
  }
});
println(seen.join("\\n"));
println("errors " + JSON.stringify(errors));
println("done");
`;

describe("a tree that changes while it is searched", () => {
  for (const helper of ["off", "on"]) {
    it(`never lists or reads outside the scope, never reads a classified file, and never crashes (search helper ${helper})`, async () => {
      const changer = await startChanger();
      let r: Awaited<ReturnType<typeof tacit>>;
      try {
        r = await tacit(tree, SCRIPT, ["--exec-timeout-ms", "120000"], { TACIT_SEARCH_HELPER: helper });
      } finally {
        await killAndWait(changer);
      }
      expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
      expect(r.stdout.trimEnd().endsWith("done"), r.stdout.slice(-2000)).toBe(true);
      for (const [what, canary] of [["an outside name", outsideName], ["an outside file's content", outsideContent], ["a classified file's content", classifiedContent]] as const) {
        expect(r.stdout.includes(canary), `${what} reached stdout`).toBe(false);
        expect(r.stderr.includes(canary), `${what} reached stderr`).toBe(false);
      }
      expect(r.stdout, "a path outside the scope was named").not.toContain(outside);
      // Every failure was an error the script caught: an Error or a SecurityError, nothing else.
      const errors = JSON.parse(/^errors (.*)$/m.exec(r.stdout)![1]!) as Record<string, number>;
      for (const key of Object.keys(errors)) expect(key).toMatch(/ (Error|SecurityError)$/);
    }, 180_000);
  }
});

/** Swaps tree/sub for a link to the tree itself ("."), and back, until killed; says "swapping" once it has swapped 100 times. */
const ANCESTOR_CHANGER = `
const fs = require("node:fs");
const tree = process.argv[1];
const at = (name) => tree + "/" + name;
const isLink = (p) => { try { return fs.lstatSync(p).isSymbolicLink(); } catch { return false; } };
fs.symlinkSync(".", at(".link-sub"));
let count = 0;
for (;;) {
  try {
    if (isLink(at("sub"))) { fs.renameSync(at("sub"), at(".link-sub")); fs.renameSync(at(".parked"), at("sub")); }
    else { fs.renameSync(at("sub"), at(".parked")); fs.renameSync(at(".link-sub"), at("sub")); }
  } catch {}
  if (++count === 100) process.stdout.write("swapping\\n");
}
`;

describe("a directory swapped for a link to the tree it is in", () => {
  it("is never walked through: walk() names no path that never was (sub/steady, sub/sub/…)", async () => {
    const loop = path.join(base, "loop");
    mkdirSync(path.join(loop, "sub/inner"), { recursive: true });
    mkdirSync(path.join(loop, "steady"));
    writeFileSync(path.join(loop, "sub/inner/i.txt"), "i\n");
    writeFileSync(path.join(loop, "steady/s.txt"), "s\n");
    const changer = await startBusyNode(ANCESTOR_CHANGER, [loop], "the changer");
    // Many walks, each a chance for the walk to list sub as a directory and open it once it is a link.
    const script = `
const seen = new Set<string>();
requestFileSystem(".", (fs) => {
  for (let i = 0; i < 3000; i++) {
    try {
      for (const entry of fs.access(".").walk()) seen.add(entry.path.slice(fs.root.length + 1));
    } catch {}
  }
});
println([...seen].sort().join("\\n"));
`;
    let r: Awaited<ReturnType<typeof tacit>>;
    try {
      r = await tacit(loop, script, ["--exec-timeout-ms", "120000"]);
    } finally {
      await killAndWait(changer);
    }
    expect(r.code, r.stderr).toBe(0);
    // Every name a walk may meet, whatever the state: sub as a directory or parked, and the link (listed, never entered).
    const possible = new Set([".link-sub", ".parked", ".parked/inner", ".parked/inner/i.txt", "steady", "steady/s.txt", "sub", "sub/inner", "sub/inner/i.txt"]);
    const never = r.stdout.trim().split("\n").filter((name) => !possible.has(name));
    expect(never, "paths a walk made up by going through the link").toEqual([]);
  }, 180_000);
});


/** Subtrees of a tree whose `sub` directory is swapped for a link (out of the scope) and back (see SWAPPING_SUBTREES). */
const SUBTREES = 6;

/**
 * Swaps each tree/t<i>/sub for a link to a directory outside the scope, and back, until killed,
 * each time at once (renameat2 with RENAME_EXCHANGE: sub is never missing, only a directory or a
 * link); says "swapping" once it has swapped 100 times. Each t<i> holds many files besides sub,
 * so a walk lists sub as a directory well before it opens it: the link is often there by then.
 */
const SWAPPING_SUBTREES = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
tree, outside, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(count):
    os.symlink(outside, f"{tree}/.link{i}")
swaps = 0
while True:
    for i in range(count):
        if libc.renameat2(AT_FDCWD, f"{tree}/t{i}/sub".encode(), AT_FDCWD, f"{tree}/.link{i}".encode(), RENAME_EXCHANGE) != 0:
            raise OSError(ctypes.get_errno(), "renameat2")
    swaps += 1
    if swaps == 100:
        print("swapping", flush=True)
`;

/**
 * Puts each tree/t<i>/sub of a tree SWAPPING_SUBTREES was killed on back as the directory, and
 * takes its link away: each swap is one exchange, so sub is either the directory (and .link<i>
 * the link) or the link (and .link<i> the directory).
 */
function unswap(tree: string): void {
  for (let i = 0; i < SUBTREES; i++) {
    const sub = path.join(tree, `t${i}`, "sub");
    const spare = path.join(tree, `.link${i}`);
    if (lstatSync(sub).isSymbolicLink()) {
      unlinkSync(sub);
      renameSync(spare, sub);
    } else {
      // Missing only if the changer died before it made them all.
      rmSync(spare, { force: true });
    }
  }
}

describe("a directory swapped for a link while it is walked", () => {
  // The 9,000 files are made once for both tests (it took each about 2 s on a loaded machine, and
  // as long again to remove), and put back as they were after each: nothing writes in them but the
  // changer, which only exchanges each sub with its link.
  let swapped: string;
  let removeSwapped: () => void;
  beforeAll(() => {
    ({ dir: swapped, cleanup: removeSwapped } = realTempDir("tacit-changing-subtrees-"));
    for (let i = 0; i < SUBTREES; i++) {
      mkdirSync(path.join(swapped, `t${i}`, "sub"), { recursive: true });
      writeFileSync(path.join(swapped, `t${i}`, "sub", "inside.txt"), "needle\n");
      for (let j = 0; j < 1500; j++) writeFileSync(path.join(swapped, `t${i}`, `f${j}`), "");
    }
  });
  afterAll(() => removeSwapped());

  for (const helper of ["off", "on"]) {
    it(`is left out with a warning that names it and says why, never silently, and the link is never followed (search helper ${helper})`, async () => {
      const changer = await startBusyPython(SWAPPING_SUBTREES, [swapped, path.join(outside, outsideName), String(SUBTREES)], "the changer");
      // Each walk (and find) that answered with sub but nothing below it says so on a line of its own.
      const script = `
requestFileSystem(".", (fs) => {
  for (let round = 0; round < 15; round++) {
    for (let i = 0; i < ${SUBTREES}; i++) {
      const calls: Array<[string, () => string[]]> = [
        ["walk", () => fs.access("t" + i).walk().map((entry) => entry.path)],
        ["find", () => fs.find("t" + i, "*")],
      ];
      for (const [label, call] of calls) {
        try {
          const found = call();
          if (found.some((p) => p.endsWith("/sub")) && !found.some((p) => p.endsWith("/sub/inside.txt"))) println("emptied " + label + " t" + i);
        } catch (e) {
          println("threw " + label + " t" + i + ": " + String(e));
        }
      }
      try { fs.grepRecursive("t" + i, "needle"); } catch (e) { println("threw grepRecursive t" + i + ": " + String(e)); }
    }
  }
});
println("done");
`;
      let r: Awaited<ReturnType<typeof tacit>>;
      try {
        r = await tacit(swapped, script, ["--exec-timeout-ms", "120000"], { TACIT_SEARCH_HELPER: helper });
      } finally {
        await killAndWait(changer);
        unswap(swapped);
      }
      expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
      expect(r.stdout.trimEnd().endsWith("done"), r.stdout.slice(-2000)).toBe(true);
      expect(r.stdout).not.toContain("threw");
      // Never followed: nothing of the directory the link leads to, nor its name or path.
      for (const seen of [r.stdout, r.stderr]) {
        expect(seen.includes(outsideName), "an outside name was named").toBe(false);
        expect(seen.includes(outsideContent), "an outside file's content was read").toBe(false);
        expect(seen.includes(outside), "a path outside the scope was named").toBe(false);
      }
      const warnings = r.stderr.split("\n").filter((line) => line.startsWith("tacit: warning: "));
      const reason =
        "(it (or a directory on the way to it) was swapped for a symbolic link or a file while the tree was walked, and a walk does not follow links into directories)";
      // Of these hundreds of calls, many met sub as a directory in its parent's listing and as the
      // link when they came to enter it (the listing puts 1,500 files before it): the warnings say so. Left out silently, as before, the script took sub for an empty directory and was
      // given no warning at all. (An "emptied" sub alone proves nothing: listed while it was the
      // link, and resolved once it was the directory again, sub is a link into the scope, which a
      // walk names and does not enter, as any such link.)
      expect(warnings.length, `no warning in ${r.stdout.split("\n").filter((line) => line.startsWith("emptied ")).length} emptied answers`).toBeGreaterThan(0);
      for (const warning of warnings) {
        expect(warning).toMatch(
          new RegExp(
            `^tacit: warning: (walk\\(\\) of "[^"]*/t\\d"|find\\("[^"]*/t\\d", "\\*"\\)|grepRecursive\\("[^"]*/t\\d", "needle"\\)): ` +
              `1 entry could not be read and is left out of its answer: "[^"]*/t\\d/sub" ${reason.replace(/[()]/g, "\\$&")}\\. The answer holds the rest`,
          ),
        );
      }
    }, 180_000);
  }
});
