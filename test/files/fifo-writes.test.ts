// A write or append to a FIFO is refused before the FIFO is opened. Opened first (without
// blocking) and refused on what was opened, the refusal said whether another process held the
// FIFO open for reading ("no such device or address (ENXIO)" where none did, "not a regular
// file" where one did), and the open itself was an effect: it woke a process blocked on the
// FIFO's other end (and a device's open, with --allowed-roots /, can reset a serial board or arm
// a watchdog). Through the real CLI, with real FIFOs.

import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync, readSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, realTempDir, tacit } from "./fixtures.js";

describe.skipIf(process.platform === "win32")("a write to a FIFO", () => {
  let dir: string;
  let cleanup: () => void;
  /** The test's own reading end of read.fifo, held through the run. */
  let reader: number;

  beforeAll(() => {
    ({ dir, cleanup } = realTempDir("tacit-fifo-writes-"));
    execFileSync("mkfifo", [path.join(dir, "unread.fifo"), path.join(dir, "read.fifo")]);
    // A process (this one) reads read.fifo: opened for writing, it would accept the open.
    reader = openSync(path.join(dir, "read.fifo"), constants.O_RDONLY | constants.O_NONBLOCK);
  });
  afterAll(() => {
    closeSync(reader);
    cleanup();
  });

  it("is refused the same way whether or not a process reads it, before it is opened, and writes nothing", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  for (const name of ["unread.fifo", "read.fifo"]) {
    attempt("write " + name, () => fs.access(name).write("written"));
    attempt("append " + name, () => fs.access(name).append("appended"));
    attempt("writeClassified " + name, () => fs.access(name).writeClassified(classify("secret")));
  }
});
`;
    const r = await tacit(dir, script, ["--quiet", "--classified-paths", "*.fifo"]);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    for (const name of ["unread.fifo", "read.fifo"]) {
      for (const what of ["write", "append", "writeClassified"]) {
        expect(attemptOf(found, `${what} ${name}`), `${what} ${name}`).toEqual({
          status: "Error",
          value: `${path.join(dir, name)}: not a regular file (a FIFO, socket or device); nothing was opened or written. Write to a regular file.`,
        });
      }
    }
    // Nothing reached the reader: with no writer left, a read finds no bytes (written ones would wait in the pipe).
    expect(readSync(reader, Buffer.alloc(64))).toBe(0);
  }, 30_000);
});
