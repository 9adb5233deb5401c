// A directory on the way to the --record file swapped for a link between the moment tacit checks
// the record directory (runner/record-directory.ts, prepareRecordDirectory) and the moment it
// opens the record file in it. The open was by path, and followed the link: the record, with the
// script's code and output, was created in the directory the link's maker chose. Whoever can
// write a directory on the way (a confined command of another run whose roots hold it) could.
//
// This test is probabilistic: nothing tacit reads between the check and the open can hold it there
// (the note it reads in its home is opened O_NONBLOCK and refused unless a regular file; the rest
// are stats, a mkdir and a rename). So the test swaps the moment tacit has written its note of the
// directory, the last step of the check (seen with fs.watch on the notes' directory, which only a
// test can see), and the script prints 8 MiB, which tacit turns into the record's line (JSON, then
// terminal-safe) after the check and before the open: a window of milliseconds. Against the code
// before the fix the swap landed in it in 50 of 50 runs, and the record was created where the link
// led every time; with 0 bytes printed, in 3 of 20. A run whose swap came after the open (the
// record written in the real directory) is tried again, up to MAX_ATTEMPTS times; at least one must
// have hit the window, and none may have written anything where the link leads.

import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync, watch } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { recordDirectoryNote } from "../../runner/record-directory.js";
import { freshTacitHome, runCli, unchecked } from "../helpers.js";
import { filesUnder, makeCanary, realTempDir } from "../files/fixtures.js";

const MAX_ATTEMPTS = 10;
const PRINTED_BYTES = 8 * 1024 * 1024;

interface Attempt {
  /** The swap was done (tacit wrote its note). */
  swapped: boolean;
  /** tacit refused to record: the swap came before the open. */
  refused: boolean;
  stderr: string;
  /** What lies where the link leads, after the run. */
  outside: Record<string, string>;
}

/**
 * One run of `tacit run --record <base>/a/rec`, with `swap` (given the record directory's path and
 * `<base>/elsewhere`, a tree of the same shape) done as soon as tacit has noted the directory.
 */
async function attempt(swap: (a: string, rec: string, elsewhere: string) => void, canary: string): Promise<Attempt> {
  const { dir: base, cleanup } = realTempDir("tacit-record-swap-");
  const { home, cleanup: removeHome } = freshTacitHome();
  try {
    const work = path.join(base, "work");
    const a = path.join(base, "a");
    const rec = path.join(a, "rec");
    const elsewhere = path.join(base, "elsewhere");
    mkdirSync(work);
    mkdirSync(a, { mode: 0o700 });
    mkdirSync(path.join(elsewhere, "rec"), { recursive: true, mode: 0o700 });
    const env = { TACIT_HOME: home, TACIT_TYPECHECK_CACHE: "off" };
    const note = recordDirectoryNote(rec, env);
    // Made as tacit makes them (owner-only), so that there is a directory to watch before the run.
    mkdirSync(path.dirname(note), { recursive: true, mode: 0o700 });
    let swapped = false;
    const watcher = watch(path.dirname(note), (_event, name) => {
      if (swapped || name !== path.basename(note) || !existsSync(note)) return;
      swapped = true;
      swap(a, rec, elsewhere);
    });
    let r;
    try {
      const script = `// ${canary}\nprintln("x".repeat(${PRINTED_BYTES}));\n`;
      r = await runCli(unchecked(["run", "--record", rec, "-"]), { cwd: work, input: script, env });
    } finally {
      watcher.close();
    }
    expect(r.code, r.stderr).toBe(0);
    return { swapped, refused: /--record: .* nothing was recorded/.test(r.stderr), stderr: r.stderr, outside: filesUnder(elsewhere) };
  } finally {
    cleanup();
    removeHome();
  }
}

/** Attempts until one hits the window (tacit refused), at most MAX_ATTEMPTS; each must leave nothing where the link leads. */
async function attack(swap: (a: string, rec: string, elsewhere: string) => void): Promise<Attempt> {
  const canary = makeCanary();
  for (let i = 1; ; i++) {
    const result = await attempt(swap, canary);
    expect(result.outside, `attempt ${i}: files where the link leads`).toEqual({});
    expect(result.stderr).not.toContain(canary);
    if (result.refused || i === MAX_ATTEMPTS) return result;
  }
}

describe("a directory on the way to the --record file, swapped for a link as tacit opens it", () => {
  it("a directory above the record directory: the record is not created where the link leads, and the run says why", async () => {
    const hit = await attack((a, _rec, elsewhere) => {
      renameSync(a, `${a}-old`);
      symlinkSync(elsewhere, a);
    });
    expect(hit.swapped).toBe(true);
    expect(hit.refused, `no attempt of ${MAX_ATTEMPTS} swapped before tacit opened the record file`).toBe(true);
    expect(hit.stderr).toMatch(/tacit: --record: \S+\/a\/rec\/tacit-record\.jsonl is no longer in the directory tacit checked \(\S+\/a\/rec\): \S+\/a\/rec now leads to \S+\/elsewhere\/rec\./);
    expect(hit.stderr).toContain("Keep the record directory out of every run's allowed roots, put the directory back, and run again; nothing was recorded");
  }, 180_000);

  it("the record directory itself: the link is not followed either", async () => {
    const hit = await attack((_a, rec, elsewhere) => {
      renameSync(rec, `${rec}-old`);
      symlinkSync(path.join(elsewhere, "rec"), rec);
    });
    expect(hit.swapped).toBe(true);
    expect(hit.refused, `no attempt of ${MAX_ATTEMPTS} swapped before tacit opened the record file`).toBe(true);
    expect(hit.stderr).toMatch(/tacit: --record: \S+\/a\/rec\/tacit-record\.jsonl is no longer in the directory tacit checked \(\S+\/a\/rec\): \S+\/a\/rec is now a symbolic link\./);
  }, 180_000);

  // Not a race: between two runs. A record directory tacit made, deleted with the directory above
  // it (by the person, say), and that one replaced by a link: tacit made the record directory anew
  // by its path, where the link led, and recorded there. It is made anew only where tacit made it.
  it("deleted since tacit made it, with a directory above it now a link: it is not made again where the link leads", async () => {
    const { dir: base, cleanup } = realTempDir("tacit-record-remade-");
    const { home, cleanup: removeHome } = freshTacitHome();
    try {
      const work = path.join(base, "work");
      const rec = path.join(base, "a", "b", "rec");
      const elsewhere = path.join(base, "elsewhere");
      mkdirSync(work);
      mkdirSync(path.join(base, "a", "b"), { recursive: true, mode: 0o700 });
      mkdirSync(elsewhere, { mode: 0o700 });
      const env = { TACIT_HOME: home, TACIT_TYPECHECK_CACHE: "off" };
      const first = await runCli(unchecked(["run", "--record", rec, "-"]), { cwd: work, input: 'println("first");\n', env });
      expect(first.code, first.stderr).toBe(0);
      expect(readFileSync(path.join(rec, "tacit-record.jsonl"), "utf8")).toContain('"stdout":"first\\n"');
      renameSync(path.join(base, "a", "b"), path.join(base, "a", "b-old"));
      symlinkSync(elsewhere, path.join(base, "a", "b"));
      const canary = makeCanary();
      const second = await runCli(unchecked(["run", "--record", rec, "-"]), { cwd: work, input: `println(${JSON.stringify(canary)});\n`, env });
      expect(filesUnder(elsewhere), "files where the link leads").toEqual({});
      expect(readdirSync(elsewhere), "entries where the link leads").toEqual([]);
      expect({ code: second.code, stdout: second.stdout }, second.stderr).toEqual({ code: 0, stdout: `${canary}\n` });
      expect(second.stderr).toContain(
        `tacit: --record: the record directory ${rec} is missing, and its path now leads to ${path.join(elsewhere, "rec")}, not to ${rec}, where tacit made it`,
      );
      expect(second.stderr).toContain("Put the directory back, or give --record another directory");
      // Put back (the link gone, the old directory with it): made again where it was, and recorded into.
      unlinkSync(path.join(base, "a", "b"));
      rmSync(path.join(base, "a", "b-old"), { recursive: true });
      const third = await runCli(unchecked(["run", "--record", rec, "-"]), { cwd: work, input: 'println("third");\n', env });
      expect(third.code, third.stderr).toBe(0);
      expect(third.stderr).toBe("");
      expect(readFileSync(path.join(rec, "tacit-record.jsonl"), "utf8")).toContain('"stdout":"third\\n"');
    } finally {
      cleanup();
      removeHome();
    }
  }, 120_000);
});
