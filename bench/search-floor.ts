// The least a search of a tree in Node can cost with the system calls grepRecursive needs for
// each file (runner/fs/grep-core.ts): each directory opened (O_DIRECTORY | O_NOFOLLOW), where it
// leads read from its /proc/<pid>/fd entry, and listed through that descriptor; each regular file
// opened through /proc/<pid>/fd/N/name (O_NOFOLLOW | O_NONBLOCK), fstat'ed (regular files only),
// read once and closed; the lines holding a literal counted. No classified paths, no batches, no
// search thread, no sandbox and no reply: a bare Node loop in a process of its own, started with
// `node script dir literal`, which prints the number of lines found. Against grep -rn it shows
// how much of tacit's distance from grep is Node's own cost per file (its fs calls, a Stats
// object and four Dates for each fstat, JIT warm-up), which no change to tacit's checks removes.
//
// Started with `node script dir literal by-name`, it opens each file by its name instead, in a
// working directory changed to the directory through its descriptor (chdir /proc/<pid>/fd/N): one
// walk through /proc for each directory rather than for each file, as grep's openat(dirfd, name).
// It shows how much of the rest is the kernel's walk through /proc for each file. Node has no
// openat, and allows chdir only in a process's main thread, never in the search thread.

import { writeFileSync } from "node:fs";
import path from "node:path";

const LOOP = `"use strict";
const { closeSync, constants, fstatSync, openSync, readdirSync, readSync, readlinkSync } = require("node:fs");
const [top, literal, how] = process.argv.slice(2);
const byName = how === "by-name";
const fdDirectory = "/proc/" + readlinkSync("/proc/self") + "/fd";
const buffer = Buffer.allocUnsafe(1024 * 1024);
let lines = 0;
function walk(openAs) {
  const dirFd = openSync(openAs, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  const dir = fdDirectory + "/" + dirFd;
  readlinkSync(dir);
  const entries = readdirSync(dir, { withFileTypes: true });
  if (byName) {
    // Subdirectories first: each changes the working directory.
    for (const entry of entries) if (entry.isDirectory()) walk(dir + "/" + entry.name);
    process.chdir(dir);
  }
  for (const entry of entries) {
    if (entry.isDirectory()) {
      if (!byName) walk(dir + "/" + entry.name);
    } else if (entry.isFile()) {
      const fd = openSync(byName ? entry.name : dir + "/" + entry.name, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      if (fstatSync(fd).isFile()) {
        const text = buffer.toString("latin1", 0, readSync(fd, buffer, 0, buffer.length, null));
        for (let at = text.indexOf(literal); at !== -1; ) {
          lines++;
          const end = text.indexOf("\\n", at);
          at = end === -1 ? -1 : text.indexOf(literal, end);
        }
      }
      closeSync(fd);
    }
  }
  closeSync(dirFd);
}
walk(require("node:path").resolve(top));
console.log(lines);
`;

/** Writes the bare search loop into `scratchDir` and returns its path. */
export function writeSearchFloor(scratchDir: string): string {
  const script = path.join(scratchDir, "search-floor.cjs");
  writeFileSync(script, LOOP);
  return script;
}
