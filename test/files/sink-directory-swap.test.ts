// A directory on the way to the secure output swapped for a link while a run goes on. tacit opens
// the sink at the first thing a script prints, and opened it by its path: it followed the link and
// created the file, with the plaintext of the classified values printed, in the directory the
// link's maker chose. Whoever can write a directory on the way (a confined command of another run
// whose allowed roots hold it, say) could have it so. Now the file is opened only in the
// directory tacit first found (runner/secure-sink.ts, sinkDirectories).
//
// The moment needs no luck: the script itself waits, before it prints anything, on a command
// reading a FIFO the test holds (`cat gate`); the test swaps the directory meanwhile, then lets
// it go. The attacker here is the test, outside tacit (the sink lies outside the run's roots).

import { closeSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openedToRead } from "../fifo.js";
import { filesUnder, makeCanary, realTempDir, tacit } from "./fixtures.js";

const SCRIPT = `
requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  requestExecPermission(["cat"], (proc) => proc.exec("cat", ["gate"]));
  println("secret:", secret);
});
`;

describe("a directory on the way to the secure output, swapped for a link during the run", () => {
  let base: string;
  let cleanup: () => void;
  let work: string;
  let elsewhere: string;
  let canary: string;
  beforeEach(() => {
    ({ dir: base, cleanup } = realTempDir("tacit-sink-swap-"));
    work = path.join(base, "work");
    elsewhere = path.join(base, "elsewhere");
    canary = makeCanary();
    mkdirSync(work);
    writeFileSync(path.join(work, ".env"), canary);
    execFileSync("mkfifo", [path.join(work, "gate")]);
    // The link's maker's directory, with the directories a link there would be followed into.
    mkdirSync(path.join(elsewhere, "out"), { recursive: true });
  });
  afterEach(() => cleanup());

  /** Runs SCRIPT with the sink at `sink`, and does `swap` while the script waits at its gate, before it prints. */
  async function runSwapping(sink: string, swap: () => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const run = tacit(work, SCRIPT, ["--command-permissions", "cat", "--secure-output", sink]);
    const gate = await openedToRead(path.join(work, "gate"));
    try {
      swap();
      writeSync(gate, "go\n");
    } finally {
      closeSync(gate);
    }
    return run;
  }

  it("its own directory, now a link: nothing is created where the link leads, and the run says why", async () => {
    const out = path.join(base, "a", "out");
    mkdirSync(out, { recursive: true, mode: 0o700 });
    const sink = path.join(out, "secure.log");
    const r = await runSwapping(sink, () => {
      renameSync(out, `${out}-old`);
      symlinkSync(path.join(elsewhere, "out"), out);
    });
    expect(filesUnder(elsewhere), "files where the link leads").toEqual({});
    expect(filesUnder(`${out}-old`), "files in the directory tacit found").toEqual({});
    expect({ code: r.code, stdout: r.stdout }, r.stderr).toEqual({ code: 0, stdout: "secret: Classified(***)\n" });
    expect(r.stderr).toContain(`tacit: the secure output ${sink} is no longer where tacit first found its directory: ${out} is now a symbolic link.`);
    expect(r.stderr).toContain("nothing was written, nor created, there. Keep the secure output's directory out of every run's allowed roots");
    expect(r.stderr).not.toContain(canary);
  }, 60_000);

  it("a directory further up, now a link to a tree of the same shape: nothing is created there either", async () => {
    const a = path.join(base, "a");
    const out = path.join(a, "out");
    mkdirSync(out, { recursive: true, mode: 0o700 });
    const sink = path.join(out, "secure.log");
    const r = await runSwapping(sink, () => {
      renameSync(a, `${a}-old`);
      symlinkSync(elsewhere, a);
    });
    expect(filesUnder(elsewhere), "files where the link leads").toEqual({});
    expect(filesUnder(`${a}-old`), "files in the directory tacit found").toEqual({});
    expect({ code: r.code, stdout: r.stdout }, r.stderr).toEqual({ code: 0, stdout: "secret: Classified(***)\n" });
    expect(r.stderr).toContain(
      `tacit: the secure output ${sink} is no longer where tacit first found its directory: ${out} now leads to ${path.join(elsewhere, "out")}.`,
    );
    expect(r.stderr).not.toContain(canary);
  }, 60_000);

  it("its own directory, missing when the run began, a link when tacit makes it: nothing is created where the link leads", async () => {
    mkdirSync(path.join(base, "a"), { mode: 0o700 });
    const out = path.join(base, "a", "out");
    const sink = path.join(out, "secure.log");
    const r = await runSwapping(sink, () => symlinkSync(path.join(elsewhere, "out"), out));
    expect(filesUnder(elsewhere), "files where the link leads").toEqual({});
    expect({ code: r.code, stdout: r.stdout }, r.stderr).toEqual({ code: 0, stdout: "secret: Classified(***)\n" });
    expect(r.stderr).toContain(`tacit: the secure output ${sink} is no longer where tacit first found its directory: ${out} is now a symbolic link.`);
    expect(r.stderr).not.toContain(canary);
  }, 60_000);

  it("its own directory and the one above, removed during the run (no link): made again, owner-only, and the plaintext lands there", async () => {
    const a = path.join(base, "a");
    const out = path.join(a, "out");
    mkdirSync(out, { recursive: true, mode: 0o700 });
    const sink = path.join(out, "secure.log");
    const r = await runSwapping(sink, () => rmSync(a, { recursive: true }));
    expect({ code: r.code, stdout: r.stdout }, r.stderr).toEqual({ code: 0, stdout: "secret: Classified(***)\n" });
    expect(readFileSync(sink, "utf8")).toBe(`secret: ${canary}\n`);
    expect([statSync(a).mode & 0o777, statSync(out).mode & 0o777, statSync(sink).mode & 0o777]).toEqual([0o700, 0o700, 0o600]);
    expect(filesUnder(elsewhere)).toEqual({});
  }, 60_000);

  it("left alone, the sink gets the plaintext in the directory tacit found (the gate itself changes nothing)", async () => {
    const out = path.join(base, "a", "out");
    mkdirSync(out, { recursive: true, mode: 0o700 });
    const sink = path.join(out, "secure.log");
    const r = await runSwapping(sink, () => undefined);
    expect({ code: r.code, stdout: r.stdout }, r.stderr).toEqual({ code: 0, stdout: "secret: Classified(***)\n" });
    expect(existsSync(sink)).toBe(true);
    expect(readFileSync(sink, "utf8")).toBe(`secret: ${canary}\n`);
  }, 60_000);
});
