// The kernel's process file system is refused to every file capability, whatever the allowed
// roots say. With `--allowed-roots /` (or a root holding a procfs mount), a script read
// /proc/self/environ, which the host opens as itself: tacit's environment, the LLM API key
// among it. And /proc/<pid>/fd/N (tacit's open files), /proc/<pid>/mem, and wrote
// /proc/self/... Here the environment holds a canary that must never reach the script.

import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, runScript, tacitBin } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, makeCanary, realTempDir } from "./fixtures.js";

let base: string;
let cleanup: () => void;
const canary = makeCanary();
const env = { TACIT_TEST_PROC_CANARY: canary };

beforeAll(() => {
  ({ dir: base, cleanup } = realTempDir("tacit-files-proc-"));
  mkdirSync(path.join(base, "project"));
  // Links inside the project into /proc: followed, they would lead to the host's own files.
  symlinkSync("/proc/self/environ", path.join(base, "project", "environ.txt"));
  symlinkSync("/proc/self", path.join(base, "project", "self"));
});
afterAll(() => cleanup());

const REFUSAL = /refused: this is the kernel's process file system \(procfs, mounted at \/proc\); scripts can neither read nor write anything there.*LLM API key.*Work with other files/;

describe("procfs through a file capability", () => {
  it("every read, write and search of /proc is refused with --allowed-roots /, links into it included; the host's environment never shows", async () => {
    const project = path.join(base, "project");
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem("/", (fs) => {
  attempt("read environ", () => fs.access("/proc/self/environ").read());
  attempt("readBytes environ", () => new TextDecoder().decode(fs.access("/proc/self/environ").readBytes()));
  attempt("lines environ", () => { const seen: string[] = []; fs.access("/proc/self/environ").forEachLine((l) => seen.push(l)); return seen.join("|"); });
  attempt("grep environ", () => fs.grep("/proc/self/environ", "TACIT_TEST_PROC_CANARY"));
  attempt("own open files", () => fs.access("/proc/self/fd").children().map((e) => e.path));
  attempt("memory", () => fs.access("/proc/self/mem").size);
  attempt("status", () => fs.access("/proc/self/status").read());
  attempt("pid 1", () => fs.access("/proc/1/cmdline").exists);
  attempt("write", () => fs.access("/proc/self/comm").write("owned"));
  attempt("through a link", () => fs.access(${lit(path.join(project, "environ.txt"))}).read());
  attempt("through a dir link", () => fs.access(${lit(path.join(project, "self", "environ"))}).read());
  attempt("grepRecursive of /proc", () => fs.grepRecursive("/proc/self", "TACIT_TEST_PROC_CANARY"));
  attempt("grepRecursive with a link", () => fs.grepRecursive(${lit(project)}, "TACIT_TEST_PROC_CANARY"));
});
`;
    const run = await runScript(script, ["--allowed-roots", "/"], { cwd: base, env });
    expect(run.stdout + run.stderr, "the host's environment reached the script").not.toContain(canary);
    expect(run.code, run.stderr).toBe(0);
    const found = attempts(run.stdout);
    const refused = ["read environ", "readBytes environ", "lines environ", "grep environ", "own open files", "memory", "status", "pid 1", "write", "through a link", "through a dir link", "grepRecursive of /proc"];
    expectRefused(found, refused, REFUSAL);
    // The search skips the link into /proc, as it skips classified files: nothing found.
    expect(attemptOf(found, "grepRecursive with a link")).toEqual({ status: "ok", value: [] });
  }, 60_000);

  const canUnshare = spawnSync("unshare", ["-r", "-m", "true"]).status === 0;

  it.skipIf(!canUnshare)("a procfs mounted inside the default root (found in the mount table) is refused, and searches and walks do not enter it", async () => {
    // tacit runs in a mount namespace of its own where /proc is also mounted at tree/proc.
    const tree = path.join(base, "tree");
    mkdirSync(path.join(tree, "proc"), { recursive: true });
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read", () => fs.access("proc/self/environ").read());
  attempt("write", () => fs.access("proc/self/comm").write("owned"));
  attempt("grepRecursive", () => fs.grepRecursive(".", "TACIT_TEST_PROC_CANARY"));
  attempt("find", () => fs.find(".", "environ"));
  attempt("walk", () => fs.access(".").walk().map((e) => e.path));
});
`;
    const r = await new Promise<CliResult>((resolve, reject) => {
      const child = spawn(
        "unshare",
        ["-r", "-m", "sh", "-c", `mount --bind /proc ${JSON.stringify(path.join(tree, "proc"))} && exec "$0" "$1" run -`, process.execPath, tacitBin],
        { cwd: tree, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(script);
    });
    expect(r.stdout + r.stderr, "the host's environment reached the script").not.toContain(canary);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expectRefused(found, ["read", "write"], new RegExp(`procfs, mounted at ${path.join(tree, "proc").replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}`));
    expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: [] });
    expect(attemptOf(found, "find")).toEqual({ status: "ok", value: [] });
    // The mount point is listed; nothing below it is.
    expect(attemptOf(found, "walk")).toEqual({ status: "ok", value: [path.join(tree, "proc")] });
  }, 60_000);
});
