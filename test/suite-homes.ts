// The suite's tacit homes (vitest globalSetup). tacit keeps what outlives a run in its home
// (runner/tacit-home.ts: own-files.json, approvals.json, the audit signing key and the logs'
// anchors, the type-check cache): $TACIT_HOME, else $XDG_CONFIG_HOME/tacit, else
// ~/.config/tacit. The suite runs the real CLI hundreds of times, and a run left to that default
// changed the real user's configuration: test/files/sink-kinds's `--secure-output /dev/null` was
// remembered in the real own-files.json, and the user's later confined commands failed.
//
// So every test file runs with a home of its own (test/file-home.ts), made here in a directory
// of the suite's outside the temporary directory (tests use temp dirs, and /tmp itself, as
// allowed roots; a home inside a root would be a home the test's scripts are refused). This
// module also notes the real homes before the suite and looks at them after it: what changed is
// reported, and with TACIT_TEST_REAL_HOME=fail it fails the run. Only a warning by default: any
// other tacit run of this user at the same time (a second checkout's suite, a benchmark, the
// person) writes there too, and nothing here can tell its writes from the suite's. The guard
// that can tell is in test/helpers.ts (childEnv): it refuses to start a tacit whose home would
// be a real one, and fails the test that tried.

import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { tacitHomes } from "../runner/tacit-home.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The directory the test files' tacit homes are made in (removed after the suite). */
    testHomesDir: string;
    /** tacit's homes of this user's runs outside the suite: no test's run may keep its state there. */
    realTacitHomes: string[];
  }
}

/** Where the homes go: /var/tmp (kept off the temp directory tests use as roots) where it can be written. */
function homesBase(): string {
  for (const base of ["/var/tmp", tmpdir()]) {
    try {
      return mkdtempSync(path.join(realpathSync(base), "tacit-test-homes-"));
    } catch {
      // Not there, or not writable: the next.
    }
  }
  throw new Error(`the test suite cannot make a directory for its tacit homes in /var/tmp or ${tmpdir()}`);
}

interface EntryState {
  kind: "file" | "directory" | "link" | "other";
  mode: number;
  size: number;
  mtimeMs: number;
  /** sha256 of a file's content or a link's target. */
  digest: string;
}

/** Every entry under `root` by its relative path ("" for root itself); empty where root does not exist. */
function snapshot(root: string): Map<string, EntryState> {
  const entries = new Map<string, EntryState>();
  const visit = (relative: string): void => {
    const full = path.join(root, relative);
    let stat;
    try {
      stat = lstatSync(full);
    } catch {
      return; // Gone while listed.
    }
    const kind = stat.isFile() ? "file" : stat.isDirectory() ? "directory" : stat.isSymbolicLink() ? "link" : "other";
    let digest = "";
    try {
      if (kind === "file") digest = createHash("sha256").update(readFileSync(full)).digest("hex");
    } catch {
      digest = "unreadable";
    }
    entries.set(relative, { kind, mode: stat.mode, size: stat.size, mtimeMs: stat.mtimeMs, digest });
    if (kind === "directory") for (const name of readdirSync(full)) visit(path.join(relative, name));
  };
  if (existsSync(root) || isLink(root)) visit("");
  return entries;
}

function isLink(file: string): boolean {
  try {
    return lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

/** What differs between two snapshots of `root`, one line each. A directory's mtime and size follow its entries, which are compared themselves. */
function changes(root: string, before: Map<string, EntryState>, after: Map<string, EntryState>): string[] {
  const lines: string[] = [];
  const name = (relative: string) => (relative === "" ? root : path.join(root, relative));
  for (const [relative, was] of before) {
    const now = after.get(relative);
    if (now === undefined) {
      lines.push(`removed ${name(relative)}`);
      continue;
    }
    const what: string[] = [];
    if (now.kind !== was.kind) what.push(`${was.kind} → ${now.kind}`);
    if (now.mode !== was.mode) what.push(`mode ${(was.mode & 0o7777).toString(8)} → ${(now.mode & 0o7777).toString(8)}`);
    if (now.kind !== "directory" && (now.digest !== was.digest || now.size !== was.size)) what.push("content");
    if (now.kind !== "directory" && now.mtimeMs !== was.mtimeMs) what.push("mtime");
    if (what.length > 0) lines.push(`changed ${name(relative)} (${what.join(", ")})`);
  }
  for (const relative of after.keys()) if (!before.has(relative)) lines.push(`created ${name(relative)}`);
  return lines;
}

export default function setup(project: TestProject): () => void {
  // The machine's extra CA bundle (NODE_EXTRA_CA_CERTS) is parsed by every Node that starts with
  // it, about 40 ms of CPU each where it names the system bundle, and the suite starts thousands:
  // vitest's workers, each test's tacit, its parse probe. No test needs it (they speak HTTP to
  // 127.0.0.1, and the HTTPS tests give the runs their own bundle), so the suite drops it here,
  // before the workers start, and they and what they spawn start without it.
  delete process.env.NODE_EXTRA_CA_CERTS;
  const homesDir = homesBase();
  // Every place a run of this user keeps its home when not told otherwise: this environment's
  // TACIT_HOME if the suite was started with one, XDG_CONFIG_HOME/tacit, ~/.config/tacit by HOME
  // and by the password database.
  const realHomes = tacitHomes(process.env);
  const before = new Map(realHomes.map((home) => [home, snapshot(home)]));
  project.provide("testHomesDir", homesDir);
  project.provide("realTacitHomes", realHomes);

  return () => {
    rmSync(homesDir, { recursive: true, force: true });
    const found = realHomes.flatMap((home) => changes(home, before.get(home)!, snapshot(home)));
    if (found.length === 0) return;
    const report =
      `tacit's real home changed while the test suite ran:\n  ${found.join("\n  ")}\n` +
      "A test may have run tacit with the home of the person running the suite: every test file has a home of its own " +
      "(test/file-home.ts); a test that sets TACIT_HOME, XDG_CONFIG_HOME or HOME for a run must point it at a temp dir, " +
      "and one that starts tacit without test/helpers.ts must pass childEnv() (an MCP SDK transport without `env` drops TACIT_HOME). " +
      "Another tacit run of this user at the same time (another checkout's tests, a benchmark, a person) writes there too.";
    if (process.env.TACIT_TEST_REAL_HOME === "fail") {
      // vitest reports an error thrown here but still exits with 0.
      console.error(`\n${report}\nThe run fails on it (TACIT_TEST_REAL_HOME=fail).\n`);
      process.exitCode = 1;
      return;
    }
    console.warn(`\n${report}\nSet TACIT_TEST_REAL_HOME=fail, where nothing else runs tacit as this user, to fail the run on it.\n`);
  };
}
