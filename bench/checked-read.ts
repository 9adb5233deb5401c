// What tacit's host must do for one read, whatever the protocol costs: open the file without
// following a final link (runner/fs/checked-open.ts openForReading: an lstat of the name, as a
// FIFO, socket or device is refused before it is opened, open, readlink of its /proc/self/fd
// entry to see where it leads, fstat, whose stats it returns), read it as readWhole does (one read of
// size + 1 bytes), decode it and close it. Timed in a bare Node loop in a process of its own,
// with no sandbox, no path resolution, no policy and no reply: less than the host does.
// With the bare round trip (round-trip.ts), the least a read checked by a separate process
// costs on this machine.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { packageRoot } from "../runner/paths.js";
import { runChecked } from "./helpers.js";

// Reads f0.txt … f<count-1>.txt in `dir`; prints µs per read over the loop, and the characters read.
const LOOP = `const { closeSync, readSync } = require("node:fs");
const [dir, count, checkedOpen] = process.argv.slice(2);
import(checkedOpen).then(({ openForReading }) => {
  const accept = () => undefined;
  let chars = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < Number(count); i++) {
    const { fd, stats: { size } } = openForReading(dir + "/f" + i + ".txt", accept);
    try {
      const buffer = Buffer.allocUnsafe(size + 1);
      chars += buffer.toString("utf8", 0, readSync(fd, buffer, 0, buffer.length, null)).length;
    } finally {
      closeSync(fd);
    }
  }
  console.log(Number(process.hrtime.bigint() - started) / Number(count) / 1000, chars);
});
`;

/** Microseconds per checked read of `count` files in `dataDir` (median of `runs` processes); throws unless each read `expectedChars` in all. */
export function checkedReadMicros(scratchDir: string, dataDir: string, count: number, runs: number, expectedChars: number): number {
  const script = path.join(scratchDir, "checked-read.cjs");
  writeFileSync(script, LOOP);
  const checkedOpen = pathToFileURL(path.join(packageRoot, "dist", "runner", "fs", "checked-open.js")).href;
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const [micros, chars] = runChecked(process.execPath, [script, dataDir, String(count), checkedOpen], dataDir).trim().split(" ").map(Number);
    if (chars !== expectedChars) throw new Error(`checked reads: expected ${expectedChars} characters, read ${chars}`);
    samples.push(micros!);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}
