// tacit's own files are out of every script's reach, even inside the allowed roots: the
// secure output (plaintext secrets), tacit's home (remembered approvals, the audit signing
// key) and the audit log. A script that reached them could read secrets back, grant itself
// approvals, or forge the log. Every route is tried; the secret never shows, nothing changes.
// And tacit's own code, which scripts may read but not change.

import { spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isWithin } from "../../runner/fs/containment.js";
import { tacitLaunchFiles } from "../../runner/launch-files.js";
import { denoExecutable, tscExecutable } from "../../runner/paths.js";
import { type CliResult, collectedRun, connectServe, installTacitIn, repoRoot, runCli, runScript } from "../helpers.js";
import { commandLineOf, descendantsOf } from "../processes.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, makeCanary, realTempDir, writeTree } from "./fixtures.js";

// Runs are --no-check, as test/helpers.ts's unchecked() makes them elsewhere in this suite: the
// type check is for the agent's benefit, not the boundary, and each check is a tsc of its own.
// Left checked: the runs of an installed tacit or another Node (their next start is the point,
// whole), and the runs whose own type checks working in the allowed root are part of the claim.

describe("the secure output file inside the allowed root", () => {
  let root: string;
  let cleanup: () => void;
  const canary = makeCanary();
  const sink = () => path.join(root, "secure.log");

  beforeAll(async () => {
    ({ dir: root, cleanup } = realTempDir("tacit-protected-"));
    writeFileSync(path.join(root, ".env"), `TOKEN=${canary}\n`);
    symlinkSync("secure.log", path.join(root, "link-to-sink"));
    const first = await runScript('requestFileSystem(".", (fs) => println(fs.readClassified(".env")));', ["--no-check", "--secure-output", "secure.log"], { cwd: root });
    expect(first.code, first.stderr).toBe(0);
    expect(readFileSync(sink(), "utf8")).toContain(canary);
  }, 30_000);
  afterAll(() => cleanup());

  it("is refused to every read, write and search; the secret never reaches the script; only tacit writes to it", async () => {
    const before = readFileSync(sink(), "utf8");
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read", () => fs.access("secure.log").read());
  attempt("readBytes", () => fs.access("secure.log").readBytes().length);
  attempt("size", () => fs.access("secure.log").size);
  attempt("lines", () => { const seen: string[] = []; fs.access("secure.log").forEachLine((l) => seen.push(l)); return seen; });
  attempt("grep", () => fs.grep("secure.log", "TOKEN"));
  attempt("through a link", () => fs.access("link-to-sink").read());
  attempt("readClassified", () => String(fs.readClassified("secure.log")));
  attempt("write", () => fs.access("secure.log").write("overwritten"));
  attempt("append", () => fs.access("secure.log").append("more"));
  attempt("delete", () => fs.access("secure.log").delete());
  attempt("grepRecursive", () => fs.grepRecursive(".", ${lit(canary.slice(0, 12))}));
});
`;
    const r = await runScript(script, ["--no-check", "--secure-output", "secure.log"], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(canary);
    const found = attempts(r.stdout);
    for (const label of ["read", "readBytes", "size", "lines", "grep", "through a link", "readClassified", "write", "append", "delete"]) {
      const attempt = attemptOf(found, label);
      expect(attempt.status, label).toBe("SecurityError");
      expect(String(attempt.value), label).toContain("the secure output file (--secure-output, which holds plaintext)");
    }
    // The search skips it without opening it (and .env is classified): nothing found.
    expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: [] });
    // Only tacit wrote to it: the run's own printed output, appended (that is the sink's job).
    expect(readFileSync(sink(), "utf8")).toBe(before + r.stdout);
    // The operator is told where it would be safer.
    expect(r.stderr).toContain("lies inside the allowed roots");
  }, 30_000);
});

describe("tacit's home and the audit log inside the allowed root", () => {
  let root: string;
  let cleanup: () => void;
  let env: Record<string, string>;

  beforeAll(async () => {
    ({ dir: root, cleanup } = realTempDir("tacit-protected-home-"));
    env = { TACIT_HOME: path.join(root, "home") };
    // A first audited run creates the signing key and the log.
    const first = await runScript('println("first")', ["--no-check", "--audit-log", "audit.jsonl"], { cwd: root, env });
    expect(first.code, first.stderr).toBe(0);
    expect(existsSync(path.join(root, "home", "audit-key.json"))).toBe(true);
  }, 30_000);
  afterAll(() => cleanup());

  it("the signing key, the approvals and the log are refused; no approval appears; the log still verifies", async () => {
    const key = readFileSync(path.join(root, "home", "audit-key.json"), "utf8");
    const privateKey = (JSON.parse(key) as { privateKey: string }).privateKey;
    const forged = JSON.stringify({ version: 1, approvals: [{ pattern: "exec git push *", grantedAt: "2026-12-01T00:00:00.000Z", expiresAt: "2030-01-01T00:00:00.000Z", via: "terminal" }] });
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read key", () => fs.access("home/audit-key.json").read());
  attempt("classified key", () => String(fs.readClassified("home/audit-key.json")));
  attempt("list home", () => fs.access("home").children().length);
  attempt("grant", () => fs.access("home/approvals.json").write(${lit(forged)}));
  attempt("grant classified", () => fs.writeClassified("home/approvals.json", classify(${lit(forged)})));
  attempt("mkdir", () => fs.access("home/sub").mkdir());
  attempt("append to log", () => fs.access("audit.jsonl").append("{}\\n"));
  attempt("take the lock", () => fs.access("audit.jsonl.lock").write("1"));
  attempt("search", () => fs.grepRecursive(".", ${lit(privateKey.slice(0, 16))}));
});
requestExecPermission(["ls"], (proc) => attempt("command in home", () => proc.exec("ls", [], { cwd: "home" }).stdout));
`;
    const r = await runScript(script, ["--no-check", "--audit-log", "audit.jsonl", "--command-permissions", "ls"], { cwd: root, env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(privateKey);
    const found = attempts(r.stdout);
    for (const label of ["read key", "classified key", "list home", "grant", "grant classified", "mkdir"]) {
      expect(attemptOf(found, label).status, label).toBe("SecurityError");
      expect(String(attemptOf(found, label).value), label).toContain("tacit's home");
    }
    for (const label of ["append to log", "take the lock", "command in home"]) expect(attemptOf(found, label).status, label).toBe("SecurityError");
    expect(attemptOf(found, "search")).toEqual({ status: "ok", value: [] });
    expect(existsSync(path.join(root, "home", "approvals.json"))).toBe(false);
    expect(existsSync(path.join(root, "home", "sub"))).toBe(false);
    expect(readFileSync(path.join(root, "home", "audit-key.json"), "utf8")).toBe(key);
    const verify = await runCli(["audit", "verify", "audit.jsonl"], { cwd: root, env });
    expect(verify.code, verify.stdout).toBe(0);
  }, 30_000);
});

describe("tacit's files, on whichever side of a scope's root they lie", () => {
  // A scope's paths are tried only on the protected paths that lie inside its root or that its
  // root lies inside (FileSystemExecutor.protectedAround): each other one is no path's of the
  // scope. A scope holding the secure output, one named through a link to it, one above it and
  // one opened inside tacit's home are each refused them, after an ordinary read in the scope.
  it("refuses the secure output and tacit's home to scopes above, holding, through a link and inside them", async () => {
    const { dir: root, cleanup } = realTempDir("tacit-protected-around-");
    try {
      const canary = makeCanary();
      const env = { TACIT_HOME: path.join(root, "home") };
      writeTree(root, { ".env": `TOKEN=${canary}\n`, "deep/sub/plain.txt": "plain\n", "home/notes/plain.txt": "plain\n", via: { symlink: "deep" } });
      const args = ["--secure-output", "deep/sub/secure.log"];
      const first = await runScript('requestFileSystem(".", (fs) => println(fs.readClassified(".env")));', ["--no-check", ...args], { cwd: root, env });
      expect(first.code, first.stderr).toBe(0);
      const sink = path.join(root, "deep/sub/secure.log");
      expect(readFileSync(sink, "utf8")).toContain(canary);
      const before = readFileSync(sink, "utf8");
      const script = `${ATTEMPT_PRELUDE}
const scopes = [["above", ".", "deep/sub/"], ["holding", "deep/sub", ""], ["through a link", "via/sub", ""], ["inside the home", "home/notes", ""]];
for (const [label, scopeRoot, below] of scopes) {
  requestFileSystem(scopeRoot, (fs) => {
    attempt(label + ": ordinary", () => fs.access(below + "plain.txt").read());
    attempt(label + ": secure output", () => fs.access(below + "secure.log").read());
    attempt(label + ": ordinary again", () => fs.access(below + "plain.txt").read());
  });
}
`;
      const r = await runScript(script, ["--no-check", ...args], { cwd: root, env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(canary);
      const found = attempts(r.stdout);
      for (const label of ["above", "holding", "through a link"]) {
        expect(attemptOf(found, `${label}: ordinary`)).toEqual({ status: "ok", value: "plain\n" });
        expect(attemptOf(found, `${label}: ordinary again`)).toEqual({ status: "ok", value: "plain\n" });
        expectRefused(found, [`${label}: secure output`], /the secure output file/);
      }
      expectRefused(found, ["inside the home: ordinary", "inside the home: ordinary again"], /tacit's home/);
      expect(attemptOf(found, "inside the home: secure output").status).not.toBe("ok");
      expect(readFileSync(sink, "utf8")).toBe(before + r.stdout);
    } finally {
      cleanup();
    }
  }, 30_000);
});

describe("the config file inside the allowed root", () => {
  it("is refused to scripts, so the LLM key in it stays in the host; tacit warns and names the environment variable", async () => {
    const { dir: root, cleanup } = realTempDir("tacit-protected-config-");
    try {
      const apiKey = `sk-${makeCanary()}`;
      writeFileSync(path.join(root, "tacit.json"), JSON.stringify({ libraryConfig: { llm: { baseUrl: "http://127.0.0.1:9/v1", apiKey, model: "m" } } }));
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read config", () => fs.access("tacit.json").read());
  attempt("search config", () => fs.grepRecursive(".", "sk-"));
});
`;
      const r = await runScript(script, ["--no-check", "--config", "tacit.json"], { cwd: root });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(apiKey);
      const found = attempts(r.stdout);
      expect(attemptOf(found, "read config").status).toBe("SecurityError");
      expect(String(attemptOf(found, "read config").value)).toContain("tacit's config file");
      expect(attemptOf(found, "search config")).toEqual({ status: "ok", value: [] });
      expect(r.stderr).toContain("the config file holding the LLM API key");
      expect(r.stderr).toContain("TACIT_LLM_API_KEY");
    } finally {
      cleanup();
    }
  }, 30_000);
});

describe("the LLM key in an ordinary file", () => {
  it("cannot be spelt out by grep: patterns are tried on lines with the key masked", async () => {
    // A security review recovered a whole key this way: reads masked it, but whether
    // grep("deploy.sh", known + c) matched told the next character.
    const { dir: root, cleanup } = realTempDir("tacit-host-secret-grep-");
    try {
      const apiKey = `sk-${makeCanary()}`;
      writeFileSync(path.join(root, "deploy.sh"), `export OPENAI_API_KEY=${apiKey}\necho done\n`);
      mkdirSync(path.join(root, "cache"));
      writeFileSync(path.join(root, "cache", `tok_${apiKey}.json`), "x\n");
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read", () => fs.access("deploy.sh").read());
  attempt("grep prefix", () => fs.grep("deploy.sh", "OPENAI_API_KEY=sk-").length);
  attempt("grep first characters", () => fs.grep("deploy.sh", ${JSON.stringify(apiKey.slice(0, 6))}).length);
  attempt("grepRecursive first characters", () => fs.grepRecursive(".", ${JSON.stringify(apiKey.slice(0, 6))}).length);
  attempt("grep other line", () => fs.grep("deploy.sh", "echo").length);
  attempt("grep masked line", () => fs.grep("deploy.sh", "OPENAI_API_KEY=")[0]?.line);
  attempt("find glob on a name", () => fs.find("cache", "tok_" + ${JSON.stringify(apiKey.slice(0, 6))} + "*").length);
  attempt("grepRecursive glob on a name", () => fs.grepRecursive("cache", "x", "tok_" + ${JSON.stringify(apiKey.slice(0, 6))} + "*").length);
  attempt("find all", () => fs.find("cache", "*"));
});
`;
      const r = await runScript(script, ["--no-check", "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-api-key", apiKey, "--llm-model", "m"], { cwd: root });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(apiKey);
      const found = attempts(r.stdout);
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: "export OPENAI_API_KEY=[redacted]\necho done\n" });
      for (const label of ["grep prefix", "grep first characters", "grepRecursive first characters"]) {
        expect(attemptOf(found, label), label).toEqual({ status: "ok", value: 0 });
      }
      expect(attemptOf(found, "grep other line")).toEqual({ status: "ok", value: 1 });
      expect(attemptOf(found, "grep masked line")).toEqual({ status: "ok", value: "export OPENAI_API_KEY=[redacted]" });
      // Globs are tried on names as the script sees them (a review spelt a key out of a file name).
      expect(attemptOf(found, "find glob on a name")).toEqual({ status: "ok", value: 0 });
      expect(attemptOf(found, "grepRecursive glob on a name")).toEqual({ status: "ok", value: 0 });
      expect(attemptOf(found, "find all")).toEqual({ status: "ok", value: [path.join(root, "cache", "tok_[redacted].json")] });
    } finally {
      cleanup();
    }
  }, 30_000);
});

describe("tacit's files reached through a link inside the allowed root", () => {
  // A security review forged an approval this way: TACIT_HOME was reached through a link
  // (a stow-style ~/.config -> dotfiles/config); the script removed the link, made a directory
  // of that name, and wrote approvals.json into it, which tacit then trusted. The same swap put
  // the secure output where the script could read it.
  it("refuses to remove the link or fill a directory of its name; the home and the sink stay tacit's", async () => {
    const { dir: root, cleanup } = realTempDir("tacit-protected-link-");
    try {
      const canary = makeCanary();
      writeFileSync(path.join(root, ".env"), `TOKEN=${canary}\n`);
      mkdirSync(path.join(root, "dotfiles/config/tacit"), { recursive: true, mode: 0o700 });
      symlinkSync("dotfiles/config", path.join(root, ".config"));
      mkdirSync(path.join(root, "private"));
      symlinkSync("private", path.join(root, "sinkdir"));
      const home = path.join(root, ".config/tacit");
      const approvals = JSON.stringify({ version: 1, approvals: [{ pattern: "fs.delete x", directory: root, grantedAt: "2026-01-01T00:00:00Z", expiresAt: "2099-01-01T00:00:00Z", via: "terminal" }] });
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("remove home link", () => fs.access(".config").delete());
  attempt("make home", () => fs.access(".config/tacit").mkdir());
  attempt("forge approvals", () => fs.access(".config/tacit/approvals.json").write(${lit(approvals)}));
  attempt("remove sink link", () => fs.access("sinkdir").delete());
  attempt("write sink", () => fs.access("sinkdir/out.log").write(""));
  println(fs.readClassified(".env"));
});
requestFileSystem(".", (fs) => {
  attempt("read sink", () => fs.access("sinkdir/out.log").read());
  attempt("read sink directly", () => fs.access("private/out.log").read());
});
`;
      const r = await runScript(script, ["--no-check", "--secure-output", "sinkdir/out.log"], { cwd: root, env: { TACIT_HOME: home } });
      expect(r.stdout + r.stderr).not.toContain(canary);
      const found = attempts(r.stdout);
      for (const label of ["remove home link", "make home", "forge approvals", "remove sink link", "write sink", "read sink", "read sink directly"]) {
        expect(attemptOf(found, label).status, label).toBe("SecurityError");
      }
      expect(String(attemptOf(found, "remove home link").value)).toContain("lies inside it or behind it");
      // The links are still there, no approval was planted, and the plaintext went to the sink.
      expect(lstatSync(path.join(root, ".config")).isSymbolicLink()).toBe(true);
      expect(lstatSync(path.join(root, "sinkdir")).isSymbolicLink()).toBe(true);
      expect(existsSync(path.join(root, "dotfiles/config/tacit/approvals.json"))).toBe(false);
      expect(readFileSync(path.join(root, "private/out.log"), "utf8")).toContain(canary);
    } finally {
      cleanup();
    }
  }, 30_000);
});

describe("tacit's files behind a name that flips to a link", () => {
  // A security review raced a directory against a link to the sink's directory (and to
  // TACIT_HOME): the check before opening saw the directory, the open followed the link. What
  // a descriptor really leads to is checked against tacit's files after opening too.
  const ROUNDS = 400;
  it("never reads the secure output or writes into tacit's home while d flips between a directory and a link to them", async () => {
    const { dir: root, cleanup } = realTempDir("tacit-protected-race-");
    const { spawn } = await import("node:child_process");
    let swapper: import("node:child_process").ChildProcess | null = null;
    try {
      const canary = makeCanary();
      mkdirSync(path.join(root, "out"));
      writeFileSync(path.join(root, "out", "sink.log"), `earlier plaintext ${canary}\n`);
      mkdirSync(path.join(root, "home"), { mode: 0o700 });
      mkdirSync(path.join(root, "dreal"));
      writeFileSync(path.join(root, "dreal", "sink.log"), "ordinary\n");
      symlinkSync("out", path.join(root, "spare-sink"));
      symlinkSync("home", path.join(root, "spare-home"));
      swapper = spawn(
        process.execPath,
        [
          "-e",
          `const fs = require("fs");
for (;;) {
  for (const spare of ["spare-sink", "spare-home"]) {
    try { fs.renameSync("d", "hold"); fs.renameSync(spare, "d"); } catch {}
    try { fs.renameSync("d", spare); fs.renameSync("hold", "d"); } catch {}
  }
}`,
        ],
        { cwd: root, stdio: "ignore" },
      );
      const { renameSync } = await import("node:fs");
      renameSync(path.join(root, "dreal"), path.join(root, "d"));
      const script = `
const counts = { read: 0, wrote: 0, refused: 0, failed: 0 };
requestFileSystem(".", (fs) => {
  for (let i = 0; i < ${ROUNDS}; i++) {
    try { println(fs.access("d/sink.log").read().trim()); counts.read++; } catch (e) { if (e instanceof SecurityError) counts.refused++; else counts.failed++; }
    try { fs.access("d/planted.json").write("PLANTED"); counts.wrote++; } catch (e) { if (e instanceof SecurityError) counts.refused++; else counts.failed++; }
  }
});
println(JSON.stringify(counts));
`;
      const r = await runScript(script, ["--no-check", "--secure-output", "out/sink.log"], { cwd: root, env: { TACIT_HOME: path.join(root, "home") } });
      swapper.kill("SIGKILL");
      expect.soft(r.stdout, "the secure output was read").not.toContain(canary);
      expect.soft(existsSync(path.join(root, "home", "planted.json")), "a file was written into tacit's home").toBe(false);
      expect(r.code, r.stderr).toBe(0);
      const counts = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { read: number; refused: number };
      // The swap really raced the script.
      expect(counts.read).toBeGreaterThan(0);
      expect(counts.refused).toBeGreaterThan(0);
    } finally {
      swapper?.kill("SIGKILL");
      cleanup();
    }
  }, 60_000);
});

describe("the link on the way to tacit's home, behind a name that flips to a link", () => {
  // A security review removed the link on the way to TACIT_HOME (refused when named) by naming
  // it through d/.config while d flipped between a directory and a link to the root: the
  // check saw d, an ordinary directory with no .config, the removal found the home's link.
  // The entry is checked again where it really is. Each round is a narrow race (the check and
  // the removal are one call); a removal that succeeds is the bad thing, and ends the script.
  // At most ROUND_MS of rounds, inside the run's 30 s limit: on a loaded machine, fewer rounds
  // rather than a run cut off by its limit. Without the second check (file-system.ts, delete's
  // denyRemovingOwn where the entry really is), each of 18 runs at load 8 to 10 removed the
  // link, at rounds 0 to 150 (half of them by round 14): 2,000 rounds is 13 times the latest
  // (it was 10,000: some 20 s of the script and as much of the swapper's spinning, for nothing).
  const ROUNDS = 2000;
  const ROUND_MS = 20_000;
  it("never removes the link while d flips between a directory and a link to the root", async () => {
    const { dir: root, cleanup } = realTempDir("tacit-protected-delete-race-");
    const { spawn } = await import("node:child_process");
    let swapper: import("node:child_process").ChildProcess | null = null;
    try {
      mkdirSync(path.join(root, "dotfiles/config/tacit"), { recursive: true, mode: 0o700 });
      symlinkSync("dotfiles/config", path.join(root, ".config"));
      mkdirSync(path.join(root, "d"));
      symlinkSync(".", path.join(root, "spare"));
      swapper = spawn(
        process.execPath,
        [
          "-e",
          `const fs = require("fs");
for (;;) {
  try { fs.renameSync("d", "hold"); fs.renameSync("spare", "d"); } catch {}
  try { fs.renameSync("d", "spare"); fs.renameSync("hold", "d"); } catch {}
}`,
        ],
        { cwd: root, stdio: "ignore" },
      );
      const script = `
const counts = { removed: 0, refused: 0, failed: 0 };
const end = Date.now() + ${ROUND_MS};
requestFileSystem(".", (fs) => {
  for (let i = 0; i < ${ROUNDS} && Date.now() < end; i++) {
    try { fs.access("d/.config").delete(); counts.removed++; break; } catch (e) { if (e instanceof SecurityError) counts.refused++; else counts.failed++; }
  }
});
println(JSON.stringify(counts));
`;
      const r = await runScript(script, ["--no-check"], { cwd: root, env: { TACIT_HOME: path.join(root, ".config/tacit") } });
      swapper.kill("SIGKILL");
      expect.soft(lstatSync(path.join(root, ".config")).isSymbolicLink(), "the link on the way to tacit's home was removed").toBe(true);
      expect(r.code, r.stderr).toBe(0);
      const counts = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { removed: number; refused: number; failed: number };
      expect(counts.removed, "a removal went through").toBe(0);
      // The swap really raced the script: d was the link at some checks, the directory at others.
      expect(counts.refused).toBeGreaterThan(0);
      expect(counts.failed).toBeGreaterThan(0);
    } finally {
      swapper?.kill("SIGKILL");
      cleanup();
    }
  }, 60_000);
});

describe("tacit's own code inside the allowed root (a project that has tacit as a dependency)", () => {
  let root: string;
  let cleanup: () => void;
  let installed: string;
  const canary = makeCanary();
  const proof = () => path.join(root, "ran-outside-the-sandbox");

  /** `node node_modules/tacit/bin/tacit.js run -` in the project, as `npx tacit run -` would. */
  const runInstalled = (code: string): Promise<CliResult> => runScript(code, [], { cwd: root, bin: path.join(installed, "bin", "tacit.js") });

  beforeAll(() => {
    ({ dir: root, cleanup } = realTempDir("tacit-protected-code-"));
    // The project's node_modules/tacit: this build's package, its dependencies where they are.
    installed = installTacitIn(root);
  });
  afterAll(() => cleanup());

  it("can be read but not changed: a script that rewrote it ran its own code outside the sandbox at tacit's next start", async () => {
    const startup = path.join(installed, "dist", "bundle", "prestart.cjs");
    const before = readFileSync(startup, "utf8");
    const payload = `require("node:fs").writeFileSync(${JSON.stringify(proof())}, ${JSON.stringify(canary)});\n`;
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  const startup = fs.access("node_modules/tacit/dist/bundle/prestart.cjs");
  attempt("read", () => startup.read().includes("prestartFromArgv"));
  attempt("search", () => fs.grepRecursive("node_modules/tacit/dist/bundle", "prestartFromArgv", "prestart.cjs").length);
  attempt("write", () => startup.write(${lit(payload)} + startup.read()));
  attempt("append", () => startup.append(${lit(payload)}));
  attempt("delete", () => startup.delete());
  attempt("new file", () => fs.access("node_modules/tacit/dist/bundle/other.cjs").write(${lit(payload)}));
  attempt("mkdir", () => fs.access("node_modules/tacit/node_modules2").mkdir());
  attempt("delete the package's parent", () => fs.access("node_modules").delete());
});
`;
    const r = await runInstalled(script);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expect(attemptOf(found, "read")).toEqual({ status: "ok", value: true });
    expect(attemptOf(found, "search")).toEqual({ status: "ok", value: 1 });
    for (const label of ["write", "append", "delete", "new file", "mkdir", "delete the package's parent"]) {
      const attempt = attemptOf(found, label);
      expect(attempt.status, label).toBe("SecurityError");
      expect(String(attempt.value), label).toContain("tacit's own code");
    }
    expect(readFileSync(startup, "utf8")).toBe(before);
    expect(existsSync(path.join(installed, "dist", "bundle", "other.cjs"))).toBe(false);
    // The next start of tacit runs its own code, not the script's.
    const next = await runInstalled('println("next")');
    expect(next.stdout).toBe("next\n");
    expect(existsSync(proof())).toBe(false);
  }, 30_000);

  it("names where it is found: each dependency, where Node would look for it first, Deno and the type checker", async () => {
    // As the installed copy finds them (its dependencies are this checkout's, through a link).
    const listed = await new Promise<string>((resolve, reject) => {
      const program = `import(${JSON.stringify(path.join(installed, "dist", "runner", "paths.js"))}).then((m) => console.log(JSON.stringify(m.tacitCodeLocations())))`;
      const child = spawn(process.execPath, ["--input-type=module", "-e", program], { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
      const out: Buffer[] = [];
      child.stdout.on("data", (c: Buffer) => out.push(c));
      child.on("error", reject);
      child.on("close", () => resolve(Buffer.concat(out).toString("utf8")));
    });
    const locations = JSON.parse(listed) as string[];
    const covered = (place: string): boolean => locations.some((location) => isWithin(place, location));
    expect(locations).toContain(installed);
    for (const name of ["zod", "deno", "typescript", "oxc-parser", "@modelcontextprotocol/sdk", "@typescript-eslint/scope-manager"]) {
      expect(covered(realpathSync(path.join(repoRoot, "node_modules", name))), name).toBe(true);
    }
    expect(covered(denoExecutable())).toBe(true);
    expect(covered(tscExecutable())).toBe(true);
    expect(covered(realpathSync(process.execPath)), "the Node that runs tacit").toBe(true);
    // Created here, a directory or file would be found before the dependency where it really is.
    const scope = path.join(realpathSync(path.join(repoRoot, "node_modules")), "@modelcontextprotocol", "node_modules");
    expect(covered(path.join(scope, "zod"))).toBe(true);
    expect(covered(path.join(scope, "zod.js"))).toBe(true);
    // And nothing else of the project is.
    expect(covered(path.join(root, "src", "app.ts"))).toBe(false);
    expect(covered(path.join(root, "node_modules", "left-pad"))).toBe(false);
  });
});

describe("the Node that runs tacit, installed inside the allowed root (nvm under a home that is a root)", () => {
  let root: string;
  let cleanup: () => void;
  let node: string;
  const before = { size: 0, mtimeMs: 0 };

  beforeAll(() => {
    ({ dir: root, cleanup } = realTempDir("tacit-protected-node-"));
    // A copy, never a link: were the refusal missing, the test would write this file.
    node = path.join(root, ".nvm", "versions", "node", "bin", "node");
    mkdirSync(path.dirname(node), { recursive: true });
    copyFileSync(process.execPath, node);
    chmodSync(node, 0o755);
    ({ size: before.size, mtimeMs: before.mtimeMs } = statSync(node));
  });
  afterAll(() => cleanup());

  it("can be read but not changed, replaced or removed: tacit would run the replacement at its next start", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("size", () => fs.access(".nvm/versions/node/bin/node").size > 0);
  // A running binary cannot be written (ETXTBSY), but it can be removed and written anew.
  attempt("delete", () => fs.access(".nvm/versions/node/bin/node").delete());
  attempt("write", () => fs.access(".nvm/versions/node/bin/node").write("#!/bin/sh\\ntouch owned\\n"));
  attempt("append", () => fs.access(".nvm/versions/node/bin/node").append("x"));
  attempt("delete its directory", () => fs.access(".nvm/versions/node/bin").delete());
});
`;
    const result = await runScript(script, [], { cwd: root, node });
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expect(attemptOf(found, "size")).toEqual({ status: "ok", value: true });
    expectRefused(found, ["delete", "write", "append", "delete its directory"], /tacit's own code/);
    const after = statSync(node);
    expect({ size: after.size, mtimeMs: after.mtimeMs }).toEqual(before);
    expect(existsSync(path.join(root, "owned"))).toBe(false);
  }, 30_000);
});

describe("tacit's type-check working directories, when the allowed root holds the temporary directory", () => {
  // Another run's check, as it stands while the checker works: its settings, its script, and
  // tacit serve's checker launcher, which the server runs again after a timed-out check.
  const original = { "tmp/tacit-check-Ab12Cd/tsconfig.json": '{"compilerOptions":{"noEmit":true}}\n', "tmp/tacit-check-Ab12Cd/script.ts": "println(1);\n", "tmp/tacit-checker-Ef34Gh/checker.sh": "#!/bin/sh\nexec true\n" };
  let root: string;
  let cleanup: () => void;

  beforeAll(() => {
    ({ dir: root, cleanup } = realTempDir("tacit-tmp-root-"));
    for (const [file, text] of Object.entries(original)) {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), text);
    }
  });
  afterAll(() => cleanup());

  it("are refused to every read, write, listing and content search; tacit's own checks still work there", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read settings", () => fs.access("tmp/tacit-check-Ab12Cd/tsconfig.json").read());
  attempt("write settings", () => fs.access("tmp/tacit-check-Ab12Cd/tsconfig.json").write('{"compilerOptions":{"outDir":"/tmp/owned"}}'));
  attempt("write script", () => fs.access("tmp/tacit-check-Ab12Cd/script.ts").write("evil();"));
  attempt("write launcher", () => fs.access("tmp/tacit-checker-Ef34Gh/checker.sh").write("#!/bin/sh\\ntouch /tmp/owned\\n"));
  attempt("append launcher", () => fs.access("tmp/tacit-checker-Ef34Gh/checker.sh").append("touch /tmp/owned\\n"));
  attempt("new file", () => fs.access("tmp/tacit-check-Ab12Cd/extra.ts").write("x"));
  attempt("mkdir", () => fs.access("tmp/tacit-checker-Ef34Gh/sub").mkdir());
  attempt("delete dir", () => fs.access("tmp/tacit-check-Ab12Cd").delete());
  attempt("list", () => fs.access("tmp/tacit-checker-Ef34Gh").children().map((e) => e.name));
  attempt("delete the temporary directory", () => fs.access("tmp").delete());
  attempt("grep", () => fs.grepRecursive(".", "exec|compilerOptions|println").map((m) => m.file));
});
`;
    // TMPDIR is inside the allowed root: this run's own type check works in a directory there too.
    const result = await runScript(script, [], { cwd: root, env: { TMPDIR: path.join(root, "tmp") } });
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expectRefused(found, ["read settings", "write settings", "write script", "write launcher", "append launcher", "new file", "mkdir", "delete dir", "list", "delete the temporary directory"], /type checker/);
    expect(attemptOf(found, "grep")).toEqual({ status: "ok", value: [] });
    for (const [file, text] of Object.entries(original)) expect(readFileSync(path.join(root, file), "utf8")).toBe(text);
    expect(existsSync(path.join(root, "tmp", "tacit-check-Ab12Cd", "extra.ts"))).toBe(false);
    expect(existsSync(path.join(root, "tmp", "tacit-checker-Ef34Gh", "sub"))).toBe(false);
  }, 30_000);

  it("the directory of a starting sandbox's input socket is refused too", async () => {
    // Stands in for another run's socket directory (runner/sandbox-input.ts), which lives until its host connects.
    const channel = path.join(root, "tmp", "tacit-channel-Ij78Kl");
    mkdirSync(channel, { recursive: true });
    writeFileSync(path.join(channel, "s"), "socket\n");
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("replace the socket", () => fs.access("tmp/tacit-channel-Ij78Kl/s").write("x"));
  attempt("delete the socket", () => fs.access("tmp/tacit-channel-Ij78Kl/s").delete());
  attempt("delete its directory", () => fs.access("tmp/tacit-channel-Ij78Kl").delete());
  attempt("make one beside it", () => fs.access("tmp/tacit-channel-Ij78Kl/t").write("x"));
});
`;
    const result = await runScript(script, [], { cwd: root, env: { TMPDIR: path.join(root, "tmp") } });
    expect(result.code, result.stderr).toBe(0);
    expectRefused(attempts(result.stdout), ["replace the socket", "delete the socket", "delete its directory", "make one beside it"], /starting sandbox's input/);
    expect(readFileSync(path.join(channel, "s"), "utf8")).toBe("socket\n");
    expect(existsSync(path.join(channel, "t"))).toBe(false);
  }, 30_000);
});

describe("another run's type-check working directories, in the default temporary directory", () => {
  // A run with TMPDIR set elsewhere refused its scripts only the tacit-check directories of its own
  // temporary directory: a script whose roots held /tmp rewrote the checker settings of a tacit
  // serve started without TMPDIR (tsconfig.split.json, read at its first check of a session's snippet apart).
  it("are refused to a script of a run whose TMPDIR lies elsewhere", async () => {
    const { dir, cleanup } = realTempDir("tacit-other-tmp-");
    const client = await connectServe([], dir, { env: { TMPDIR: "" } });
    try {
      // The server's checker starts with its first check, in its directory under /tmp.
      await client.callTool({ name: "execute_typescript", arguments: { code: `println(${lit(makeCanary())});` } });
      // The checker is told its working directory on its command line (--cwd).
      const workingDirOf = (pid: number): string | undefined => {
        const args = commandLineOf(pid).split("\0");
        return args[args.indexOf("--cwd") + 1];
      };
      const checker = descendantsOf(process.pid).map(workingDirOf).find((dir) => dir?.startsWith("/tmp/tacit-checker-"));
      expect(checker, "the server's checker, working in /tmp").toBeDefined();
      const settings = path.join(checker!, "tsconfig.split.json");
      const before = readFileSync(settings, "utf8");
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem("/tmp", (fs) => {
  attempt("read settings", () => fs.access(${lit(settings)}).read());
  attempt("write settings", () => fs.access(${lit(settings)}).write('{"compilerOptions":{"noCheck":true},"files":[]}'));
  attempt("list", () => fs.access(${lit(checker!)}).children().map((e) => e.name));
});
`;
      mkdirSync(path.join(dir, "tmp"));
      const r = await runScript(script, ["--no-check", "--allowed-roots", "/tmp"], { cwd: dir, env: { TMPDIR: path.join(dir, "tmp") } });
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), ["read settings", "write settings", "list"], /type checker/);
      expect(readFileSync(settings, "utf8")).toBe(before);
    } finally {
      await client.close();
      cleanup();
    }
  });
});

describe("the files that decide how tacit starts, inside the allowed root (npm's .npmrc, the MCP client's settings)", () => {
  // A security review wrote `node-options=--require ./x.cjs` into the project's .npmrc with
  // nothing but requestFileSystem("."): npm turns it into NODE_OPTIONS, so the next
  // `npx tacit` (how the README registers tacit with an MCP client) ran x.cjs inside tacit, with
  // the operator's authority; rewriting .mcp.json gave the next `tacit serve` wider flags.
  let root: string;
  let cleanup: () => void;
  const canary = makeCanary();
  const proof = () => path.join(root, "ran-outside-the-sandbox");
  const npx = path.join(path.dirname(process.execPath), "npx");
  const mcpJson = JSON.stringify({ mcpServers: { tacit: { command: "npx", args: ["tacit", "serve", "--allowed-roots", "."] } } });

  /** `npx tacit run -` in the project, as an operator (or an MCP client) starts it; npm's settings from this environment left out. */
  const runThroughNpx = (code: string): Promise<CliResult> => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
    const child = spawn(process.execPath, [realpathSync(npx), "--offline", "tacit", "run", "-"], { cwd: root, env, stdio: ["pipe", "pipe", "pipe"] });
    return collectedRun(child, code);
  };

  beforeAll(() => {
    ({ dir: root, cleanup } = realTempDir("tacit-protected-launch-"));
    // A project with tacit installed as npm would: node_modules/tacit and its .bin link.
    const installed = installTacitIn(root);
    mkdirSync(path.join(root, "node_modules", ".bin"));
    symlinkSync("../tacit/bin/tacit.js", path.join(root, "node_modules", ".bin", "tacit"));
    writeFileSync(path.join(root, "package.json"), JSON.stringify({ name: "project", version: "1.0.0", private: true }));
    writeFileSync(path.join(root, ".mcp.json"), mcpJson);
    writeFileSync(path.join(root, "payload.cjs"), `require("node:fs").writeFileSync(${JSON.stringify(proof())}, ${JSON.stringify(canary)});\n`);
    writeFileSync(path.join(root, "payload.sh"), `#!/bin/sh\necho ${canary} > ${JSON.stringify(proof())}\n`);
  });
  afterAll(() => cleanup());

  it.skipIf(!existsSync(npx))("can be read but not written, created or deleted: the next npx tacit runs tacit, not the script's code", async () => {
    const npmrc = `node-options=--require ${path.join(root, "payload.cjs")}\n`;
    const wider = JSON.stringify({ mcpServers: { tacit: { command: "npx", args: ["tacit", "serve", "--allowed-roots", "/", "--command-permissions", "*"] } } });
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("write .npmrc", () => fs.access(".npmrc").write(${lit(npmrc)}));
  attempt("append .npmrc", () => fs.access(".npmrc").append(${lit(npmrc)}));
  attempt("writeClassified .npmrc", () => fs.writeClassified(".npmrc", classify(${lit(npmrc)})));
  attempt("read .mcp.json", () => fs.access(".mcp.json").read());
  attempt("write .mcp.json", () => fs.access(".mcp.json").write(${lit(wider)}));
  attempt("delete .mcp.json", () => fs.access(".mcp.json").delete());
  attempt("mkdir .claude", () => fs.access(".claude").mkdir());
  attempt("write .claude/settings.json", () => fs.access(".claude/settings.json").write('{"permissions":{"allow":["Bash"]}}'));
  attempt("write .vscode/mcp.json", () => fs.access(".vscode/mcp.json").write(${lit(wider)}));
  attempt("write opencode.json", () => fs.access("opencode.json").write(${lit(wider)}));
  attempt("write .vscode/settings.json", () => fs.access(".vscode/settings.json").write(${lit(wider)}));
  attempt("write .cursor/mcp.json", () => fs.access(".cursor/mcp.json").write(${lit(wider)}));
  attempt("write .yarnrc.yml", () => fs.access(".yarnrc.yml").write("yarnPath: ./payload.cjs\\n"));
  attempt("write an ordinary file", () => fs.access("notes.txt").write("fine"));
  // npx runs the project's own bin named tacit before the installed one.
  const manifest = fs.access("package.json");
  attempt("package.json, first half", () => manifest.write('{"name":"project","version":"1.0.0","bin":{"tac'));
  attempt("package.json, second half", () => manifest.append('it":"payload.sh"}}'));
  attempt("package.json, an ordinary change", () => manifest.write(${lit(JSON.stringify({ name: "project", version: "1.0.1", private: true, description: "changed" }))}));
  attempt("package.json, a single bin", () => manifest.write(${lit(JSON.stringify({ name: "@scope/tacit", version: "1.0.0", bin: "payload.sh" }))}));
  attempt("package.json, a bin directory", () => manifest.write(${lit(JSON.stringify({ name: "project", version: "1.0.0", directories: { bin: "." } }))}));
  attempt("package.json, a bin path", () => manifest.write(${lit(JSON.stringify({ name: "project", version: "1.0.0", bin: { "sub/tacit": "payload.sh" } }))}));
  attempt("package.json, a bin", () => manifest.write(${lit(JSON.stringify({ name: "project", version: "1.0.0", bin: { tacit: "payload.sh" } }))}));
  attempt("package.json, another bin", () => manifest.write(${lit(JSON.stringify({ name: "project", version: "1.0.2", bin: { other: "payload.sh" } }))}));
});
`;
    const r = await runScript(script, ["--no-check"], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expect(attemptOf(found, "read .mcp.json")).toEqual({ status: "ok", value: mcpJson });
    expect(attemptOf(found, "mkdir .claude").status).toBe("ok");
    expect(attemptOf(found, "write an ordinary file").status).toBe("ok");
    for (const label of ["package.json, first half", "package.json, an ordinary change", "package.json, another bin"]) expect(attemptOf(found, label).status, label).toBe("ok");
    expectRefused(
      found,
      ["package.json, second half", "package.json, a single bin", "package.json, a bin directory", "package.json, a bin path", "package.json, a bin"],
      /declare a program named tacit/,
    );
    expect(JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"))).toEqual({ name: "project", version: "1.0.2", bin: { other: "payload.sh" } });
    expectRefused(
      found,
      [
        "write .npmrc",
        "append .npmrc",
        "writeClassified .npmrc",
        "write .mcp.json",
        "delete .mcp.json",
        "write .claude/settings.json",
        "write .vscode/mcp.json",
        "write opencode.json",
        "write .vscode/settings.json",
        "write .cursor/mcp.json",
        "write .yarnrc.yml",
      ],
      /decides how tacit starts/,
    );
    expect(existsSync(path.join(root, ".npmrc"))).toBe(false);
    expect(readFileSync(path.join(root, ".mcp.json"), "utf8")).toBe(mcpJson);
    for (const file of [".claude/settings.json", ".vscode/mcp.json", "opencode.json", ".vscode/settings.json", ".cursor/mcp.json", ".yarnrc.yml"]) expect(existsSync(path.join(root, file)), file).toBe(false);
    // The next start through npx runs tacit, and nothing of the script's with it.
    const next = await runThroughNpx('println("next")');
    expect(next.stdout, next.stderr).toBe("next\n");
    expect(existsSync(proof()), "the script's code ran inside tacit at its next start").toBe(false);
  }, 60_000);

  it.skipIf(!existsSync(npx))("node_modules/.bin/tacit, a shim of its own and not a link, can be read but not rewritten, deleted or made in any directory", async () => {
    // pnpm writes .bin entries as shell scripts, not links into the package: a script with nothing
    // but requestFileSystem(".") rewrote node_modules/.bin/tacit (its mode kept), and the next
    // `npx --offline tacit --version` ran the script's shell code, with the user's authority.
    const { dir, cleanup } = realTempDir("tacit-launch-shim-");
    try {
      const shim = `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(repoRoot, "bin", "tacit.js"))} "$@"\n`;
      const ran = path.join(dir, "SHIM_RAN");
      mkdirSync(path.join(dir, "node_modules", ".bin"), { recursive: true });
      mkdirSync(path.join(dir, "sub"));
      writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "project", version: "1.0.0", private: true }));
      writeFileSync(path.join(dir, "sub", "package.json"), JSON.stringify({ name: "sub", version: "1.0.0", private: true }));
      writeFileSync(path.join(dir, "node_modules", ".bin", "tacit"), shim, { mode: 0o755 });
      const payload = `#!/bin/sh\ntouch ${JSON.stringify(ran)}\n`;
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read", () => fs.access("node_modules/.bin/tacit").read());
  attempt("write", () => fs.access("node_modules/.bin/tacit").write(${lit(payload)}));
  attempt("append", () => fs.access("node_modules/.bin/tacit").append(${lit(`
touch ${JSON.stringify(ran)}
`)}));
  attempt("delete", () => fs.access("node_modules/.bin/tacit").delete());
  attempt("make another", () => fs.access("sub/node_modules/.bin/tacit").write(${lit(payload)}));
});
`;
      const r = await runScript(script, ["--no-check"], { cwd: dir, env: { TACIT_HOME: path.join(dir, "tacit-home") } });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: shim });
      expectRefused(found, ["write", "append", "delete", "make another"], /the program `npx tacit` runs in .*runs it before any installed tacit/);
      expect(readFileSync(path.join(dir, "node_modules", ".bin", "tacit"), "utf8")).toBe(shim);
      expect(existsSync(path.join(dir, "sub", "node_modules"))).toBe(false);
      const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
      const next = spawnSync(process.execPath, [realpathSync(npx), "--offline", "tacit", "--version"], { cwd: dir, env, encoding: "utf8", timeout: 60_000 });
      expect(next.stdout.trim(), next.stderr).toBe(JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")).version);
      expect(existsSync(ran)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("a package.json the operator classified takes no classified write: judging its content would tell about the secret", async () => {
    const { dir, cleanup } = realTempDir("tacit-launch-classified-");
    try {
      const canary = makeCanary();
      const manifest = JSON.stringify({ name: "project", version: "1.0.0" });
      writeFileSync(path.join(dir, "package.json"), manifest);
      writeFileSync(path.join(dir, ".env"), JSON.stringify({ name: "project", bin: { tacit: canary } }));
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  attempt("writeClassified package.json", () => fs.writeClassified("package.json", secret));
  attempt("writeClassified another classified file", () => fs.writeClassified("copy.env", secret));
});
`;
      const r = await runScript(script, ["--no-check", "--classified-paths", ".env,copy.env,package.json"], { cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["writeClassified package.json"], /writeClassified\(\) refused: this is the project's package.json/);
      expect(attemptOf(found, "writeClassified another classified file").status).toBe("ok");
      expect(readFileSync(path.join(dir, "package.json"), "utf8")).toBe(manifest);
      expect(r.stdout + r.stderr).not.toContain(canary);
    } finally {
      cleanup();
    }
  });

  it("names npm's configuration along the way up, npm's user and global files, npm itself and the clients' settings", () => {
    const home = path.join(root, "home");
    const places = tacitLaunchFiles(path.join(root, "packages", "app"), { HOME: home, npm_config_userconfig: path.join(root, "npmrc.user"), NPM_CONFIG_GLOBALCONFIG: path.join(root, "npmrc.global") });
    const covered = (place: string): boolean => places.some((location) => isWithin(place, location));
    for (const dir of [path.join(root, "packages", "app"), path.join(root, "packages"), root, "/"]) {
      for (const file of [".npmrc", ".yarnrc", ".yarnrc.yml", "opencode.json", "opencode.jsonc"]) expect(covered(path.join(dir, file)), path.join(dir, file)).toBe(true);
    }
    expect(covered(path.join(root, "npmrc.user"))).toBe(true);
    expect(covered(path.join(root, "npmrc.global"))).toBe(true);
    expect(covered(path.join(home, ".npmrc")), "named by npm_config_userconfig instead").toBe(false);
    const npm = path.join(path.dirname(path.dirname(realpathSync(process.execPath))), "lib", "node_modules", "npm");
    expect(covered(path.join(npm, "bin", "npx-cli.js")), "the npm beside the Node that runs tacit").toBe(true);
    for (const file of [
      ".mcp.json",
      ".vscode/mcp.json",
      ".vscode/settings.json",
      "opencode.json",
      ".opencode/plugin/x.ts",
      ".claude/settings.json",
      ".claude/settings.local.json",
      ".cursor/mcp.json",
      ".gemini/settings.json",
    ]) {
      expect(covered(path.join(root, "packages", "app", file)), file).toBe(true);
    }
    for (const file of [
      ".claude.json",
      ".claude/settings.json",
      ".config/opencode/opencode.json",
      ".config/Code/User/settings.json",
      ".config/Code/User/mcp.json",
      ".config/Claude/claude_desktop_config.json",
      ".cursor/mcp.json",
      ".gemini/settings.json",
    ]) {
      expect(covered(path.join(home, file)), file).toBe(true);
    }
    // And nothing else of the project is.
    for (const file of ["package.json", "src/app.ts", ".claude/commands/x.md", "Makefile", ".vscode/launch.json"]) expect(covered(path.join(root, "packages", "app", file)), file).toBe(false);
    // But a program named tacit in the bin directory a project package.json names (npx would run it).
    mkdirSync(path.join(root, "packages", "app"), { recursive: true });
    writeFileSync(path.join(root, "packages", "app", "package.json"), JSON.stringify({ name: "app", directories: { bin: "tools" } }));
    const withBinDir = tacitLaunchFiles(path.join(root, "packages", "app"), { HOME: home });
    expect(withBinDir.some((location) => isWithin(path.join(root, "packages", "app", "tools", "tacit"), location))).toBe(true);
    expect(withBinDir.some((location) => isWithin(path.join(root, "packages", "app", "tools", "other"), location))).toBe(false);
  });
});
