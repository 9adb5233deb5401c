// The secure output that is not a regular file. tacit opened it with openSync(file, "a"): at a
// FIFO nobody reads, that open waited for a reader on the host's main thread, so the run never
// ended (its own time limit could not fire either; in tacit serve, every session stopped). A
// device took the plaintext wherever it goes, and a symbolic link there was followed to whatever
// file it names. Through the real CLI, each bounded by a timeout of the test's own: the run ends
// by itself, says on stderr what is wrong with the path and what to do, writes nothing there,
// and the script's output is unchanged.

import { execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, linkSync, mkdirSync, openSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tacitBin } from "../helpers.js";
import { makeCanary, realTempDir, writeTree } from "./fixtures.js";

let base: string;
let root: string;
let cleanup: () => void;
const canary = makeCanary();

const SCRIPT = `
requestFileSystem(".", (fs) => {
  println("plain line");
  println("secret:", fs.readClassified(".env"));
});
`;

/** How long a run may take before the test calls it hung (a run here takes about a second). */
const HUNG_AFTER_MS = 20_000;

interface BoundedRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The test killed it: it had not ended after HUNG_AFTER_MS. */
  hung: boolean;
}

/** `tacit run -` with `args`, killed (and said so) if it has not ended after HUNG_AFTER_MS. */
function boundedRun(args: string[]): Promise<BoundedRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tacitBin, "run", "--quiet", ...args, "-"], { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      child.kill("SIGKILL");
    }, HUNG_AFTER_MS);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, hung, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") });
    });
    child.stdin.end(SCRIPT);
  });
}

/** Where the kernel has a process wait (/proc/<pid>/wchan), or "" once it is gone. */
function waitChannel(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/wchan`, "utf8");
  } catch {
    return "";
  }
}

/** The run ended by itself, as usual for the script, and refused the sink with a message naming it. */
function expectRefusedSink(r: BoundedRun, sink: string, why: RegExp): void {
  expect(r.hung, "tacit hung opening the secure output").toBe(false);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe("plain line\nsecret: Classified(***)\n");
  expect(r.stderr).toContain(`the secure output ${sink}`);
  expect(r.stderr).toMatch(why);
  expect(r.stderr).toMatch(/give --secure-output a regular file/);
  expect(r.stderr).not.toContain(canary);
}

beforeAll(() => {
  ({ dir: base, cleanup } = realTempDir("tacit-files-sink-kinds-"));
  root = path.join(base, "tree");
  writeTree(root, { ".env": canary });
});
afterAll(() => cleanup());

describe("a secure output that is not a regular file", () => {
  it("a FIFO nobody reads: the run ends by itself and says so, instead of waiting forever for a reader", async () => {
    const sink = path.join(base, "sink.fifo");
    execFileSync("mkfifo", [sink]);
    const r = await boundedRun(["--secure-output", sink]);
    expectRefusedSink(r, sink, /is not a regular file \(a FIFO\)/);
  }, 60_000);

  it("a FIFO someone reads gets no plaintext", async () => {
    const sink = path.join(base, "read.fifo");
    execFileSync("mkfifo", [sink]);
    // A reader that keeps what it gets: cat itself opens the FIFO, so its own wait channel shows
    // when it is blocked in that open, waiting for a writer.
    const got = path.join(base, "reader-got");
    const gotFd = openSync(got, "w");
    const reader = spawn("cat", [sink], { stdio: ["ignore", gotFd, "ignore"] });
    closeSync(gotFd);
    // It ends when tacit closes the FIFO: listened for now, so that the end is not missed.
    const ended = new Promise((resolve) => reader.on("close", resolve));
    try {
      // The premise: the reader is there before tacit opens the FIFO. Until it is, tacit's open
      // (O_NONBLOCK) fails with ENXIO and is refused for that, and what tacit does with a FIFO it
      // did open (one someone reads) is not tried: a fixed 300 ms wait left that to the scheduler.
      for (let tries = 0; waitChannel(reader.pid!) !== "wait_for_partner"; tries++) {
        if (tries > 400) throw new Error(`the reader did not come to wait for a writer (${waitChannel(reader.pid!) || "gone"})`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const r = await boundedRun(["--secure-output", sink]);
      expectRefusedSink(r, sink, /is not a regular file \(a FIFO\)/);
    } finally {
      reader.kill("SIGKILL");
    }
    await ended;
    expect(readFileSync(got, "utf8")).not.toContain(canary);
  }, 60_000);

  it("a device (/dev/null) or a directory is refused, naming what it is", async () => {
    const device = await boundedRun(["--secure-output", "/dev/null"]);
    expectRefusedSink(device, "/dev/null", /is not a regular file \(a device\)/);
    const directory = path.join(base, "a-directory");
    mkdirSync(directory);
    const r = await boundedRun(["--secure-output", directory]);
    expectRefusedSink(r, directory, /is not a regular file \(a directory\)/);
  }, 60_000);

  it("a symbolic link is not followed: the file it names gets nothing", async () => {
    const target = path.join(base, "elsewhere.log");
    writeFileSync(target, "", { mode: 0o600 });
    const sink = path.join(base, "link.log");
    symlinkSync(target, sink);
    const dangling = path.join(base, "dangling.log");
    symlinkSync(path.join(base, "nowhere.log"), dangling);
    const r = await boundedRun(["--secure-output", sink]);
    expectRefusedSink(r, sink, /is a symbolic link/);
    expect(readFileSync(target, "utf8")).toBe("");
    const d = await boundedRun(["--secure-output", dangling]);
    expectRefusedSink(d, dangling, /is a symbolic link/);
    expect(existsSync(path.join(base, "nowhere.log"))).toBe(false);
  }, 60_000);

  it("a file with another name (a hard link) gets nothing: that name may lie where scripts read", async () => {
    // Made here as a confined command made it, where the sink did not exist yet, in the roots
    // (test/exec/confinement): the script read the plaintext back through leak.txt.
    const other = path.join(root, "leak.txt");
    writeFileSync(other, "", { mode: 0o600 });
    const sink = path.join(base, "linked.log");
    linkSync(other, sink);
    const r = await boundedRun(["--secure-output", sink]);
    expect(r.hung, "tacit hung opening the secure output").toBe(false);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(other, "utf8")).toBe("");
    expect(r.stderr).toMatch(/the secure output .*linked\.log has 2 names \(hard links\).*no plaintext was written to it.*a new file outside the allowed roots/);
  }, 60_000);
});
