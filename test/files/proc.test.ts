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
/** The refusal of a path whose way a symbolic link leads into /proc: what, why, what to do instead. */
const LINK_REFUSAL =
  /refused: a symbolic link on the way leads into the kernel's process file system \(procfs, mounted at \/proc\), and it was not followed; scripts can neither read nor write anything there.*LLM API key.*Work with other files; to learn about a process, run a command that reports it/;

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
    const refused = ["read environ", "readBytes environ", "lines environ", "grep environ", "own open files", "memory", "status", "pid 1", "write", "grepRecursive of /proc"];
    expectRefused(found, refused, REFUSAL);
    expectRefused(found, ["through a link", "through a dir link"], LINK_REFUSAL);
    // The search skips the link into /proc, as it skips classified files: nothing found.
    expect(attemptOf(found, "grepRecursive with a link")).toEqual({ status: "ok", value: [] });
  }, 60_000);

  it("a link into /proc is refused before anything there is looked at, with the same words whatever process it names, and no scope opens there", async () => {
    // Followed, these told a script about processes and about tacit: /proc/1/cwd "permission
    // denied" (another user's process), /proc/2/exe "no such file or directory" (a kernel thread),
    // /proc/<no such pid>/cwd "outside the scope", /proc/self/fd/N the name of the tacit file it is
    // (the refusal named "the secure output file"), and requestFileSystem("/proc/self/cwd") opened a
    // scope, as a /proc/<pid>/cwd did wherever that process worked inside the allowed roots.
    const links = path.join(base, "links");
    const elsewhere = path.join(base, "elsewhere");
    mkdirSync(links);
    mkdirSync(elsewhere);
    const missingPid = 4_000_000; // above pid_max's ceiling (2^22): no such process
    const targets: Record<string, string> = {
      init: "/proc/1/cwd",
      kernel: "/proc/2/exe",
      missing: `/proc/${missingPid}/cwd`,
      own: "/proc/self/cwd",
      fd: "/proc/self/fd/1",
      root: "/proc/1/root/etc",
    };
    for (const [name, target] of Object.entries(targets)) symlinkSync(target, path.join(links, name));
    // Through "/": no link in /proc is named, but the way passes into it after one.
    symlinkSync("/", path.join(links, "slash"));
    // Through a link outside the scope that leads on into /proc: refused as a link out of the scope.
    symlinkSync("/proc/self/environ", path.join(elsewhere, "environ"));
    symlinkSync(path.join(elsewhere, "environ"), path.join(links, "chain"));
    const named = [...Object.keys(targets), "slash/proc/self/environ", "slash/proc/cpuinfo", "chain"];
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(${lit(links)}, (fs) => {
  for (const name of ${JSON.stringify(named)}) {
    attempt("exists " + name, () => fs.access(name).exists);
    attempt("read " + name, () => fs.access(name).read());
    attempt("below " + name, () => fs.access(name + "/x").write("x"));
  }
  attempt("listed", () => fs.access(".").children().map((e) => e.name));
});
for (const root of ["/proc/self/cwd", "/proc/1/cwd", ${lit(`/proc/${missingPid}/cwd`)}, ${lit(path.join(links, "own"))}]) {
  attempt("scope " + root, () => requestFileSystem(root, (fs) => fs.root));
}
`;
    const r = await runScript(script, ["--allowed-roots", "/"], { cwd: base, env });
    expect(r.stdout + r.stderr, "the host's environment reached the script").not.toContain(canary);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    for (const name of named) {
      for (const what of ["exists", "read", "below"]) {
        const attempt = attemptOf(found, `${what} ${name}`);
        const requested = path.join(links, what === "below" ? `${name}/x` : name);
        if (name === "chain") {
          // Out of the scope first: refused as any link out of it, whatever lies out there (a way on into /proc included).
          expect(attempt, `${what} ${name}`).toEqual({
            status: "SecurityError",
            value: `${requested}: resolves (through a symbolic link) to a place outside this file system scope (${links}); links out of the scope are not followed.`,
          });
          continue;
        }
        expect(attempt.status, `${what} ${name}: ${JSON.stringify(attempt.value)}`).toBe("SecurityError");
        // Word for word the same, but the path the script gave: nothing of the process or the file shows.
        expect(String(attempt.value).replace(requested, "<path>"), `${what} ${name}`).toMatch(new RegExp(`^<path>: ${LINK_REFUSAL.source} \\(requestExecPermission\\), if the operator permits one\\.$`));
      }
    }
    // Every link leads out of the scope, into /proc or to "/": a listing leaves them out, without a word.
    expect(attemptOf(found, "listed")).toEqual({ status: "ok", value: [] });
    expect(r.stderr).not.toContain("warning");
    for (const root of ["/proc/self/cwd", "/proc/1/cwd", `/proc/${missingPid}/cwd`]) {
      expectRefused(found, [`scope ${root}`], new RegExp(`^requestFileSystem\\("${root.replace(/[/]/g, "\\/")}"\\): ${REFUSAL.source}`));
    }
    expectRefused(found, [`scope ${path.join(links, "own")}`], LINK_REFUSAL);
  }, 60_000);

  it("a classified pattern that names a place through a link into /proc is taken as the operator wrote it: the run starts", async () => {
    // The operator's own patterns are resolved for matching only, as before; refused as a script's
    // path is, "/proc/self/environ" (self is a link) and "/dev/stdin" (a link to /proc/self/fd/0)
    // stopped every run with an internal error.
    const r = await runScript(`println("ran");`, ["--quiet", "--classified-paths", ".env,/proc/self/environ,/dev/stdin"], { cwd: base, env });
    expect(r.stderr).not.toContain("internal error");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("ran\n");
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
