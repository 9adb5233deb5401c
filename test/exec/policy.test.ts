// Which commands may run: nothing without a policy (fail closed); under --strict anything
// but shells, interpreters, file and network tools and command runners (any letter case,
// any version or variant suffix, and judged by the program a name really runs);
// under --command-permissions only the globs given (which win over --strict); the same from
// a --config file; a command given as a path is refused; and the scope's list narrows it all.

import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../net/fixtures.js";
import { DEFAULT_TIMEOUT_MS } from "../../runner/limits.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, type CliResult, expectRefused, lit, makeCanary, realTempDir, tacit } from "./fixtures.js";

let root: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-exec-policy-"));
});
afterAll(() => cleanup());

/** A file outside the allowed roots, in `dir`, holding a fresh canary (`text` of it: the canary and a newline by default). */
function secretOutside(dir: string, text: (canary: string) => string = (canary) => `${canary}\n`): { canary: string; secret: string } {
  const canary = makeCanary();
  const secret = path.join(dir, "secret.txt");
  writeFileSync(secret, text(canary));
  return { canary, secret };
}

/** A script that asks for each command alone (label = the command) and reports the attempt. */
function requestEach(commands: readonly string[], extra = ""): string {
  return `${ATTEMPT_PRELUDE}
for (const command of ${JSON.stringify(commands)}) {
  attempt(command, () => requestExecPermission([command], () => "granted"));
}
${extra}`;
}

/**
 * A script that runs each [command, args] in a scope of its own (label = the command) and
 * reports its exit code; `timeoutMs` is each command's own limit (none: the default).
 */
function attemptRuns(runs: ReadonlyArray<readonly [string, readonly string[]]>, timeoutMs?: number): string {
  const options = timeoutMs === undefined ? "" : `, { timeoutMs: ${timeoutMs} }`;
  return `${ATTEMPT_PRELUDE}
for (const [command, args] of ${JSON.stringify(runs)} as Array<[string, string[]]>) {
  attempt(command, () => requestExecPermission([command], (p) => p.exec(command, args${options}).exitCode));
}
`;
}

function expectGranted(found: ReturnType<typeof attempts>, labels: readonly string[]): void {
  for (const label of labels) expect(attemptOf(found, label), label).toEqual({ status: "ok", value: "granted" });
}

function expectClean(r: CliResult): ReturnType<typeof attempts> {
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return attempts(r.stdout);
}

describe("without a command policy", () => {
  it("runs nothing, and the refusal names both flags that would allow it", async () => {
    const script = `${ATTEMPT_PRELUDE}
attempt("printf", () => requestExecPermission(["printf"], (p) => p.execOutput("printf", ["ran"])));
attempt("true", () => requestExecPermission(["true"], (p) => p.exec("true")));
`;
    const found = expectClean(await tacit(root, script));
    expectRefused(found, ["printf", "true"], /--command-permissions/);
    expectRefused(found, ["printf", "true"], /--strict/);
  });
});

const STRICT_DENIED = ["cat", "rm", "sh", "bash", "python3", "node", "curl", "wget", "ssh", "env", "xargs", "find"];
const STRICT_DENIED_CASES = ["CAT", "Cat", "RM", "Sh", "BASH", "Python3", "NODE", "cUrl", "Env", "XARGS"];
// Not named in the brief, but plainly shells, interpreters, network tools or command runners.
const STRICT_DENIED_MORE = ["dash", "zsh", "perl", "nc", "sudo", "nohup", "timeout", "busybox", "diff", "grep", "nl", "rev", "uniq", "iconv"];
const AS_PATHS = ["/bin/cat", "/usr/bin/printf", "./printf", "bin/printf", "../printf", "/bin/CAT"];

describe("--strict", () => {
  let r: CliResult;
  let found: ReturnType<typeof attempts>;
  beforeAll(async () => {
    const extra = `
attempt("printf runs", () => requestExecPermission(["printf"], (p) => p.exec("printf", ["%s", "strict ok"])));
attempt("sh with printf", () => requestExecPermission(["printf", "sh"], () => "granted"));
requestExecPermission(["printf"], (p) => {
  attempt("exec by path", () => p.exec("/usr/bin/printf", ["by path"]));
  attempt("exec by relative path", () => p.exec("./printf", ["by path"]));
});
`;
    r = await tacit(root, requestEach([...STRICT_DENIED, ...STRICT_DENIED_CASES, ...STRICT_DENIED_MORE, ...AS_PATHS, "printf"], extra), ["--strict"]);
    found = expectClean(r);
  });

  it("refuses file tools, shells, interpreters, network tools and command runners — in any letter case", () => {
    expectRefused(found, STRICT_DENIED);
    expectRefused(found, STRICT_DENIED_CASES);
    // Each refusal names the command and the flag that would allow it.
    for (const label of [...STRICT_DENIED, ...STRICT_DENIED_CASES]) {
      expect(attemptOf(found, label).value, label).toContain(label);
      expect(attemptOf(found, label).value, label).toMatch(/--command-permissions/);
    }
    // A scope that asks for one denied command among allowed ones is refused as a whole.
    expectRefused(found, ["sh with printf"], /\bsh\b/);
  });

  it("refuses other shells, interpreters and command runners as well", () => {
    expectRefused(found, STRICT_DENIED_MORE);
  });

  it("refuses a command given as a path, saying to give its name", () => {
    expectRefused(found, AS_PATHS, /name/i);
    expectRefused(found, ["exec by path", "exec by relative path"]);
  });

  it("runs what is not denied", () => {
    expectGranted(found, ["printf"]);
    expect(attemptOf(found, "printf runs")).toEqual({ status: "ok", value: { exitCode: 0, stdout: "strict ok", stderr: "" } });
  });
});

// Versioned and suffixed names of denied families, as distributions install them: each ran
// arbitrary code under --strict when only the bare names were listed.
const STRICT_DENIED_VERSIONED = [
  "python3.11", "python3.12", "python3m", "pypy3", "perl5.36.0", "tclsh8.6", "wish8.6", "lua5.4", "php8.2", "ruby3.1", "node18",
  "bash5.2", "ksh93", "gawk-5.1", "vim.basic", "nc.openbsd", "gcc-12", "x86_64-linux-gnu-gcc-12", "pydoc3", "pip3.11",
];
// Shells by other names, and programs that run other programs or code through their
// arguments: env CMD, xargs, find -exec, awk's system(), GNU sed's e, vi/ex's !cmd, sqlite3's
// .shell, gdb's shell, make's recipes, git's aliases and hooks, sort --compress-program, …
const STRICT_DENIED_RUNNERS = [
  "rbash", "yash", "elvish", "tmux", "script", "env", "xargs", "find", "awk", "gawk", "mawk", "sed", "vi", "vim", "ex", "view",
  "nvim", "emacs", "less", "man", "sqlite3", "psql", "gdb", "make", "cmake", "gcc", "cc", "ldd", "ssh", "ssh-agent", "nohup",
  "timeout", "nice", "stdbuf", "watch", "strace", "sudo", "su", "doas", "git", "git-upload-pack", "hg", "expect", "sort", "split",
  "flock", "unshare", "nsenter", "setarch", "m4", "dc", "pandoc", "pdflatex", "npm", "cargo", "go", "docker",
];

// A ninth review: runners off the list, which run the program their arguments name (`chpst sh -c
// …`): runit's and daemontools' (chpst, setuidgid, envdir, softlimit, …, also BusyBox applets,
// judged by their name alone), ucspi's and BusyBox's network servers that run a program per
// connection, s6's and execline's, moreutils' (chronic, ifne, pee runs its words in a shell,
// sponge writes any file, vipe and vidir open an editor), and the wrappers that run the command
// after them (rlwrap, tini, gosu, ccache, torsocks, eatmydata, qemu-x86_64, dbus-launch, …).
const STRICT_DENIED_SUPERVISORS = [
  "chpst", "runsv", "runsvdir", "svlogd", "setuidgid", "envdir", "envuidgid", "softlimit", "setlock", "pgrphack", "tcpserver",
  "tcpclient", "tcpsvd", "udpsvd", "cttyhack", "inotifyd", "s6-setuidgid", "s6-envdir", "execlineb", "chronic", "ifne", "lckdo",
  "mispipe", "pee", "zrun", "sponge", "vipe", "vidir", "rlwrap", "tini", "dumb-init", "gosu", "su-exec", "cgexec", "trickle",
  "torsocks", "proxychains4", "tsocks", "ccache", "distcc", "sccache", "hyperfine", "watchexec", "eatmydata", "qemu-x86_64",
  "dbus-launch", "xinit", "startx", "bpftrace", "uftrace", "reformime",
];

describe("--strict: families, not exact names", () => {
  let found: ReturnType<typeof attempts>;
  let binDir: string;
  beforeAll(async () => {
    // Innocent-looking names on PATH that lead to a shell and to printf.
    binDir = path.join(root, "bin");
    mkdirSync(binDir);
    symlinkSync("/bin/sh", path.join(binDir, "tacit-innocent-tool"));
    symlinkSync("/usr/bin/printf", path.join(binDir, "tacit-printf-alias"));
    const extra = `
attempt("printf alias runs", () => requestExecPermission(["tacit-printf-alias"], (p) => p.exec("tacit-printf-alias", ["%s", "alias ok"]).stdout));
`;
    const names = [...STRICT_DENIED_VERSIONED, ...STRICT_DENIED_RUNNERS, ...STRICT_DENIED_SUPERVISORS, "tacit-innocent-tool", "printf", "pwd", "ls", "wc", "ps"];
    const r = await tacit(root, requestEach(names, extra), ["--strict"], { PATH: `${binDir}:${process.env.PATH ?? "/usr/bin:/bin"}` });
    found = expectClean(r);
  });

  it("refuses versioned and suffixed names of shells, interpreters and tools (python3.11, perl5.36.0, tclsh8.6, gcc-12, …)", () => {
    expectRefused(found, STRICT_DENIED_VERSIONED, /refused under --strict/);
    for (const label of STRICT_DENIED_VERSIONED) {
      expect(attemptOf(found, label).value, label).toContain(`"${label}"`);
      expect(attemptOf(found, label).value, label).toMatch(/--command-permissions/);
      expect(attemptOf(found, label).value, label).toMatch(/not a confinement/);
    }
    expect(attemptOf(found, "python3.11").value).toMatch(/interpreter \(python\)/);
    expect(attemptOf(found, "perl5.36.0").value).toMatch(/interpreter \(perl\)/);
  });

  it("refuses other shells and the programs that run commands or code through their arguments (env, xargs, find, awk, sed, vi, sqlite3, git, sort, …)", () => {
    expectRefused(found, STRICT_DENIED_RUNNERS, /refused under --strict/);
    expect(attemptOf(found, "git").value).toMatch(/alias/);
    expect(attemptOf(found, "rbash").value).toMatch(/shell/);
  });

  it("refuses the supervisors and wrappers that run the program their arguments name (chpst, setuidgid, tcpserver, pee, rlwrap, …)", () => {
    expectRefused(found, STRICT_DENIED_SUPERVISORS, /refused under --strict/);
  });

  it("judges the program a name really runs: a symlink to a shell under another name is refused, naming it", () => {
    expectRefused(found, ["tacit-innocent-tool"], /refused under --strict \(it runs \/.*\): it is a shell/);
  });

  it("still runs ordinary tools, under their own names and others", () => {
    expectGranted(found, ["printf", "pwd", "ls", "wc", "ps"]);
    expect(attemptOf(found, "printf alias runs")).toEqual({ status: "ok", value: "alias ok" });
  });
});

/** What a test of a SharedStrictRun does with its part of the run: its script and flags, as it would give `tacit`. */
type StrictRunOf = (script: string, flags: string[]) => Promise<CliResult>;

/**
 * One `tacit run --strict` for many tests that each try commands and then look at what became
 * of them: each tacit start costs about a fifth of a second of CPU, and these tests are many.
 * Each test's body is as it would be with a run of its own, but gets its run from `run`. In
 * beforeAll (`start`) every body runs up to its `run`, all at once; once each has asked (or has
 * ended without asking: it failed first), one tacit runs every script in turn, each in a block of
 * its own whose attempts are labelled with the test's number, and each body goes on with a result
 * of its own: its attempts under its own labels, the whole output (a canary any test looks for is
 * looked for in every test's output), and exit code 1 with the error where its script threw, as
 * its own run would have ended. The test itself awaits its body, so each fails on its own.
 */
class SharedStrictRun {
  private readonly bodies: Array<(run: StrictRunOf) => Promise<void>> = [];
  private outcomes: Array<Promise<void>> = [];

  test(name: string, body: (run: StrictRunOf) => Promise<void>): void {
    const index = this.bodies.length;
    this.bodies.push(body);
    it(name, () => this.outcomes[index] ?? Promise.reject(new Error("the shared --strict run never started (its beforeAll failed)")));
  }

  async start(): Promise<void> {
    const asked: Array<{ script: string; limitMs: number; answer: (r: CliResult) => void; fail: (error: unknown) => void }> = [];
    let unsettled = this.bodies.length;
    let allAsked = (): void => undefined;
    const everyoneAsked = new Promise<void>((resolve) => (allAsked = resolve));
    if (unsettled === 0) allAsked();
    this.outcomes = this.bodies.map((body, index) => {
      let settled = false;
      const settle = (): void => {
        if (settled) return;
        settled = true;
        if (--unsettled === 0) allAsked();
      };
      const run: StrictRunOf = (script, flags) =>
        new Promise((answer, fail) => {
          if (!script.startsWith(ATTEMPT_PRELUDE)) throw new Error("a shared --strict run takes scripts that begin with ATTEMPT_PRELUDE");
          const limit = flags.length === 1 ? null : flags.length === 3 && flags[1] === "--exec-timeout-ms" ? Number(flags[2]) : NaN;
          if (flags[0] !== "--strict" || Number.isNaN(limit)) throw new Error(`a shared --strict run takes --strict and at most --exec-timeout-ms, not ${flags.join(" ")}`);
          asked[index] = { script: script.slice(ATTEMPT_PRELUDE.length), limitMs: limit ?? DEFAULT_TIMEOUT_MS, answer, fail };
          settle();
        });
      const outcome = body(run);
      outcome.then(settle, settle);
      outcome.catch(() => undefined); // Reported by its test, which awaits it.
      return outcome;
    });
    await everyoneAsked;
    const parts = asked.flatMap((part, index) => (part === undefined ? [] : [{ ...part, index }]));
    const script = `${ATTEMPT_PRELUDE}
const attemptAs = attempt;
${parts
  .map(
    ({ index, script }) => `{
const attempt = (label: string, f: () => unknown): void => attemptAs(${lit(`${index}:`)} + label, f);
try {
${script}
} catch (e) {
  println(${lit(`@@${index}:${PART_THREW}\tError\t`)} + JSON.stringify(String(e)));
}
}`,
  )
  .join("\n")}
`;
    // Each part keeps the time it had alone.
    const limitMs = parts.reduce((sum, part) => sum + part.limitMs, 0);
    let r: CliResult;
    try {
      r = await tacit(root, script, ["--strict", "--exec-timeout-ms", String(limitMs)]);
    } catch (error) {
      for (const part of parts) part.fail(error);
      throw error;
    }
    for (const { index, answer } of parts) {
      const own = `@@${index}:`;
      const stdout = r.stdout
        .split("\n")
        .map((line) => (line.startsWith(own) ? `@@${line.slice(own.length)}` : line))
        .join("\n");
      const threw = attempts(stdout).get(PART_THREW);
      answer(threw === undefined ? { ...r, stdout } : { code: 1, stdout, stderr: `${r.stderr}${String(threw.value)}\n` });
    }
  }
}

/** The label of the line a part of a SharedStrictRun prints where its script threw. */
const PART_THREW = "!threw";

describe("--strict and the tools that print a file they are given", () => {
  const strictRun = new SharedStrictRun();
  // The bodies' own limits were up to 180 s each, for a build that runs what they try.
  beforeAll(() => strictRun.start(), 600_000);
  // A fourth review printed a file outside the allowed roots under --strict through tools off
  // the denylist: basenc --base64, ptx, column, ul, jq -R, bzcat -f and zstdcat -f (the
  // compressors pass a file that is not compressed through unchanged), and the like.
  const PRINTERS: Array<[string, string[]]> = [
    ["basenc", ["--base64"]], ["ptx", []], ["column", []], ["ul", []], ["jq", ["-R", "."]], ["yq", ["-R", "."]],
    ["bzcat", ["-f"]], ["bunzip2", ["-cf"]], ["zstdcat", ["-f"]], ["unzstd", ["-cf"]], ["lz4cat", ["-f"]], ["zdiff", []], ["zegrep", ["."]],
    ["bzgrep", ["."]], ["zstdgrep", ["."]], ["pv", ["-q"]],
    // A fifth review: roff preprocessors pass their input through (soelim, preconv, tbl, eqn,
    // pic), terminfo compilers quote each entry they cannot parse (tic, captoinfo, infotocap),
    // and gettext's catalog tools each word they do not know (msgcat: keyword "<word>" unknown).
    ["soelim", []], ["preconv", []], ["tbl", []], ["gtbl", []], ["eqn", []], ["neqn", []], ["pic", []], ["gpic", []],
    ["tic", []], ["captoinfo", []], ["infotocap", []], ["msgcat", []], ["msgattrib", []], ["msgconv", []], ["msgen", []],
    ["msggrep", []], ["msguniq", []], ["msgfmt", []], ["msgmerge", []], ["msgcomm", []], ["xgettext", []],
    // The same review: xz's and lzma's grep, diff and pager scripts (xz -cdf passes a plain file
    // through), rgrep, ICU's and Perl's iconv (uconv, piconv), tarcat, splain, rpcgen, GnuPG's
    // gpgparsemail and dumpsexp, and LLVM's assembler, TableGen and yaml2obj (they quote the
    // line they cannot parse).
    ["xzgrep", ["."]], ["xzegrep", ["."]], ["xzfgrep", ["c"]], ["xzless", []], ["xzmore", []], ["xzdiff", []], ["lzgrep", ["."]],
    ["lzegrep", ["."]], ["lzfgrep", ["c"]], ["lzless", []], ["lzmore", []], ["rgrep", ["."]], ["uconv", []], ["piconv", []],
    ["tarcat", []], ["splain", []], ["rpcgen", []], ["gpgparsemail", []], ["dumpsexp", []], ["llvm-mc", []], ["llvm-mc-14", []],
    ["llvm-tblgen", []], ["llvm-tblgen-14", []], ["yaml2obj", []], ["yaml2obj-14", []],
    // And tools that copy a file into one the script can read (`ar q x.a FILE; ar p x.a`,
    // `objcopy -I binary`, ptar, jar, gpgtar) or pass it through (`uncompress -cf`, gzip's).
    ["uncompress", ["-cf"]], ["ar", ["p"]], ["llvm-ar", ["p"]], ["objcopy", ["-I", "binary", "-O", "binary"]],
    ["llvm-objcopy", ["-I", "binary", "-O", "binary"]], ["ptar", ["-c", "-f", "copy.tar"]], ["jar", ["cf", "copy.jar"]], ["gpgtar", []],
    // A sixth review: ldconfig -f FILE quotes each line of the file it reads as its configuration.
    ["ldconfig", ["-N", "-X", "-v", "-f"]],
    // An eighth review: yaml-bench --canonical prints the file as a YAML string, llvm-ifs and
    // makeconv quote its first line, xsubpp passes its lines into the C it prints.
    ["yaml-bench-14", ["--canonical"]], ["yaml-bench", ["--canonical"]], ["llvm-ifs-14", []], ["llvm-ifs", []], ["makeconv", []], ["xsubpp", []],
  ];
  strictRun.test("refuses them, so none prints the file", async (run) => {
    const { dir, cleanup } = realTempDir("tacit-strict-printers-");
    try {
      const { canary, secret } = secretOutside(dir, (canary) => `${canary} ${canary}\n`);
      const script = `${ATTEMPT_PRELUDE}
for (const [command, args] of ${JSON.stringify(PRINTERS)} as Array<[string, string[]]>) {
  attempt(command, () => {
    const r = requestExecPermission([command], (p) => p.exec(command, [...args, ${JSON.stringify(secret)}, ...(command === "zdiff" ? ["/dev/null"] : [])]));
    return r.stdout + r.stderr;
  });
}
`;
      const r = await run(script, ["--strict"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      // Names not installed here are refused all the same (the policy judges the name first).
      expectRefused(found, PRINTERS.map(([command]) => command), /refused under --strict/);
      expect(r.stdout).not.toContain(canary);
      expect(r.stdout).not.toContain(Buffer.from(canary).toString("base64").slice(0, 20));
    } finally {
      cleanup();
    }
  });

  it("refuses bin2c, which printed the --config file's LLM key in hex, and colcrt, escapesrc and the JSON tools, which print or copy any file", async () => {
    // A seventh review read the operator's LLM key under --strict: `bin2c CONFIG` printed the
    // --config file (outside the allowed roots, and refused to scripts) as hex bytes, which the
    // script decoded and printed whole; the key is masked in replies as text and base64 only.
    // colcrt printed a file, escapesrc copied one into the roots, and jp.py, jsonpatch,
    // jsonpath_ng, jsondiff and jsonpointer printed a JSON file.
    const { dir, cleanup } = realTempDir("tacit-strict-hex-");
    try {
      const key = `sk-test-${makeCanary()}`;
      const config = path.join(dir, "tacit.json");
      writeFileSync(config, JSON.stringify({ libraryConfig: { strictMode: true, llm: { baseUrl: "http://127.0.0.1:9/v1", apiKey: key, model: "m" } } }));
      const { canary, secret } = secretOutside(dir);
      const data = path.join(dir, "data.json");
      writeFileSync(data, JSON.stringify({ canary }));
      writeFileSync(path.join(root, "hex-empty.json"), "{}");
      writeFileSync(path.join(root, "hex-patch.json"), "[]");
      writeFileSync(path.join(root, "hex-pointer.txt"), "/canary\n");
      const RUNS: Array<[string, string, string[]]> = [
        ["colcrt", "colcrt", [secret]],
        ["escapesrc", "escapesrc", [secret, "hex-copy.txt"]],
        ["jp.py", "jp.py", ["-f", data, "@"]],
        ["jsonpatch", "jsonpatch", [data, "hex-patch.json"]],
        ["jsonpath_ng", "jsonpath_ng", ["$", data]],
        ["jsondiff", "jsondiff", ["hex-empty.json", data]],
        ["jsonpointer", "jsonpointer", ["-f", "hex-pointer.txt", data]],
      ];
      const script = `${ATTEMPT_PRELUDE}
attempt("bin2c", () => {
  const out = requestExecPermission(["bin2c"], (p) => p.exec("bin2c", [${JSON.stringify(config)}]).stdout);
  return String.fromCharCode(...(out.match(/0x[0-9a-f]{2}/g) ?? []).map((byte) => parseInt(byte, 16)));
});
for (const [label, command, args] of ${JSON.stringify(RUNS)} as Array<[string, string, string[]]>) {
  attempt(label, () => {
    const r = requestExecPermission([command], (p) => p.exec(command, args, { timeoutMs: 30000 }));
    return r.stdout + r.stderr;
  });
}
`;
      const r = await tacit(root, script, ["--config", config, "--exec-timeout-ms", "120000"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), ["bin2c", ...RUNS.map(([label]) => label)], /refused under --strict/);
      expect(r.stdout).not.toContain(key);
      expect(r.stdout).not.toContain(canary);
      expect(existsSync(path.join(root, "hex-copy.txt"))).toBe(false);
    } finally {
      cleanup();
    }
  }, 150_000);

  strictRun.test("refuses systemd-tmpfiles, update-alternatives and systemd-sysusers, which change files past the roots, and cppw and cpgr", async (run) => {
    // A seventh review, under --strict as root: systemd-tmpfiles --create --remove CONF, with a
    // configuration the script wrote in its root, overwrote (f+), appended to (w+) and removed (r)
    // files outside the allowed roots; update-alternatives --install made a link outside them (as
    // ln, which --strict refuses); systemd-sysusers --root added a user to a passwd file outside
    // them. cppw and cpgr (vipw's siblings) copy a file over /etc/passwd and /etc/group: they are
    // asked for their usage only, which changes nothing either way.
    const { dir, cleanup } = realTempDir("tacit-strict-system-");
    try {
      const at = (name: string) => path.join(dir, name);
      writeFileSync(at("overwrite.txt"), "keep\n");
      writeFileSync(at("append.txt"), "keep\n");
      writeFileSync(at("remove.txt"), "keep\n");
      mkdirSync(at("alternatives/admin"), { recursive: true });
      mkdirSync(at("alternatives/links"), { recursive: true });
      mkdirSync(at("sysroot/etc"), { recursive: true });
      const tmpfiles = path.join(root, "system-tmpfiles.conf");
      writeFileSync(tmpfiles, `f+ ${at("overwrite.txt")} 0644 - - - changed\nw+ ${at("append.txt")} - - - - changed\nr ${at("remove.txt")}\n`);
      const sysusers = path.join(root, "system-sysusers.conf");
      writeFileSync(sysusers, 'u tacit-review - "x" /tmp\n');
      const RUNS: Array<[string, string[]]> = [
        ["systemd-tmpfiles", ["--create", "--remove", tmpfiles]],
        ["update-alternatives", ["--altdir", at("alternatives/links"), "--admindir", at("alternatives/admin"), "--install", at("link"), "tacit-review", "/bin/sh", "1"]],
        ["systemd-sysusers", [`--root=${at("sysroot")}`, sysusers]],
        ["cppw", ["--help"]],
        ["cpgr", ["--help"]],
      ];
      const script = attemptRuns(RUNS);
      const r = await run(script, ["--strict"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), RUNS.map(([command]) => command), /refused under --strict/);
      for (const name of ["overwrite.txt", "append.txt", "remove.txt"]) expect(readFileSync(at(name), "utf8"), name).toBe("keep\n");
      expect(existsSync(at("link"))).toBe(false);
      expect(existsSync(at("sysroot/etc/passwd"))).toBe(false);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses utmpdump, last, cscope, llc, llvm-mca and cudafe++, which print the file they are given", async (run) => {
    // A seventh review printed a file outside the allowed roots under --strict with utmpdump FILE
    // and last -f FILE (its bytes read as login records, their text fields printed), cscope -L -6
    // . FILE (every line), and llc, llvm-mca and cudafe++ (the line they cannot parse, quoted).
    const { dir, cleanup } = realTempDir("tacit-strict-records-");
    try {
      // Long enough for whole login records (384 bytes each), each piece of it carrying the canary.
      const { canary, secret } = secretOutside(dir, (canary) => `${canary} `.repeat(64) + "\n");
      const RUNS: Array<[string, string[]]> = [
        ["utmpdump", [secret]],
        ["last", ["-f", secret]],
        ["cscope", ["-L", "-6", ".", secret]],
        ["llc", ["-o", "/dev/null", secret]],
        ["llvm-mca", [secret]],
        ["cudafe++", [secret]],
      ];
      const script = `${ATTEMPT_PRELUDE}
for (const [command, args] of ${JSON.stringify(RUNS)} as Array<[string, string[]]>) {
  attempt(command, () => {
    const r = requestExecPermission([command], (p) => p.exec(command, args, { timeoutMs: 20000 }));
    return r.stdout + r.stderr;
  });
}
`;
      const r = await run(script, ["--strict", "--exec-timeout-ms", "120000"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), RUNS.map(([command]) => command), /refused under --strict/);
      expect(r.stdout).not.toContain(canary.slice(0, 12));
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses pod2text, pod2man and pod2html, which write any file: a shell startup file outside the roots stays as it was", async (run) => {
    // A seventh review, under --strict: `pod2text x.pod HOME/.bashrc`, with x.pod written by the
    // script in its root, replaced a .bashrc outside the allowed roots with a verbatim paragraph
    // of the script's (`    touch MARKER`), which the next bash ran; pod2man IN OUT and
    // pod2html --outfile wrote any file the same way.
    const { dir, cleanup } = realTempDir("tacit-strict-pod-");
    try {
      const victim = (name: string) => path.join(dir, name);
      for (const name of ["bashrc-text", "bashrc-man", "bashrc-html"]) writeFileSync(victim(name), "echo original\n");
      writeFileSync(path.join(root, "startup.pod"), `=pod\n\n    touch ${path.join(dir, "marker")}\n\n=cut\n`);
      const RUNS: Array<[string, string[]]> = [
        ["pod2text", ["startup.pod", victim("bashrc-text")]],
        ["pod2man", ["startup.pod", victim("bashrc-man")]],
        ["pod2html", ["--infile=startup.pod", `--outfile=${victim("bashrc-html")}`]],
      ];
      const script = attemptRuns(RUNS);
      const r = await run(script, ["--strict"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), RUNS.map(([command]) => command), /refused under --strict/);
      for (const name of ["bashrc-text", "bashrc-man", "bashrc-html"]) expect(readFileSync(victim(name), "utf8"), name).toBe("echo original\n");
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses 2to3, which writes the Python file it is given into any directory", async (run) => {
    // A seventh review, under --strict: `2to3 -n -w -W -o DIR sitecustomize.py`, the module written
    // by the script in its root, copied it into a directory outside the allowed roots (into
    // site-packages it runs in every later Python).
    const { dir, cleanup } = realTempDir("tacit-strict-2to3-");
    try {
      mkdirSync(path.join(root, "py2to3"), { recursive: true });
      writeFileSync(path.join(root, "py2to3", "sitecustomize.py"), `open(${JSON.stringify(path.join(dir, "marker"))}, "w").write("x")\n`);
      const script = `${ATTEMPT_PRELUDE}
for (const command of ["2to3", "2to3-3.11"]) {
  attempt(command, () => requestExecPermission([command], (p) => p.exec(command, ["-n", "-w", "-W", "-o", ${JSON.stringify(dir)}, "sitecustomize.py"], { cwd: "py2to3", timeoutMs: 30000 }).exitCode));
}
`;
      const r = await run(script, ["--strict", "--exec-timeout-ms", "90000"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), ["2to3", "2to3-3.11"], /refused under --strict/);
      expect(existsSync(path.join(dir, "sitecustomize.py"))).toBe(false);
    } finally {
      cleanup();
    }
  });

  it("refuses systemd-analyze, whose cat-config prints any file below /etc, /run or /usr/lib", async (ctx) => {
    // A seventh review printed /etc/shadow under --strict with `systemd-analyze cat-config
    // /etc/shadow` (tacit ran as root); any file below a configuration prefix is printed whole.
    let dir: string;
    try {
      dir = mkdtempSync("/run/tacit-strict-analyze-");
    } catch (error) {
      ctx.skip(true, `cannot make a file below /run here (${(error as Error).message}); nothing to check`);
      return;
    }
    try {
      const canary = makeCanary();
      const secret = path.join(dir, "secret.conf");
      writeFileSync(secret, `${canary}\n`);
      const script = `${ATTEMPT_PRELUDE}
attempt("systemd-analyze", () => requestExecPermission(["systemd-analyze"], (p) => p.exec("systemd-analyze", ["cat-config", ${JSON.stringify(secret)}]).stdout));
`;
      const r = await tacit(root, script, ["--strict"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), ["systemd-analyze"], /refused under --strict/);
      expect(r.stdout).not.toContain(canary);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  strictRun.test("refuses systemd-firstboot, which sets root's password", async (run) => {
    // A seventh review, under --strict: systemd-firstboot --root-password=PW --force sets the
    // root password (shown with --root=DIR, a directory outside the allowed roots, where it
    // wrote DIR/etc/passwd and DIR/etc/shadow; without --root it is the system's).
    const { dir, cleanup } = realTempDir("tacit-strict-firstboot-");
    try {
      mkdirSync(path.join(dir, "etc"));
      const script = `${ATTEMPT_PRELUDE}
attempt("systemd-firstboot", () => requestExecPermission(["systemd-firstboot"], (p) => p.exec("systemd-firstboot", [${JSON.stringify(`--root=${dir}`)}, "--root-password=chosen-by-the-script", "--force"]).exitCode));
`;
      const r = await run(script, ["--strict"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), ["systemd-firstboot"], /refused under --strict: it is a privilege or credential tool/);
      expect(existsSync(path.join(dir, "etc", "shadow"))).toBe(false);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses ucf, which installs the file it is given at any path outside the roots", async (run) => {
    // A seventh review, under --strict: `ucf --debconf-ok new.conf DEST`, new.conf written by the
    // script in its root, created DEST outside the allowed roots with the script's content
    // (/etc/cron.d/job would be run by cron as root). --state-dir keeps the test off the
    // system's ucf records.
    const { dir, cleanup } = realTempDir("tacit-strict-ucf-");
    try {
      writeFileSync(path.join(root, "ucf-new.conf"), "content of the script's\n");
      const dest = path.join(dir, "installed.conf");
      const script = `${ATTEMPT_PRELUDE}
attempt("ucf", () => requestExecPermission(["ucf"], (p) => p.exec("ucf", ["--state-dir", ${JSON.stringify(path.join(dir, "state"))}, "--debconf-ok", "ucf-new.conf", ${JSON.stringify(dest)}], { timeoutMs: 30000 }).exitCode));
`;
      const r = await run(script, ["--strict", "--exec-timeout-ms", "60000"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), ["ucf"], /refused under --strict/);
      expect(existsSync(dest)).toBe(false);
    } finally {
      cleanup();
    }
  });

  it("refuses strip, ranlib and elfedit: strip -o put a shell on PATH under a name --strict ran, and each rewrote a file outside the roots", async () => {
    // An eighth review, under --strict: `strip -o PATHDIR/tacit-strip-helper /bin/bash` copied
    // bash, under a name no denylist knows, into a directory on PATH outside the allowed roots;
    // `tacit-strip-helper -c CMD` then ran under --strict (its real name is its own) and wrote its
    // marker. strip, ranlib and elfedit also rewrote a program and an archive there in place.
    const { dir, cleanup } = realTempDir("tacit-strict-strip-");
    try {
      const at = (name: string) => path.join(dir, name);
      mkdirSync(at("bin"));
      copyFileSync("/bin/true", at("program"));
      copyFileSync("/bin/true", at("program-elfedit"));
      execFileSync("ar", ["qcS", at("lib.a"), "/usr/lib/x86_64-linux-gnu/crti.o"]);
      const before = (name: string) => readFileSync(at(name));
      const originals = new Map(["program", "program-elfedit", "lib.a"].map((name) => [name, before(name)]));
      const helper = at("bin/tacit-strip-helper");
      const RUNS: Array<[string, string, string[]]> = [
        ["strip -o", "strip", ["-o", helper, "/bin/bash"]],
        ["x86_64-linux-gnu-strip -o", "x86_64-linux-gnu-strip", ["-o", helper, "/bin/bash"]],
        ["tacit-strip-helper", "tacit-strip-helper", ["-c", `touch ${at("marker")}`]],
        ["strip", "strip", [at("program")]],
        ["ranlib", "ranlib", [at("lib.a")]],
        ["elfedit", "elfedit", ["--output-osabi=FreeBSD", at("program-elfedit")]],
      ];
      const script = `${ATTEMPT_PRELUDE}
for (const [label, command, args] of ${JSON.stringify(RUNS)} as Array<[string, string, string[]]>) {
  attempt(label, () => requestExecPermission([command], (p) => p.exec(command, args).exitCode));
}
`;
      const r = await tacit(root, script, ["--strict"], { PATH: `${at("bin")}:${process.env.PATH ?? "/usr/bin:/bin"}` });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["strip -o", "x86_64-linux-gnu-strip -o", "strip", "ranlib", "elfedit"], /refused under --strict: it is a file tool/);
      expect(existsSync(helper)).toBe(false);
      expect(existsSync(at("marker"))).toBe(false);
      for (const [name, content] of originals) expect(before(name).equals(content), name).toBe(true);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses Python-RSA's tools, which read and write any file: a file outside the roots is neither printed nor overwritten", async (run) => {
    // An eighth review, under --strict: with a key pair pyrsa-keygen made in the root,
    // `pyrsa-encrypt -i FILE -o enc.bin pub.pem` then `pyrsa-decrypt -i enc.bin priv.pem` printed a
    // file outside the allowed roots, and `pyrsa-decrypt -i payload.bin -o FILE priv.pem` replaced
    // a .bashrc there with a command line of the script's. The key pair and the payload are made
    // here beforehand too, so the last two steps are tried whatever becomes of the first ones.
    const { dir, cleanup } = realTempDir("tacit-strict-pyrsa-");
    try {
      const { canary, secret } = secretOutside(dir);
      const bashrc = path.join(dir, "bashrc");
      writeFileSync(bashrc, "echo original\n");
      const work = path.join(root, "pyrsa");
      mkdirSync(work, { recursive: true });
      writeFileSync(path.join(work, "payload.txt"), `touch ${path.join(dir, "marker")}\n`);
      try {
        execFileSync("pyrsa-keygen", ["-o", "ready-priv.pem", "--pubout", "ready-pub.pem", "1024"], { cwd: work, stdio: "ignore" });
        execFileSync("pyrsa-encrypt", ["-i", "payload.txt", "-o", "ready-payload.bin", "ready-pub.pem"], { cwd: work, stdio: "ignore" });
      } catch {
        // Python-RSA is not installed here: the names are refused all the same.
      }
      const RUNS: Array<[string, string, string[]]> = [
        ["pyrsa-keygen", "pyrsa-keygen", ["-o", "priv.pem", "--pubout", "pub.pem", "1024"]],
        ["pyrsa-encrypt -i", "pyrsa-encrypt", ["-i", secret, "-o", "secret.bin", "pub.pem"]],
        ["pyrsa-decrypt", "pyrsa-decrypt", ["-i", "secret.bin", "priv.pem"]],
        ["pyrsa-decrypt -o", "pyrsa-decrypt", ["-i", "ready-payload.bin", "-o", bashrc, "ready-priv.pem"]],
        ["pyrsa-sign", "pyrsa-sign", ["-i", secret, "ready-priv.pem", "SHA-256"]],
        ["pyrsa-priv2pub", "pyrsa-priv2pub", ["-i", "ready-priv.pem", "-o", path.join(dir, "written.pem")]],
      ];
      const script = `${ATTEMPT_PRELUDE}
for (const [label, command, args] of ${JSON.stringify(RUNS)} as Array<[string, string, string[]]>) {
  attempt(label, () => {
    const r = requestExecPermission([command], (p) => p.exec(command, args, { cwd: ${JSON.stringify(work)}, timeoutMs: 30000 }));
    return r.stdout + r.stderr;
  });
}
`;
      const r = await run(script, ["--strict", "--exec-timeout-ms", "120000"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), RUNS.map(([label]) => label), /refused under --strict.*: it is a file tool/);
      expect(r.stdout).not.toContain(canary);
      expect(readFileSync(bashrc, "utf8")).toBe("echo original\n");
      expect(existsSync(path.join(dir, "written.pem"))).toBe(false);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses setcap and chattr, which changed a program's capabilities and a file's attributes outside the roots, and sysctl and hostname", async (run) => {
    // An eighth review, under --strict (tacit running as root): `setcap cap_setuid+ep PROGRAM`
    // let a program outside the allowed roots become root, and `chattr +A FILE` set an attribute
    // on a file there. sysctl and hostname change the machine itself; they are asked only for a
    // dry run and their usage, which changes nothing either way.
    const { dir, cleanup } = realTempDir("tacit-strict-attributes-");
    try {
      const program = path.join(dir, "program");
      copyFileSync("/bin/true", program);
      const file = path.join(dir, "file.txt");
      writeFileSync(file, "keep\n");
      const capabilities = (): string => execFileSync("getcap", [program], { encoding: "utf8" });
      const attributes = (): string => execFileSync("lsattr", ["-d", file], { encoding: "utf8" });
      const before = { capabilities: capabilities(), attributes: attributes() };
      const RUNS: Array<[string, string[]]> = [
        ["setcap", ["cap_setuid+ep", program]],
        ["chattr", ["+A", file]],
        ["sysctl", ["--dry-run", "-w", "kernel.hostname=tacit-review"]],
        ["hostname", ["--help"]],
      ];
      const script = attemptRuns(RUNS);
      const r = await run(script, ["--strict"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), RUNS.map(([command]) => command), /refused under --strict: it is a tool that changes the settings of the system or of any file/);
      expect(capabilities()).toBe(before.capabilities);
      expect(attributes()).toBe(before.attributes);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses service, the account tools, gapplication and PostgreSQL's server tools: each passed --strict", async (run) => {
    // The sixth review listed them as passing --strict: service runs init scripts, the account
    // tools change logins and passwords (chpasswd reads user:password on its input: a tacit run
    // as root changed root's), gapplication launches applications, and PostgreSQL's server
    // runs the commands its settings name. Each is asked for only its --help (the previous build
    // ran every one of them, exit 0, as root here), so a build without the refusal changes nothing.
    const names = ["service", "invoke-rc.d", "useradd", "usermod", "userdel", "chpasswd", "newusers", "passwd", "chsh", "visudo", "gapplication", "pg_ctl", "postgres", "initdb"];
    const script = `${ATTEMPT_PRELUDE}
for (const command of ${JSON.stringify(names)}) {
  attempt(command, () => requestExecPermission([command], (p) => p.exec(command, ["--help"]).exitCode));
}
`;
    const r = await run(script, ["--strict"]);
    expect(r.code, r.stderr).toBe(0);
    expectRefused(attempts(r.stdout), names, /refused under --strict: it is (a command runner|a privilege or credential tool)/);
  });

  strictRun.test("refuses LLVM's not, which runs the command it is given (not-14 sh -c …), and other runners off the list", async (run) => {
    // A fifth review ran a shell under --strict through `not-14 sh -c …` (LLVM's test helper
    // runs its arguments as a command and inverts the exit status).
    const { dir, cleanup } = realTempDir("tacit-strict-not-");
    try {
      const marker = path.join(dir, "marker");
      const script = `${ATTEMPT_PRELUDE}
for (const command of ["not-14", "not", "luit", "debconf", "vgdb"]) {
  attempt(command, () => requestExecPermission([command], (p) => p.exec(command, ["sh", "-c", ${JSON.stringify(`echo ran > ${marker}`)}]).exitCode));
}
`;
      const r = await run(script, ["--strict"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), ["not-14", "not", "luit", "debconf", "vgdb"], /refused under --strict/);
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses ar, which copies any file into an archive the script then prints (ar q, then ar p), and enc2xs and bzexe, which rewrite the file they are given", async (run) => {
    // A fifth review printed a file outside the allowed roots under --strict with `ar q x.a
    // FILE` then `ar p x.a`, and emptied one with `enc2xs FILE`.
    const { dir, cleanup } = realTempDir("tacit-strict-ar-");
    try {
      const { canary, secret } = secretOutside(dir);
      const program = path.join(dir, "program");
      copyFileSync("/bin/true", program);
      const script = `${ATTEMPT_PRELUDE}
attempt("ar q", () => requestExecPermission(["ar"], (p) => p.exec("ar", ["q", "copy.a", ${JSON.stringify(secret)}]).exitCode));
attempt("ar p", () => requestExecPermission(["ar"], (p) => p.exec("ar", ["p", "copy.a"]).stdout));
attempt("enc2xs", () => requestExecPermission(["enc2xs"], (p) => p.exec("enc2xs", [${JSON.stringify(secret)}]).exitCode));
attempt("bzexe", () => requestExecPermission(["bzexe"], (p) => p.exec("bzexe", [${JSON.stringify(program)}]).exitCode));
`;
      const r = await run(script, ["--strict"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), ["ar q", "ar p", "enc2xs", "bzexe"], /refused under --strict/);
      expect(r.stdout).not.toContain(canary);
      expect(readFileSync(secret, "utf8")).toBe(`${canary}\n`);
      // An eighth review: bzexe rewrote a program outside the roots in place (a shell script with
      // the program compressed after it).
      expect(readFileSync(program).equals(readFileSync("/bin/true")), "bzexe").toBe(true);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses unlink and link, which delete or hard-link any file past the allowed roots", async (run) => {
    // A fifth review deleted a file outside the allowed roots with `unlink FILE` under --strict
    // (rm was refused); `link FILE ./x` makes a second name for any file inside the roots.
    const { dir, cleanup } = realTempDir("tacit-strict-unlink-");
    try {
      const victim = path.join(dir, "keep.txt");
      writeFileSync(victim, "keep\n");
      const script = `${ATTEMPT_PRELUDE}
attempt("unlink", () => requestExecPermission(["unlink"], (p) => p.exec("unlink", [${JSON.stringify(victim)}]).exitCode));
attempt("link", () => requestExecPermission(["link"], (p) => p.exec("link", [${JSON.stringify(victim)}, "linked.txt"]).exitCode));
`;
      const r = await run(script, ["--strict"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), ["unlink", "link"], /refused under --strict/);
      expect(existsSync(victim)).toBe(true);
      expect(existsSync(path.join(root, "linked.txt"))).toBe(false);
    } finally {
      cleanup();
    }
  });

  strictRun.test("knows a family of several parts by a prefixed or versioned name: x86_64-linux-gnu-gp-collect-app ran no shell", async (run) => {
    // An eighth review ran a shell under --strict through `x86_64-linux-gnu-gp-collect-app -o
    // run.er /bin/sh -c CMD` (binutils' gprofng collector, under its target-prefixed name):
    // gp-collect-app was refused only as its whole name, and the name's parts (gp, collect, app)
    // name no family. Names of such families with a prefix or a version are refused too.
    const { dir, cleanup } = realTempDir("tacit-strict-prefixed-");
    try {
      const marker = path.join(dir, "marker");
      const script = `${ATTEMPT_PRELUDE}
attempt("x86_64-linux-gnu-gp-collect-app", () => requestExecPermission(["x86_64-linux-gnu-gp-collect-app"], (p) =>
  p.exec("x86_64-linux-gnu-gp-collect-app", ["-o", "prefixed.er", "/bin/sh", "-c", ${JSON.stringify(`touch ${marker}`)}], { timeoutMs: 30000 }).exitCode));
for (const command of ["x86_64-linux-gnu-llvm-mca", "llvm-reduce-15", "tacit-systemd-run", "x86_64-linux-gnu-pg_dump"]) {
  attempt(command, () => requestExecPermission([command], () => "granted"));
}
attempt("x86_64-linux-gnu-readelf", () => requestExecPermission(["x86_64-linux-gnu-readelf"], () => "granted"));
`;
      const r = await run(script, ["--strict", "--exec-timeout-ms", "60000"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["x86_64-linux-gnu-gp-collect-app"], /refused under --strict: it is a command runner \(gp-collect-app\)/);
      expectRefused(found, ["x86_64-linux-gnu-llvm-mca", "llvm-reduce-15", "tacit-systemd-run", "x86_64-linux-gnu-pg_dump"], /refused under --strict/);
      expect(existsSync(marker)).toBe(false);
      // A cross tool's target prefix is not setarch's alias x86_64.
      expect(attemptOf(found, "x86_64-linux-gnu-readelf")).toEqual({ status: "ok", value: "granted" });
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses direnv, rustup, dotenv and gio, which run any command they are given, and ctags, gio cat, terraform console, objdump, FileCheck and docutils, which print any file", async (run) => {
    // A sixth review ran commands under --strict through `direnv exec DIR CMD`, `rustup run
    // stable CMD`, `dotenv -f FILE run CMD` (python-dotenv) and `gio launch x.desktop` (its Exec
    // line), and printed a file outside the allowed roots with `ctags -x --regex-…`, `gio cat`
    // and terraform console's file(), and with objdump -s, FileCheck --dump-input and docutils'
    // rst2html.py. Names not installed here are refused all the same.
    const { dir, cleanup } = realTempDir("tacit-strict-runners-");
    try {
      const { canary, secret } = secretOutside(dir);
      const marker = (name: string) => path.join(dir, `marker-${name}`);
      const envFile = path.join(dir, "vars.env");
      writeFileSync(envFile, "A=1\n");
      const desktop = path.join(root, "x.desktop");
      writeFileSync(desktop, `[Desktop Entry]\nType=Application\nName=x\nExec=touch ${marker("gio")}\n`);
      const RUNS: Array<[string, string, string[], string | null]> = [
        ["direnv exec", "direnv", ["exec", "/", "touch", marker("direnv")], null],
        ["rustup run", "rustup", ["run", "stable", "touch", marker("rustup")], null],
        ["dotenv run", "dotenv", ["-f", envFile, "run", "touch", marker("dotenv")], null],
        ["gio launch", "gio", ["launch", desktop], null],
        ["gio cat", "gio", ["cat", secret], null],
        ["ctags -x", "ctags", ["-x", "--language-force=Sh", "--regex-Sh=/^(.*)$/\\1/x/", secret], null],
        ["terraform console", "terraform", ["console"], `file(${JSON.stringify(secret)})\n`],
        ["objdump -s", "objdump", ["-b", "binary", "-m", "i386", "-s", secret], null],
        ["FileCheck", "FileCheck-14", ["--dump-input=always", `--input-file=${secret}`, desktop], null],
        ["docutils", "docutils", [secret], null],
        ["rst2html.py", "rst2html.py", [secret], null],
        ["rst2man.py", "rst2man.py", [secret], null],
      ];
      const script = `${ATTEMPT_PRELUDE}
for (const [label, command, args, input] of ${JSON.stringify(RUNS)} as Array<[string, string, string[], string | null]>) {
  attempt(label, () => {
    const r = requestExecPermission([command], (p) => p.exec(command, args, input === null ? {} : { input, timeoutMs: 20000 }));
    return r.stdout + r.stderr;
  });
}
`;
      const r = await run(script, ["--strict", "--exec-timeout-ms", "60000"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), RUNS.map(([label]) => label), /refused under --strict/);
      for (const name of ["direnv", "rustup", "dotenv", "gio"]) expect(existsSync(marker(name)), name).toBe(false);
      expect(r.stdout).not.toContain(canary);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses py.test, flask, isympy and idle, which run Python, and fallocate, savelog and mkswap, which change any file", async (run) => {
    // A sixth review ran Python under --strict through `py.test DIR` (its conftest.py), `flask
    // --app app.py routes` (the module is imported) and isympy (Python on standard input), and
    // zeroed the start of a file outside the allowed roots with `fallocate -p -o 0 -l 8 FILE`
    // and renamed one away with `savelog FILE`. Names not installed here are refused all the same.
    const { dir, cleanup } = realTempDir("tacit-strict-python-");
    try {
      const marker = (name: string) => path.join(dir, `marker-${name}`);
      writeFileSync(path.join(dir, "conftest.py"), `open(${JSON.stringify(marker("pytest"))}, "w").write("x")\n`);
      writeFileSync(path.join(dir, "app.py"), `open(${JSON.stringify(marker("flask"))}, "w").write("x")\n`);
      const victim = path.join(dir, "victim.txt");
      const content = "keep this content as it is 0123456789\n";
      writeFileSync(victim, content);
      const RUNS: Array<[string, string, string[], string | null]> = [
        ["py.test", "py.test", ["-q", dir], null],
        ["flask", "flask", ["--app", path.join(dir, "app.py"), "routes"], null],
        ["isympy", "isympy", ["-q"], `open(${JSON.stringify(marker("isympy"))}, "w").write("x")\n`],
        ["idle3", "idle3", ["-c", `open(${JSON.stringify(marker("idle"))}, "w").write("x")`], null],
        ["fallocate", "fallocate", ["-p", "-o", "0", "-l", "8", victim], null],
        ["savelog", "savelog", [victim], null],
        ["mkswap", "mkswap", [victim], null],
      ];
      const script = `${ATTEMPT_PRELUDE}
for (const [label, command, args, input] of ${JSON.stringify(RUNS)} as Array<[string, string, string[], string | null]>) {
  attempt(label, () => requestExecPermission([command], (p) => p.exec(command, args, input === null ? { timeoutMs: 20000 } : { input, timeoutMs: 20000 }).exitCode));
}
`;
      const r = await run(script, ["--strict", "--exec-timeout-ms", "60000"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), RUNS.map(([label]) => label), /refused under --strict/);
      for (const name of ["pytest", "flask", "isympy", "idle"]) expect(existsSync(marker(name)), name).toBe(false);
      expect(readFileSync(victim, "utf8")).toBe(content);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses llvm-reduce, kpt and pyenv, which run a program they are given, and hypothesis and cfn-lint, which import Python from the project", async (run) => {
    // A seventh review ran commands and Python under --strict through `llvm-reduce
    // --test=/bin/sh --test-arg=-c --test-arg=CMD FILE.ll`, `kpt fn eval --exec CMDLINE DIR`,
    // `pyenv exec python3 -c CODE`, `hypothesis write MODULE.f` (the module, written by the
    // script in the working directory, is imported) and `cfn-lint --append-rules DIR` (the
    // Python files there are imported as rules). Each wrote its marker, exit 0 but hypothesis.
    const { dir, cleanup } = realTempDir("tacit-strict-loaders-");
    try {
      const marker = (name: string) => path.join(dir, `marker-${name}`);
      const python = (name: string) => `open(${JSON.stringify(marker(name))}, "w").write("x")`;
      mkdirSync(path.join(root, "loaders-rules"), { recursive: true });
      mkdirSync(path.join(root, "loaders-krm"), { recursive: true });
      writeFileSync(path.join(root, "loaders-rules", "evil.py"), `${python("cfn-lint")}\n`);
      writeFileSync(path.join(root, "loaders-template.yaml"), "Resources:\n  B:\n    Type: AWS::S3::Bucket\n");
      writeFileSync(path.join(root, "loaders_module.py"), `${python("hypothesis")}\ndef f(x: int): return x\n`);
      writeFileSync(path.join(root, "loaders-input.ll"), "define void @f() { ret void }\n");
      const RUNS: Array<[string, string[]]> = [
        ["llvm-reduce", ["--test=/bin/sh", "--test-arg=-c", `--test-arg=touch ${marker("llvm-reduce")}`, "loaders-input.ll"]],
        ["kpt", ["fn", "eval", "--exec", `/bin/touch ${marker("kpt")}`, "loaders-krm"]],
        ["pyenv", ["exec", "python3", "-c", python("pyenv")]],
        ["hypothesis", ["write", "loaders_module.f"]],
        ["cfn-lint", ["--append-rules", "loaders-rules", "--", "loaders-template.yaml"]],
      ];
      const script = attemptRuns(RUNS, 30000);
      const r = await run(script, ["--strict", "--exec-timeout-ms", "120000"]);
      expect(r.code, r.stderr).toBe(0);
      const names = RUNS.map(([command]) => command);
      expectRefused(attempts(r.stdout), names, /refused under --strict/);
      for (const name of names) expect(existsSync(marker(name)), name).toBe(false);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses LLVM's JIT linkers and the tools that make their object from IR text: nothing the script wrote runs", async (run) => {
    // An eighth review ran a command under --strict through code it wrote as LLVM IR text:
    // llvm-extract assembled x.ll into bitcode, llvm-lto compiled that into an object, and
    // llvm-jitlink-14 x.o and llvm-rtdyld -execute x.o each ran its main, whose system() call
    // wrote a marker. The object the JIT linkers get here is also made beforehand, outside
    // tacit, so they are tried on a ready one whatever becomes of the first steps.
    const { dir, cleanup } = realTempDir("tacit-strict-jit-");
    try {
      const work = path.join(root, "jit");
      mkdirSync(work, { recursive: true });
      const ir = (marker: string): string => {
        const command = `touch ${path.join(dir, marker)}`;
        const type = `[${command.length + 1} x i8]`;
        return `target triple = "x86_64-pc-linux-gnu"\n@cmd = private constant ${type} c"${command}\\00"\ndeclare i32 @system(i8*)\n` +
          `define i32 @main() {\n  %r = call i32 @system(i8* getelementptr (${type}, ${type}* @cmd, i32 0, i32 0))\n  ret i32 0\n}\n`;
      };
      const EXTRACT = ["--func=main", "--glob=cmd", "-o"];
      const LTO = ["--exported-symbol=main", "--relocation-model=pic", "-o"];
      writeFileSync(path.join(work, "ready.ll"), ir("marker-ready"));
      try {
        execFileSync("llvm-extract", [...EXTRACT, "ready.bc", "ready.ll"], { cwd: work, stdio: "ignore" });
        execFileSync("llvm-lto", [...LTO, "ready.o", "ready.bc"], { cwd: work, stdio: "ignore" });
      } catch {
        // LLVM is not installed here: the names are refused all the same.
      }
      const RUNS: Array<[string, string, string[]]> = [
        ["llvm-extract", "llvm-extract", [...EXTRACT, "x.bc", "x.ll"]],
        ["llvm-extract-14", "llvm-extract-14", [...EXTRACT, "x14.bc", "x.ll"]],
        ["llvm-lto", "llvm-lto", [...LTO, "x.o", "x.bc"]],
        ["llvm-lto2", "llvm-lto2", ["run", "-r=x.bc,main,px", "-r=x.bc,system,", "-o", "x2", "x.bc"]],
        ["llvm-jitlink-14 x.o", "llvm-jitlink-14", ["x.o"]],
        ["llvm-rtdyld x.o", "llvm-rtdyld", ["-execute", "-entry=main", "-dylib=/lib/x86_64-linux-gnu/libc.so.6", "x.o"]],
        ["llvm-jitlink-14 ready.o", "llvm-jitlink-14", ["ready.o"]],
        ["llvm-rtdyld ready.o", "llvm-rtdyld", ["-execute", "-entry=main", "-dylib=/lib/x86_64-linux-gnu/libc.so.6", "ready.o"]],
        ["llvm-jitlink-executor-14", "llvm-jitlink-executor-14", []],
        ["llvm-exegesis", "llvm-exegesis", ["--help"]],
      ];
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(${JSON.stringify(work)}, (fs) => fs.access("x.ll").write(${JSON.stringify(ir("marker-script"))}));
for (const [label, command, args] of ${JSON.stringify(RUNS)} as Array<[string, string, string[]]>) {
  attempt(label, () => requestExecPermission([command], (p) => p.exec(command, args, { cwd: ${JSON.stringify(work)}, timeoutMs: 30000 }).exitCode));
}
`;
      const r = await run(script, ["--strict", "--exec-timeout-ms", "120000"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), RUNS.map(([label]) => label), /refused under --strict.*: it is a compiler/);
      expect(existsSync(path.join(work, "x.o"))).toBe(false);
      expect(existsSync(path.join(dir, "marker-script"))).toBe(false);
      expect(existsSync(path.join(dir, "marker-ready"))).toBe(false);
    } finally {
      cleanup();
    }
  });

  it("refuses nodeenv and virtualenv: nodeenv put a node wrapper on PATH that --strict ran, virtualenv --clear emptied a directory", async () => {
    // An eighth review, under --strict, with a PATH directory outside the allowed roots:
    // `nodeenv --node=system DIR` wrote DIR/bin/shim (a bash wrapper that runs node with its
    // arguments), and `shim -e CODE` then passed --strict by its name and ran the script's
    // JavaScript; `virtualenv --clear --no-download DIR` deleted what a directory outside the
    // roots held and put a virtual environment there.
    const { dir, cleanup } = realTempDir("tacit-strict-envs-");
    try {
      const at = (name: string) => path.join(dir, name);
      mkdirSync(at("victim"));
      writeFileSync(at("victim/important.txt"), "keep\n");
      const RUNS: Array<[string, string[]]> = [
        ["nodeenv", ["--node=system", at("nodeenv")]],
        ["virtualenv", ["--clear", "--no-download", at("victim")]],
        ["shim", ["-e", `require("fs").writeFileSync(${JSON.stringify(at("marker"))}, "ran")`]],
      ];
      const script = attemptRuns(RUNS, 60000);
      const r = await tacit(root, script, ["--strict", "--exec-timeout-ms", "150000"], { PATH: `${at("nodeenv/bin")}:${process.env.PATH ?? "/usr/bin:/bin"}` });
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), ["nodeenv", "virtualenv"], /refused under --strict: it is a compiler, build tool, package manager/);
      expect(existsSync(at("nodeenv"))).toBe(false);
      expect(existsSync(at("marker"))).toBe(false);
      expect(readFileSync(at("victim/important.txt"), "utf8")).toBe("keep\n");
      expect(existsSync(at("victim/pyvenv.cfg"))).toBe(false);
    } finally {
      cleanup();
    }
  }, 180_000);

  strictRun.test("refuses the JDK's tools, whose -J options reach the JVM: -J-XX:OnOutOfMemoryError ran no command", async (run) => {
    // An eighth review ran a shell command under --strict through javap and keytool: with
    // -J-Xmx4m -J-Xms4m the JVM ran out of memory on an ordinary task, and
    // -J-XX:OnOutOfMemoryError=CMD gave CMD to /bin/sh ("Executing /bin/sh -c …"), which wrote
    // its marker. The other JDK tools take the same -J options; they are asked for their usage.
    const { dir, cleanup } = realTempDir("tacit-strict-jdk-");
    try {
      const marker = (name: string) => path.join(dir, `marker-${name}`);
      const jvm = (name: string) => ["-J-Xmx4m", "-J-Xms4m", `-J-XX:OnOutOfMemoryError=touch ${marker(name)}`];
      const RUNS: Array<[string, string[]]> = [
        ["javap", [...jvm("javap"), "-v", "java.util.HashMap", "java.util.TreeMap", "java.lang.String"]],
        ["keytool", [...jvm("keytool"), "-list", "-cacerts", "-storepass", "changeit"]],
        ...["javadoc", "jdeps", "jlink", "jcmd", "jmap", "jinfo", "jhsdb", "jarsigner", "jpackage", "jfr", "jstatd", "rmiregistry"].map(
          (command): [string, string[]] => [command, ["--help"]],
        ),
      ];
      const script = attemptRuns(RUNS, 60000);
      const r = await run(script, ["--strict", "--exec-timeout-ms", "150000"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), RUNS.map(([command]) => command), /refused under --strict.*: it is an interpreter/);
      for (const name of ["javap", "keytool"]) expect(existsSync(marker(name)), name).toBe(false);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses update-ca-certificates, which ran a command hidden in the name of the hooks directory it was given", async (run) => {
    // An eighth review, under --strict: with directories the script made in its root,
    // `update-ca-certificates --certsconf … --etccertsdir … --hooksdir 'DIR/hooks;touch MARKER;#'`
    // ran `eval run-parts --test -- DIR/hooks;touch MARKER;#` and wrote the marker.
    const { dir, cleanup } = realTempDir("tacit-strict-ca-");
    try {
      const ca = path.join(root, "ca-certificates");
      const marker = path.join(dir, "marker");
      const hooks = `${ca}/hooks;touch ${marker};#`;
      const script = `${ATTEMPT_PRELUDE}
const ca = ${JSON.stringify(ca)};
const hooks = ${JSON.stringify(hooks)};
requestFileSystem(".", (fs) => {
  for (const name of ["etc", "local", "hooks"]) fs.access(\`\${ca}/\${name}\`).mkdir();
  fs.access(hooks).mkdir();
  fs.access(\`\${ca}/certs.conf\`).write("");
});
attempt("update-ca-certificates", () => requestExecPermission(["update-ca-certificates"], (p) => p.exec("update-ca-certificates", [
  "--certsconf", \`\${ca}/certs.conf\`, "--certsdir", \`\${ca}/local\`, "--localcertsdir", \`\${ca}/local\`, "--etccertsdir", \`\${ca}/etc\`, "--hooksdir", hooks,
]).exitCode));
`;
      const r = await run(script, ["--strict"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), ["update-ca-certificates"], /refused under --strict: it is a command runner/);
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses py.test-benchmark and pygrun, which run Python the script writes in their working directory", async (run) => {
    // A seventh review ran Python under --strict through `py.test-benchmark list` (the conftest.py
    // of its working directory, as pytest runs it) and `pygrun T start FILE` (ANTLR: the TLexer
    // and TParser modules of its working directory are imported).
    const { dir, cleanup } = realTempDir("tacit-strict-project-code-");
    try {
      const marker = (name: string) => path.join(dir, `marker-${name}`);
      const python = (name: string) => `open(${JSON.stringify(marker(name))}, "w").write("x")\n`;
      const work = path.join(root, "project-code");
      mkdirSync(path.join(work, "bench"), { recursive: true });
      mkdirSync(path.join(work, "grammar"), { recursive: true });
      writeFileSync(path.join(work, "bench", "conftest.py"), python("py.test-benchmark"));
      writeFileSync(path.join(work, "grammar", "TLexer.py"), python("pygrun"));
      writeFileSync(path.join(work, "grammar", "TParser.py"), python("pygrun"));
      writeFileSync(path.join(work, "grammar", "input.txt"), "x\n");
      const RUNS: Array<[string, string[], string]> = [
        ["py.test-benchmark", ["list"], path.join(work, "bench")],
        ["pygrun", ["T", "start", "input.txt"], path.join(work, "grammar")],
      ];
      const script = `${ATTEMPT_PRELUDE}
for (const [command, args, cwd] of ${JSON.stringify(RUNS)} as Array<[string, string[], string]>) {
  attempt(command, () => requestExecPermission([command], (p) => p.exec(command, args, { cwd, timeoutMs: 60000 }).exitCode));
}
`;
      const r = await run(script, ["--strict", "--exec-timeout-ms", "150000"]);
      expect(r.code, r.stderr).toBe(0);
      const names = RUNS.map(([command]) => command);
      expectRefused(attempts(r.stdout), names, /refused under --strict/);
      for (const name of names) expect(existsSync(marker(name)), name).toBe(false);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses the cloud CLIs (aws, gcloud, gsutil, bq), which reach any endpoint: nothing reaches a listener", async (run) => {
    // A sixth review reached a loopback listener under --strict, with no --network-permissions,
    // through `aws --endpoint-url URL --no-sign-request s3 ls` (aws s3 cp would upload any file).
    const server = await startServer();
    try {
      const RUNS: Array<[string, string[]]> = [
        ["aws", ["--endpoint-url", server.origin, "--no-sign-request", "--region", "us-east-1", "s3", "ls"]],
        ["gsutil", ["ls", "gs://tacit-no-such-bucket"]],
        ["gcloud", ["--version"]],
        ["bq", ["version"]],
      ];
      const script = attemptRuns(RUNS, 20000);
      const r = await run(script, ["--strict", "--exec-timeout-ms", "60000"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), RUNS.map(([command]) => command), /refused under --strict/);
      expect(server.received).toEqual([]);
    } finally {
      await server.close();
    }
  });

  strictRun.test("refuses PostgreSQL's clients (pg_isready, pg_dump, createdb, …), which reach any host: nothing connects to a listener", async (run) => {
    // A seventh review reached a loopback listener under --strict, with no --network-permissions,
    // through `pg_isready -d "host=127.0.0.1 port=P sslmode=disable user=… dbname=…"` and pg_dump:
    // each connected and sent the user and database names the script chose.
    const connections: string[] = [];
    const listener = net.createServer((socket) => {
      connections.push("connected");
      socket.on("error", () => undefined);
      socket.on("data", (data: Buffer) => connections.push(data.toString("latin1")));
      socket.end();
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = listener.address() as net.AddressInfo;
      const target = `host=127.0.0.1 port=${port} sslmode=disable connect_timeout=5 user=tacit-exfil dbname=tacit-data`;
      const names = ["pg_isready", "pg_dump", "pg_dumpall", "pgbench", "createdb", "dropdb", "vacuumdb", "clusterdb", "reindexdb"];
      const script = `${ATTEMPT_PRELUDE}
for (const command of ${JSON.stringify(names)}) {
  attempt(command, () => requestExecPermission([command], (p) => p.exec(command, ["-d", ${JSON.stringify(target)}, "-w"], { timeoutMs: 20000 }).exitCode));
}
`;
      const r = await run(script, ["--strict", "--exec-timeout-ms", "120000"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), names, /refused under --strict: it is a network tool/);
      expect(connections).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    }
  });

  strictRun.test("refuses jsonschema and openapi-spec-validator, which fetch the remote $ref of a file the script writes: nothing reaches a listener", async (run) => {
    // A seventh review reached a loopback listener under --strict, with no --network-permissions,
    // through `jsonschema -i instance.json schema.json` and `openapi-spec-validator spec.yaml`,
    // each file written by the script with a $ref to http://127.0.0.1:P/…?data=…: both fetched it.
    const server = await startServer();
    try {
      writeFileSync(path.join(root, "fetch-schema.json"), JSON.stringify({ $ref: `${server.origin}/schema?data=leaked` }));
      writeFileSync(path.join(root, "fetch-instance.json"), "{}");
      writeFileSync(path.join(root, "fetch-spec.yaml"), `openapi: 3.0.0\ninfo: {title: x, version: "1"}\npaths:\n  /a:\n    $ref: "${server.origin}/spec?data=leaked"\n`);
      const RUNS: Array<[string, string[]]> = [
        ["jsonschema", ["-i", "fetch-instance.json", "fetch-schema.json"]],
        ["openapi-spec-validator", ["fetch-spec.yaml"]],
      ];
      const script = attemptRuns(RUNS, 30000);
      const r = await run(script, ["--strict", "--exec-timeout-ms", "90000"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), RUNS.map(([command]) => command), /refused under --strict: it is a network tool/);
      expect(server.received).toEqual([]);
    } finally {
      await server.close();
    }
  });

  strictRun.test("refuses dirmngr and gpgsm, which fetch any URL they are asked to: nothing reaches a listener", async (run) => {
    // An eighth review reached a loopback listener under --strict, with no --network-permissions,
    // through `dirmngr --server` given "KS_FETCH http://127.0.0.1:P/leak?data=…" on its input, and
    // through `gpgsm --call-dirmngr KS_FETCH URL` (gpgsm starts a dirmngr and asks it). GnuPG's
    // home is a temp directory, so the user's keyrings are not touched either way.
    const server = await startServer();
    const { dir, cleanup } = realTempDir("tacit-strict-dirmngr-");
    try {
      const home = path.join(dir, "gnupg");
      mkdirSync(home, { mode: 0o700 });
      const RUNS: Array<[string, string, string[], string | null]> = [
        ["dirmngr --server", "dirmngr", ["--server", "--homedir", home], `KS_FETCH ${server.origin}/leak?data=dirmngr\nBYE\n`],
        ["gpgsm --call-dirmngr", "gpgsm", ["--homedir", home, "--call-dirmngr", "KS_FETCH", `${server.origin}/leak?data=gpgsm`], null],
        ["dirmngr-client", "dirmngr-client", ["--help"], null],
      ];
      const script = `${ATTEMPT_PRELUDE}
for (const [label, command, args, input] of ${JSON.stringify(RUNS)} as Array<[string, string, string[], string | null]>) {
  attempt(label, () => requestExecPermission([command], (p) => p.exec(command, args, input === null ? { timeoutMs: 20000 } : { input, timeoutMs: 20000 }).exitCode));
}
`;
      const r = await run(script, ["--strict", "--exec-timeout-ms", "60000"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), RUNS.map(([label]) => label), /refused under --strict: it is a network tool/);
      expect(server.received).toEqual([]);
    } finally {
      cleanup();
      await server.close();
    }
  });

  strictRun.test("refuses mke2fs, mkfs.*, badblocks -w and hardlink, which overwrite or relink any file: the files stay as they were", async (run) => {
    // A sixth review overwrote files outside the allowed roots under --strict with `mke2fs -F
    // FILE`, `mkfs.ext4 -F FILE` and `badblocks -w FILE`, and made two files one with `hardlink DIR1 DIR2`.
    const { dir, cleanup } = realTempDir("tacit-strict-writers-");
    try {
      const content = (name: string) => `${name}: keep this content as it is\n`.repeat(4096);
      const victims = ["mke2fs", "mkfs", "badblocks"].map((name) => path.join(dir, `victim-${name}`));
      for (const victim of victims) writeFileSync(victim, content(victim));
      mkdirSync(path.join(dir, "one"));
      mkdirSync(path.join(dir, "two"));
      writeFileSync(path.join(dir, "one", "same.txt"), "same\n");
      writeFileSync(path.join(dir, "two", "same.txt"), "same\n");
      const RUNS: Array<[string, string[]]> = [
        ["mke2fs", ["-q", "-F", victims[0]!]],
        ["mkfs.ext4", ["-q", "-F", victims[1]!]],
        ["badblocks", ["-w", "-t", "0", victims[2]!]],
        ["hardlink", [path.join(dir, "one"), path.join(dir, "two")]],
      ];
      const script = attemptRuns(RUNS, 20000);
      const r = await run(script, ["--strict", "--exec-timeout-ms", "60000"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), RUNS.map(([command]) => command), /refused under --strict/);
      for (const victim of victims) expect(readFileSync(victim, "utf8") === content(victim), victim).toBe(true);
      expect(statSync(path.join(dir, "one", "same.txt")).nlink).toBe(1);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses installkernel, which copies any file into the root for the script to read", async (run) => {
    // An eighth review, under --strict: `installkernel x FILE FILE .` copied a file outside the
    // allowed roots into the working directory as vmlinuz-x (and System.map-x), which the script
    // then read with requestFileSystem and printed.
    const { dir, cleanup } = realTempDir("tacit-strict-installkernel-");
    try {
      const { canary, secret } = secretOutside(dir);
      const work = path.join(root, "installkernel");
      mkdirSync(work, { recursive: true });
      const script = `${ATTEMPT_PRELUDE}
attempt("installkernel", () => requestExecPermission(["installkernel"], (p) => p.exec("installkernel", ["x", ${JSON.stringify(secret)}, ${JSON.stringify(secret)}, "."], { cwd: ${JSON.stringify(work)} }).exitCode));
attempt("read", () => requestFileSystem(${JSON.stringify(work)}, (fs) => fs.access("vmlinuz-x").read()));
`;
      const r = await run(script, ["--strict"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), ["installkernel"], /refused under --strict: it is a file tool/);
      expect(r.stdout).not.toContain(canary);
      expect(existsSync(path.join(work, "vmlinuz-x"))).toBe(false);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses llvm-profdata and llvm-stress, which write any file: a shell startup file outside the roots stays as it was", async (run) => {
    // An eighth review, under --strict: `llvm-profdata merge --text -o BASHRC in.proftext`, the
    // profile written by the script in its root, replaced a bashrc outside the allowed roots with
    // lines of which one was the script's command (`bash BASHRC` ran it and wrote its marker), and
    // `llvm-stress -o FILE` overwrote a file there.
    const { dir, cleanup } = realTempDir("tacit-strict-profdata-");
    try {
      const bashrc = path.join(dir, "bashrc");
      const victim = path.join(dir, "victim.txt");
      writeFileSync(bashrc, "echo original\n");
      writeFileSync(victim, "keep\n");
      const profile = `# IR level Instrumentation Flag\n:ir\ntouch ${path.join(dir, "marker")}\n# Func Hash:\n1\n# Num Counters:\n1\n# Counter Values:\n1\n`;
      const RUNS: Array<[string, string[]]> = [
        ["llvm-profdata", ["merge", "--text", "-o", bashrc, "profdata.proftext"]],
        ["llvm-profdata-14", ["merge", "--text", "-o", bashrc, "profdata.proftext"]],
        ["llvm-stress", ["-o", victim]],
        ["llvm-stress-14", ["-o", victim]],
      ];
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => fs.access("profdata.proftext").write(${JSON.stringify(profile)}));
for (const [command, args] of ${JSON.stringify(RUNS)} as Array<[string, string[]]>) {
  attempt(command, () => requestExecPermission([command], (p) => p.exec(command, args).exitCode));
}
`;
      const r = await run(script, ["--strict"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), RUNS.map(([command]) => command), /refused under --strict.*: it is a file tool/);
      expect(readFileSync(bashrc, "utf8")).toBe("echo original\n");
      expect(readFileSync(victim, "utf8")).toBe("keep\n");
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses debugfs, which echoes any file's lines, and e2label, tune2fs and wipefs, which rewrite a file system image in place", async (run) => {
    // An eighth review, under --strict: `debugfs -f FILE` printed each line of a file outside the
    // allowed roots ("debugfs: <line>", "Command not found <line>"), and `e2label IMAGE x`,
    // `tune2fs -L x IMAGE` and `wipefs -a IMAGE` changed an ext2 image there.
    const { dir, cleanup } = realTempDir("tacit-strict-e2fs-");
    try {
      const { canary, secret } = secretOutside(dir);
      const images = ["e2label", "tune2fs", "wipefs"].map((name) => path.join(dir, `${name}.img`));
      for (const image of images) {
        writeFileSync(image, Buffer.alloc(2 * 1024 * 1024));
        execFileSync("mke2fs", ["-q", "-F", image], { stdio: "ignore" });
      }
      const originals = images.map((image) => readFileSync(image));
      const RUNS: Array<[string, string[]]> = [
        ["debugfs", ["-f", secret]],
        ["e2label", [images[0]!, "changed"]],
        ["tune2fs", ["-L", "changed", images[1]!]],
        ["wipefs", ["-a", images[2]!]],
      ];
      const script = `${ATTEMPT_PRELUDE}
for (const [command, args] of ${JSON.stringify(RUNS)} as Array<[string, string[]]>) {
  attempt(command, () => {
    const r = requestExecPermission([command], (p) => p.exec(command, args, { timeoutMs: 20000 }));
    return r.stdout + r.stderr;
  });
}
`;
      const r = await run(script, ["--strict", "--exec-timeout-ms", "60000"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), RUNS.map(([command]) => command), /refused under --strict: it is a file tool/);
      expect(r.stdout).not.toContain(canary);
      for (const [index, image] of images.entries()) expect(readFileSync(image).equals(originals[index]!), image).toBe(true);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses xauth, perlbug and rstpep2html.py, which print any file, pkgdata, which runs its options file's commands, and the tools that write any file", async (run) => {
    // A ninth review, under --strict: `xauth source FILE` quoted the first word of each line of a
    // file outside the allowed roots (a shadow line or a key's base64 line is one word);
    // perlbug -f FILE (and perlthanks), answered "d" on its input, displayed the file whole;
    // rstpep2html.py, a docutils front end the "rst" family missed, printed it through an
    // `.. include::`; `pkgdata -O FLAGS -m files -I DIR` ran the INSTALL_CMD of an options file
    // the script wrote; `pygettext3 -o BASHRC` wrote a catalog whose `msgid "$(CMD)"` line a shell
    // sourcing it runs, `lesskey -o FILE` (~/.less by default) a LESSOPEN command the next less
    // runs, and streamzip -zipfile, h2ph -d, libnetcfg -o and tempfile -n wrote files outside the roots.
    const { dir, cleanup } = realTempDir("tacit-strict-ninth-");
    try {
      const { canary, secret } = secretOutside(dir);
      const marker = path.join(dir, "marker");
      const bashrc = path.join(dir, "bashrc");
      writeFileSync(bashrc, "echo original\n");
      const outside = (name: string) => path.join(dir, name);
      const flags = [
        "GENCCODE_ASSEMBLY_TYPE=-a gcc", "SO=so", "SOBJ=so", "A=a", "LIBPREFIX=lib", "LIB_EXT_ORDER=.74", "COMPILE=true", "LIBFLAGS=",
        "GENLIB=true", "LDICUDTFLAGS=", "LD_SONAME=", "RPATH_FLAGS=", "BIR_LDFLAGS=", "AR=true", "ARFLAGS=", "RANLIB=true",
        `INSTALL_CMD=touch ${marker} ;`,
      ].join("\n");
      const pep = `PEP: 9999\nTitle: x\nAuthor: a\nStatus: Draft\nType: Informational\nCreated: 01-Jan-2020\n\n\n.. include:: ${secret}\n   :literal:\n`;
      const perlbug = ["-t", "-s", "a report of the ninth review", "-f", secret, "-r", "nobody@example.invalid"];
      const RUNS: Array<[string, string[], string]> = [
        ["xauth", ["source", secret], ""],
        ["perlbug", perlbug, "\n\n\nd\nq\n"],
        ["perlthanks", perlbug, "\n\n\nd\nq\n"],
        ["rstpep2html.py", ["ninth-pep.txt"], ""],
        ["pkgdata", ["-O", "ninth-flags.txt", "-p", "ninth", "-m", "files", "-s", ".", "-d", ".", "-I", "ninth-install", "ninth-list.txt"], ""],
        ["pygettext3", ["-o", bashrc, "ninth-messages.py"], ""],
        ["pygettext3.11", ["-o", bashrc, "ninth-messages.py"], ""],
        ["pygettext", ["-o", bashrc, "ninth-messages.py"], ""],
        ["lesskey", ["-o", outside("less"), "ninth-lesskey.txt"], ""],
        ["streamzip", [`-zipfile=${outside("zipped")}`, "-method=store"], `\ntouch ${marker}\n`],
        ["h2ph", ["-d", dir, "ninth.h"], ""],
        ["libnetcfg", ["-d", "-o", outside("libnet.cfg")], ""],
        ["tempfile", ["-n", outside("made")], ""],
      ];
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  fs.access("ninth-flags.txt").write(${JSON.stringify(`${flags}\n`)});
  fs.access("ninth-list.txt").write("ninth.res\\n");
  fs.access("ninth.res").write("x");
  fs.access("ninth-install").mkdir();
  fs.access("ninth-pep.txt").write(${JSON.stringify(pep)});
  fs.access("ninth-messages.py").write(${JSON.stringify(`print(_("$(touch ${marker})"))\n`)});
  fs.access("ninth-lesskey.txt").write(${JSON.stringify(`#env\nLESSOPEN=|touch ${marker} %s\n`)});
  fs.access("ninth.h").write("#define NINTH 1\\n");
});
for (const [command, args, input] of ${JSON.stringify(RUNS)} as Array<[string, string[], string]>) {
  attempt(command, () => {
    const r = requestExecPermission([command], (p) => p.exec(command, args, { input, timeoutMs: 20000 }));
    return r.stdout + r.stderr;
  });
}
`;
      const r = await run(script, ["--strict", "--exec-timeout-ms", "60000"]);
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), RUNS.map(([command]) => command), /refused under --strict/);
      expect(r.stdout).not.toContain(canary);
      expect(existsSync(marker)).toBe(false);
      expect(readFileSync(bashrc, "utf8")).toBe("echo original\n");
      expect(readdirSync(dir).sort()).toEqual(["bashrc", "secret.txt"]);
      expect(existsSync(path.join(root, "ninth-install", "ninth"))).toBe(false);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses pwck, grpck, genrb, genccode and the parsers that quote the line they cannot parse, and pwconv, grpconv and the tools that change who may log in", async (run) => {
    // The same ninth review, under --strict as root: `pwck -r FILE FILE` and grpck asked to delete
    // each line of a file outside the allowed roots, quoting it ("delete line '<line>'?");
    // verify-uselistorder and llvm-sim (LLVM IR), genrb and gennorm2 (ICU), llvm-pdbutil yaml2pdb
    // and llvm-xray (YAML) and appstreamcli validate (XML) quoted the line they could not parse;
    // genccode copied the file into the root as a C array of its bytes (as bin2c, refused already);
    // `pwconv -R DIR` and grpconv wrote shadow files into a system tree outside the roots, and
    // add-shell added a line to the host's /etc/shells. The tools that change accounts or the
    // login setup (/etc/shells, PAM) are only asked for: run, they would change this host.
    const { dir, cleanup } = realTempDir("tacit-strict-ninth-quoters-");
    try {
      const { canary, secret } = secretOutside(dir);
      const system = path.join(dir, "system");
      mkdirSync(path.join(system, "etc"), { recursive: true });
      writeFileSync(path.join(system, "etc", "passwd"), "root:x:0:0:root:/root:/bin/sh\n");
      writeFileSync(path.join(system, "etc", "group"), "root:x:0:\n");
      const systemBefore = readdirSync(path.join(system, "etc")).sort();
      const RUNS: Array<[string, string[]]> = [
        ["pwck", ["-r", secret, secret]],
        ["grpck", ["-r", secret, secret]],
        ["verify-uselistorder", [secret]],
        ["verify-uselistorder-14", [secret]],
        ["llvm-sim", [secret]],
        ["llvm-sim-14", [secret]],
        ["genrb", ["-d", "ninth-out", secret]],
        ["gennorm2", ["-o", "ninth-out/norm", secret]],
        ["llvm-pdbutil", ["yaml2pdb", secret]],
        ["llvm-pdbutil-14", ["yaml2pdb", secret]],
        ["llvm-xray", ["convert", secret]],
        ["llvm-xray-14", ["convert", secret]],
        ["appstreamcli", ["validate", secret]],
        ["genccode", ["-d", "ninth-out", secret]],
        ["pwconv", ["-R", system]],
        ["grpconv", ["-R", system]],
      ];
      const ASKED_ONLY = [
        "add-shell", "remove-shell", "update-shells", "pwunconv", "grpunconv", "groupmems", "shadowconfig", "pam-auth-update",
        "mkhomedir_helper", "unix_update",
      ];
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => fs.access("ninth-out").mkdir());
for (const [command, args] of ${JSON.stringify(RUNS)} as Array<[string, string[]]>) {
  attempt(command, () => {
    const r = requestExecPermission([command], (p) => p.exec(command, args, { timeoutMs: 20000 }));
    return r.stdout + r.stderr;
  });
}
for (const command of ${JSON.stringify(ASKED_ONLY)}) attempt(command, () => requestExecPermission([command], () => "granted"));
attempt("copies", () => requestFileSystem(".", (fs) => fs.access("ninth-out").children().map((child) => child.read())));
`;
      const r = await run(script, ["--strict", "--exec-timeout-ms", "60000"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, [...RUNS.map(([command]) => command), ...ASKED_ONLY], /refused under --strict/);
      expect(attemptOf(found, "copies")).toEqual({ status: "ok", value: [] });
      expect(r.stdout).not.toContain(canary);
      expect(readdirSync(path.join(system, "etc")).sort()).toEqual(systemBefore);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses an argument that begins with @, which binutils, LLVM's tools and compilers read as a file of more arguments", async (run) => {
    // A ninth review, under --strict: `c++filt @FILE`, llvm-cxxfilt, llvm-symbolizer and
    // llvm-addr2line printed every word of a file outside the allowed roots (they read a response
    // file's words as their arguments and echo each), and nm, size, gprof, gcov, llvm-nm, llvm-readelf
    // and a dozen more LLVM tools quoted them in their errors ("'<word>': No such file"). Any program
    // built on libiberty's or LLVM's command line does it, whatever its name.
    const { dir, cleanup } = realTempDir("tacit-strict-response-file-");
    try {
      const { canary, secret } = secretOutside(dir, (canary) => `${canary} ${canary}\n`);
      const READERS: Array<[string, string[]]> = [
        ["c++filt", []], ["llvm-cxxfilt", []], ["llvm-symbolizer", []], ["llvm-addr2line", []], ["nm", []], ["size", []], ["gprof", []],
        ["gcov", []], ["llvm-nm", []], ["llvm-readelf", []], ["llvm-undname", []], ["x86_64-linux-gnu-nm", []], ["nm", ["--"]],
      ];
      const script = `${ATTEMPT_PRELUDE}
for (const [index, [command, before]] of (${JSON.stringify(READERS)} as Array<[string, string[]]>).entries()) {
  attempt(index + " " + command, () => {
    const r = requestExecPermission([command], (p) => p.exec(command, [...before, "@" + ${JSON.stringify(secret)}], { timeoutMs: 20000 }));
    return r.stdout + r.stderr;
  });
}
attempt("a lone @", () => requestExecPermission(["printf"], (p) => p.exec("printf", ["%s", "@"]).stdout));
`;
      const r = await run(script, ["--strict", "--exec-timeout-ms", "60000"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, READERS.map(([command], index) => `${index} ${command}`), /begins with "@".*refused under --strict/);
      expect(attemptOf(found, "a lone @")).toEqual({ status: "ok", value: "@" });
      expect(r.stdout).not.toContain(canary);
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses catman, which ran man and groff over a page the script wrote: its .so put a file outside the roots into a cat page in them", async (run) => {
    // A ninth review, under --strict: with the index mandb made (mandb -c DIR passes, and writes
    // only there), `catman -M DIR 1` formatted DIR/man1/x.1 with man and groff (both refused by
    // name), whose `.so FILE` took in a file outside the allowed roots: DIR/cat1/x.1.gz held it,
    // for the script to read and gunzip.
    const { dir, cleanup } = realTempDir("tacit-strict-catman-");
    try {
      const { secret } = secretOutside(dir);
      const page = `.TH X 1\n.SH NAME\nx \\\\- y\n.SH DESCRIPTION\n.nf\n.so ${secret}\n.fi\n`;
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  fs.access("ninth-man/man1").mkdir();
  fs.access("ninth-man/cat1").mkdir();
  fs.access("ninth-man/man1/x.1").write(${JSON.stringify(page)});
});
attempt("mandb", () => requestExecPermission(["mandb"], (p) => p.exec("mandb", ["-c", "ninth-man"], { timeoutMs: 20000 }).exitCode));
attempt("catman", () => requestExecPermission(["catman"], (p) => p.exec("catman", ["-M", "ninth-man", "1"], { timeoutMs: 20000 }).exitCode));
attempt("cat pages", () => requestFileSystem(".", (fs) => fs.access("ninth-man/cat1").children().map((child) => child.name)));
`;
      const r = await run(script, ["--strict", "--exec-timeout-ms", "60000"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["catman"], /refused under --strict/);
      expect(attemptOf(found, "cat pages")).toEqual({ status: "ok", value: [] });
    } finally {
      cleanup();
    }
  });

  strictRun.test("refuses getent, which printed the system's password hashes (getent shadow, tacit run as root)", async (run) => {
    // A ninth review, under --strict as root: `getent shadow` printed /etc/shadow, every account's
    // password hash, as `sort /etc/shadow` would (sort is refused); getent gshadow the groups'.
    const script = `${ATTEMPT_PRELUDE}
attempt("getent", () => requestExecPermission(["getent"], (p) => p.exec("getent", ["shadow", "root"]).stdout));
`;
    const r = await run(script, ["--strict"]);
    expect(r.code, r.stderr).toBe(0);
    expectRefused(attempts(r.stdout), ["getent"], /refused under --strict/);
    expect(r.stdout).not.toMatch(/root:[^\n]*:\d*:\d*:\d*:/);
  });

  // Found by the same review: tools --strict runs, given an option that makes them read a file
  // and echo its lines in their messages (`date -f FILE`: "invalid date '<line>'").
  const ECHOERS: Array<[string, string, string[]]> = [
    ["date -f", "date", ["-f"]], ["date --file=", "date", ["--file="]], ["date -uf", "date", ["-uf"]], ["date --fi", "date", ["--fi"]],
    ["wc --files0-from=", "wc", ["--files0-from="]], ["wc --files0", "wc", ["--files0"]], ["du --files0-from", "du", ["--files0-from"]],
    ["file -f", "file", ["-f"]], ["file -bf", "file", ["-bf"]], ["file --files-from", "file", ["--files-from"]], ["file -m", "file", ["-m"]],
  ];
  it("refuses the options that make an allowed tool print a file's lines; the tools still run without them", async () => {
    const { dir, cleanup } = realTempDir("tacit-strict-echoers-");
    try {
      const { canary, secret } = secretOutside(dir, (canary) => `${canary}\nline two ${canary}\n`);
      const script = `${ATTEMPT_PRELUDE}
for (const [label, command, option] of ${JSON.stringify(ECHOERS)} as Array<[string, string, string[]]>) {
  attempt(label, () => {
    const last = option[option.length - 1]!;
    const args = last.endsWith("=") ? [...option.slice(0, -1), last + ${JSON.stringify(secret)}] : [...option, ${JSON.stringify(secret)}];
    const r = requestExecPermission([command], (p) => p.exec(command, args));
    return r.stdout + r.stderr;
  });
}
attempt("wc -l", () => requestExecPermission(["wc"], (p) => p.exec("wc", ["-l", "--", ${JSON.stringify(secret)}]).stdout));
attempt("date", () => requestExecPermission(["date"], (p) => p.exec("date", ["-u", "+%Y"]).exitCode));
`;
      const r = await tacit(root, script, ["--strict", "--allowed-roots", `${root},${dir}`]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ECHOERS.map(([label]) => label), /the option .* is refused under --strict/);
      expect(attemptOf(found, "wc -l")).toEqual({ status: "ok", value: expect.stringMatching(/^2 /) });
      expect(attemptOf(found, "date")).toEqual({ status: "ok", value: 0 });
      expect(r.stdout).not.toContain(canary);
    } finally {
      cleanup();
    }
  });
});

describe("--command-permissions", () => {
  it("matches the whole name exactly: another letter case, a line break, spaces, NUL, a zero-width or fullwidth look-alike is refused", async () => {
    // A sixth review tried names that read as a permitted one (the glob is a RegExp with ^ and $,
    // where $ could have let a final line break through, and . never matches one).
    const names = [
      "PRINTF", "Printf", "printf\n", "printf\r", "printf ", " printf", "printf\u0000", "printf\u200b", "\u200bprintf", "ｐｒｉｎｔｆ",
      "printf\u00a0", "print\u0066\u0301", "pw\nd", "pw/d", "pwd\n",
    ];
    // Labelled by their index: the attempt report is line-based.
    const script = `${ATTEMPT_PRELUDE}
for (const [index, command] of (${JSON.stringify(names)} as string[]).entries()) {
  attempt(String(index), () => requestExecPermission([command], (p) => p.exec(command, []).exitCode));
}
attempt("pwd", () => requestExecPermission(["pwd"], (p) => p.exec("pwd", []).exitCode));
`;
    const r = await tacit(root, script, ["--command-permissions", "printf,pw*d"]);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expectRefused(found, names.map((_, index) => String(index)), /not among the permitted commands|is not a command name/);
    expect(attemptOf(found, "pwd")).toEqual({ status: "ok", value: 0 });
  });

  it('"git*" allows git and refuses ls; a scope\'s list narrows it further', async () => {
    const extra = `
attempt("git --version", () => requestExecPermission(["git"], (p) => p.exec("git", ["--version"])));
attempt("git and ls", () => requestExecPermission(["git", "ls"], () => "granted"));
requestExecPermission(["git"], (p) => {
  attempt("ls in a git scope", () => p.exec("ls"));
});
`;
    const found = expectClean(await tacit(root, requestEach(["ls", "git", "git-upload-pack", "gi", "xgit", "/usr/bin/git"], extra), ["--command-permissions", "git*"]));
    expectRefused(found, ["ls", "gi", "xgit"], /--command-permissions/);
    expect(attemptOf(found, "ls").value).toContain("ls");
    expectGranted(found, ["git", "git-upload-pack"]);
    const version = attemptOf(found, "git --version");
    expect(version.status, JSON.stringify(version.value)).toBe("ok");
    expect(version.value).toMatchObject({ exitCode: 0, stderr: "" });
    expect((version.value as { stdout: string }).stdout).toMatch(/^git version \d/);
    expectRefused(found, ["git and ls"], /\bls\b/);
    expectRefused(found, ["ls in a git scope"], /\bls\b/);
    expect(attemptOf(found, "ls in a git scope").value).toMatch(/\bgit\b/);
    expectRefused(found, ["/usr/bin/git"], /name/i);
  });

  // --strict beside a command list used to be ignored in silence (this test asserted an empty
  // stderr): the operator who gave both believed the denylist applied too. Now tacit says which wins.
  it("wins over --strict: the allowed commands run even if strict mode would deny them, nothing else does; tacit says so", async () => {
    const extra = `
attempt("cat runs", () => requestExecPermission(["cat"], (p) => p.exec("cat", [], { input: "through cat" }).stdout));
`;
    const r = await tacit(root, requestEach(["cat", "printf", "pwd"], extra), ["--strict", "--command-permissions", "cat"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^tacit: warning: --strict \(config libraryConfig\.strictMode\) has no effect beside --command-permissions .*the command list wins, and only the commands it names may run \(cat\)\. Drop --strict/);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    const found = attempts(r.stdout);
    expectGranted(found, ["cat"]);
    expect(attemptOf(found, "cat runs")).toEqual({ status: "ok", value: "through cat" });
    expectRefused(found, ["printf", "pwd"], /--command-permissions/);
  });
});

describe("--config", () => {
  it("libraryConfig.commandPermissions: globs with * only, matched against the whole name", async () => {
    const config = path.join(root, "globs.json");
    writeFileSync(config, JSON.stringify({ libraryConfig: { commandPermissions: ["pr*f"] } }));
    const extra = `
attempt("printf runs", () => requestExecPermission(["printf"], (p) => p.execOutput("printf", ["from config"])));
`;
    const found = expectClean(await tacit(root, requestEach(["printf", "prf", "xprintf", "printfx", "pwd", "echo"], extra), ["--config", config]));
    expectGranted(found, ["printf", "prf"]);
    expect(attemptOf(found, "printf runs")).toEqual({ status: "ok", value: "from config" });
    expectRefused(found, ["xprintf", "printfx", "pwd", "echo"]);
  });

  it("libraryConfig.strictMode beside --command-permissions: the list wins, and tacit says so", async () => {
    const config = path.join(root, "strict-and-list.json");
    writeFileSync(config, JSON.stringify({ libraryConfig: { strictMode: true } }));
    const r = await tacit(root, requestEach(["cat", "printf"]), ["--config", config, "--command-permissions", "cat"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("has no effect beside --command-permissions");
    expectGranted(attempts(r.stdout), ["cat"]);
    expectRefused(attempts(r.stdout), ["printf"], /--command-permissions/);
  });

  it("libraryConfig.strictMode", async () => {
    const config = path.join(root, "strict.json");
    writeFileSync(config, JSON.stringify({ libraryConfig: { strictMode: true } }));
    const extra = `
attempt("printf runs", () => requestExecPermission(["printf"], (p) => p.execOutput("printf", ["strict from config"])));
`;
    const found = expectClean(await tacit(root, requestEach(["sh", "CAT", "printf"], extra), ["--config", config]));
    expectRefused(found, ["sh", "CAT"]);
    expectGranted(found, ["printf"]);
    expect(attemptOf(found, "printf runs")).toEqual({ status: "ok", value: "strict from config" });
  });
});
