// The other names a program has on PATH (runner/approval/program-names.ts), on a PATH of real
// files in a temp dir: links lead to the program they name; a multi-call program, which acts as
// the name it is run by, is judged by that name alone.

import { linkSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { ProgramNames } from "../../runner/approval/program-names.js";
import { realTempDir } from "../files/fixtures.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function pathOf(): { first: string; second: string; searchPath: string } {
  const { dir, cleanup } = realTempDir("tacit-program-names-");
  cleanups.push(cleanup);
  const first = path.join(dir, "first");
  const second = path.join(dir, "second");
  mkdirSync(first);
  mkdirSync(second);
  return { first, second, searchPath: [first, "relative/bin", second].join(path.delimiter) };
}

it("reads a name by the program it runs, symbolic and hard links alike, and a rule's names by the programs they run", () => {
  const { first, second, searchPath } = pathOf();
  writeFileSync(path.join(second, "make"), "#!/bin/sh\n", { mode: 0o755 });
  symlinkSync(path.join(second, "make"), path.join(first, "gmake"));
  writeFileSync(path.join(first, "other"), "#!/bin/sh\n", { mode: 0o755 });
  const names = new ProgramNames(searchPath);
  linkSync(path.join(second, "make"), path.join(second, "make-4.3"));
  const make = names.programOf("make");
  expect(make).not.toBeNull();
  expect(names.programOf("gmake")).toBe(make);
  expect(names.programOf("make-4.3")).toBe(make);
  expect(names.programOf("absent")).toBeNull();
  expect([...names.programsNamed((name) => name === "make")]).toEqual([make]);
  expect(names.programsNamed((name) => name === "make").has(names.programOf("other")!)).toBe(false);
});

it("judges a multi-call program (BusyBox) by the name it is run by", () => {
  const { first, searchPath } = pathOf();
  writeFileSync(path.join(first, "busybox"), "#!/bin/sh\n", { mode: 0o755 });
  symlinkSync("busybox", path.join(first, "rm"));
  symlinkSync("busybox", path.join(first, "ls"));
  const names = new ProgramNames(searchPath);
  expect(names.programOf("ls")).toBeNull();
  expect(names.programsNamed((name) => name === "rm").size).toBe(0);
});
