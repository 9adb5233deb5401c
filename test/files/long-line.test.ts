// A file of one line longer than LINE_LIMIT_CHARS (16 Mi characters) with no newline: grep()
// held the whole line on the host's heap (its search thread is in the host process), so a
// sparse file of a few GB, which costs no disk, grew the host by as much (2.1 GB for 2 GB) and
// a larger one would end it, every session of a tacit serve with it; forEachLine() split the
// text held so far again with every piece, the square of the line's length. Now grep() and
// forEachLine() throw an error naming the file and the limit, grepRecursive() skips the file,
// and normal files still stream.

import { spawn } from "node:child_process";
import { readFileSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, tacitBin } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, realTempDir } from "./fixtures.js";

/** library/protocol.ts's LINE_LIMIT_CHARS, written out so the test stands without the change. */
const LINE_LIMIT_CHARS = 16 * 1024 * 1024;

let root: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-files-long-line-"));
  // Sparse: 1 GiB of NUL characters and no newline, on no disk.
  writeFileSync(path.join(root, "huge.bin"), "");
  truncateSync(path.join(root, "huge.bin"), 1024 * 1024 * 1024);
  writeFileSync(path.join(root, "long.txt"), "");
  truncateSync(path.join(root, "long.txt"), 40 * 1024 * 1024);
  writeFileSync(path.join(root, "small.txt"), "first\nneedle here\nlast\n");
  // Lines across chunk boundaries, one just under the limit.
  writeFileSync(path.join(root, "near.txt"), `start\n${"n".repeat(LINE_LIMIT_CHARS - 5)}edge\r\n${"m".repeat(3 * 1024 * 1024)}\nend`);
});
afterAll(() => cleanup());

/** `tacit run -` in `cwd`, and the host process's peak resident memory (VmHWM) in KiB. */
function runMeasured(cwd: string, script: string): Promise<CliResult & { peakKb: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tacitBin, "run", "--exec-timeout-ms", "60000", "-"], { cwd, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let peakKb = 0;
    const sample = (): void => {
      try {
        peakKb = Math.max(peakKb, Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1] ?? 0));
      } catch {
        // Gone.
      }
    };
    const timer = setInterval(sample, 20);
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("error", reject);
    child.on("exit", () => sample());
    child.on("close", (code) => {
      clearInterval(timer);
      resolve({ code, stdout, stderr, peakKb });
    });
    child.stdin.end(script);
  });
}

const limitMessage = (file: string): RegExp =>
  new RegExp(`^${path.join(root, file).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: has a line longer than ${LINE_LIMIT_CHARS} characters`);

describe("a line longer than the limit", () => {
  it("grep() and forEachLine() throw an error naming the file and the limit; the host does not hold the line", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("grep", () => fs.grep("huge.bin", "needle").length);
  attempt("forEachLine", () => { let n = 0; fs.access("long.txt").forEachLine((l) => { n += l.length; }); return n; });
  attempt("forEachLine huge", () => { let n = 0; fs.access("huge.bin").forEachLine((l) => { n += l.length; }); return n; });
});
`;
    const r = await runMeasured(root, script);
    const found = attempts(r.stdout);
    for (const [label, file] of [["grep", "huge.bin"], ["forEachLine", "long.txt"], ["forEachLine huge", "huge.bin"]] as const) {
      expect(attemptOf(found, label).status, label).toBe("Error");
      expect(String(attemptOf(found, label).value), label).toMatch(limitMessage(file));
    }
    // Without the limit, grep grew the host past 1 GB for the 1 GiB line.
    expect(r.peakKb, "the host's peak resident memory, KiB").toBeLessThan(450 * 1024);
    expect(r.code, r.stderr).toBe(0);
  }, 90_000);

  it("grepRecursive() skips such a file, finds the rest, and the host does not hold the line", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => attempt("grepRecursive", () => fs.grepRecursive(".", "needle").map((m) => path(m.file) + ":" + m.lineNumber)));
function path(file: string): string { return file.slice(file.lastIndexOf("/") + 1); }
`;
    const r = await runMeasured(root, script);
    expect(r.code, r.stderr).toBe(0);
    expect(attemptOf(attempts(r.stdout), "grepRecursive")).toEqual({ status: "ok", value: ["small.txt:2"] });
    expect(r.peakKb, "the host's peak resident memory, KiB").toBeLessThan(450 * 1024);
  }, 90_000);

  it("lines up to the limit still stream, across chunks, with their numbers", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("lines", () => { const seen: string[] = []; fs.access("near.txt").forEachLine((l, n) => seen.push(n + ":" + l.length + ":" + l.slice(-4))); return seen; });
  attempt("grep", () => fs.grep("near.txt", "^end$|^start$").map((m) => m.lineNumber + ":" + m.line));
});
`;
    const r = await runMeasured(root, script);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expect(attemptOf(found, "lines").value).toEqual(["1:5:tart", `2:${LINE_LIMIT_CHARS - 1}:edge`, `3:${3 * 1024 * 1024}:mmmm`, "4:3:end"]);
    expect(attemptOf(found, "grep").value).toEqual(["1:start", "4:end"]);
  }, 90_000);
});
