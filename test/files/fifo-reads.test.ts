// A read of a FIFO (read, readBytes, readLines, forEachLine, grep, readClassified, and a search
// through a link to one) is refused before the FIFO is opened. Opened first (without blocking)
// and refused on what was opened, the open itself was an effect: it woke a process blocked
// opening the FIFO's other end for writing, which then went on (here: wrote a marker file). A
// device's open is the same kind of effect. Through the real CLI, with real FIFOs and real
// blocked writers: each writer must still be blocked in its open once tacit has exited.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, realTempDir, tacit } from "./fixtures.js";

/** The reads tried, each on a FIFO of its own: [label, the FIFO's name, the call]. */
const READS: Array<[string, string, string]> = [
  ["read", "read.fifo", `fs.access("read.fifo").read()`],
  ["readBytes", "bytes.fifo", `fs.access("bytes.fifo").readBytes().length`],
  ["readLines", "lines.fifo", `fs.access("lines.fifo").readLines().length`],
  ["forEachLine", "each.fifo", `fs.access("each.fifo").forEachLine(() => undefined)`],
  ["grep", "grep.fifo", `fs.grep("grep.fifo", "x").length`],
  ["readClassified", ".env.fifo", `String(fs.access(".env.fifo").readClassified())`],
];

/** Where the kernel has a process wait, or "" once it is gone. */
function waitChannel(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/wchan`, "utf8");
  } catch {
    return "";
  }
}

describe.skipIf(process.platform !== "linux")("a read of a FIFO", () => {
  let dir: string;
  let cleanup: () => void;
  /** One writer per FIFO, blocked opening it until a reader opens the other end. */
  const writers = new Map<string, ChildProcess>();

  beforeAll(() => {
    ({ dir, cleanup } = realTempDir("tacit-fifo-reads-"));
    const fifos = [...READS.map(([, name]) => name), "linked.fifo"];
    execFileSync("mkfifo", fifos.map((name) => path.join(dir, name)));
    // A search follows a link to a regular file inside the scope: this one leads to a FIFO.
    symlinkSync("linked.fifo", path.join(dir, "search-me.txt"));
    for (const name of fifos) {
      writers.set(name, spawn("sh", ["-c", 'exec 3>"$1"; echo woke > "$1.woke"', "sh", path.join(dir, name)], { stdio: "ignore" }));
    }
  });
  afterAll(() => {
    for (const writer of writers.values()) writer.kill("SIGKILL");
    cleanup();
  });

  it("is refused before the FIFO is opened: a writer blocked on its other end is not woken", async () => {
    // The premise: every writer is blocked in its open (a FIFO's open waits for its partner).
    for (const [name, writer] of writers) {
      for (let tries = 0; waitChannel(writer.pid!) !== "wait_for_partner"; tries++) {
        if (tries > 200) throw new Error(`the writer of ${name} did not come to wait for a reader (${waitChannel(writer.pid!)})`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
${READS.map(([label, , call]) => `  attempt(${JSON.stringify(label)}, () => ${call});`).join("\n")}
  attempt("grepRecursive", () => fs.grepRecursive(".", "x").length);
});
`;
    const r = await tacit(dir, script, ["--quiet"], { TACIT_HOME: path.join(dir, ".tacit-home") });
    const found = attempts(r.stdout);
    // The bad thing: a writer woke (its open completed when tacit opened the other end), and went on.
    for (const [name, writer] of writers) {
      expect(waitChannel(writer.pid!), `the writer of ${name}`).toBe("wait_for_partner");
      expect(existsSync(path.join(dir, `${name}.woke`)), name).toBe(false);
    }
    for (const [label, name] of READS) {
      const attempt = attemptOf(found, label);
      expect(attempt.status, `${label}: ${JSON.stringify(attempt.value)}`).toBe("Error");
      expect(attempt.value, label).toBe(`${path.join(dir, name)}: not a regular file (a FIFO, socket or device); nothing was opened or read. Read a regular file`);
    }
    expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: 0 });
  }, 30_000);
});
