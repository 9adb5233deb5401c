// Entries a listing or search cannot read: walk(), find(), grepRecursive() and children() left
// them out without a word, and a script took the part it got for the whole tree (grep -r says
// so on stderr). Now each call's answer is as it was, and the run carries one warning per call
// naming how many were left out, the first few and why: on stderr in `tacit run`, in the tool
// result's text and its `warnings` in `tacit serve`. A directory the call was asked about that
// cannot be read fails the call, as children() did. What the policy leaves out (a classified
// directory a search does not enter, a link out of the scope) is still left out silently, and
// no warning names it. Through the real CLI and a real `tacit serve`, with a real Deno.
//
// How an entry is made unreadable: chmod 000. The tests may run as root, whom permission bits
// do not stop (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH); then tacit is started through util-linux
// `setpriv` without those two capabilities, so that the bits stop it as they stop any user, and
// each test first shows that they do (a directory it cannot list). A link loop is unreadable to
// anyone.

import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerTexts, connectServe, createSession, runCli, runInSession, type ToolResult, unchecked } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, type CliResult, lit, makeCanary, nodeBoundByPermissions, realTempDir, tacit } from "./fixtures.js";

/** library/protocol.ts's LINE_LIMIT_CHARS, written out so the test stands without the change. */
const LINE_LIMIT_CHARS = 16 * 1024 * 1024;

let base: string;
let cleanup: () => void;
/** The Node tacit is started with: one that permission bits stop, root or not (see above). */
let node: string;
/** The tree searched (the allowed root), and a directory beside it, outside the scope. */
let root: string;
let outside: string;
const canaries = { unreadableFile: makeCanary(), lockedDir: makeCanary(), classified: makeCanary(), outside: makeCanary() };

beforeAll(() => {
  ({ dir: base, cleanup } = realTempDir("tacit-unreadable-"));
  node = nodeBoundByPermissions(base);
  root = path.join(base, "tree");
  outside = path.join(base, "outside");
  const write = (file: string, text: string): void => {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  };
  write(path.join(root, "a/x.txt"), "needle a\n");
  write(path.join(root, "b/z.txt"), "needle b\n");
  write(path.join(root, "b/unreadable.txt"), `needle ${canaries.unreadableFile}\n`);
  write(path.join(root, "locked/inner.txt"), `needle ${canaries.lockedDir}\n`);
  write(path.join(root, ".ssh/id_ed25519"), `needle ${canaries.classified}\n`);
  write(path.join(outside, "far.txt"), `needle ${canaries.outside}\n`);
  write(path.join(outside, "shut/deep.txt"), `needle ${canaries.outside}\n`);
  symlinkSync("loop2", path.join(root, "loop1"));
  symlinkSync("loop1", path.join(root, "loop2"));
  symlinkSync(outside, path.join(root, "far"));
  symlinkSync(path.join(outside, "shut/deep.txt"), path.join(root, "shut-link.txt"));
  chmodSync(path.join(root, "b/unreadable.txt"), 0);
  chmodSync(path.join(root, "locked"), 0);
  chmodSync(path.join(root, ".ssh"), 0);
  chmodSync(path.join(outside, "shut"), 0);
  // The premise: the Node tacit runs with cannot list a directory of mode 000.
  const probe = `try { require("node:fs").readdirSync(${lit(path.join(root, "locked"))}); console.log("read"); } catch (e) { console.log(e.code); }`;
  expect(execFileSync(node, ["-e", probe], { encoding: "utf8" }).trim(), "the tests' tacit reads a directory of mode 000: nothing here would be unreadable to it").toBe("EACCES");
});

afterAll(() => {
  execFileSync("chmod", ["-R", "u+rwx", base]); // what a user who is not root could not remove otherwise
  cleanup();
});

/** `tacit run` in `cwd` with the Node the permission bits bind (see above). */
function run(cwd: string, script: string, args: string[] = [], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(unchecked(["run", ...args, "-"]), { cwd, input: script, env, node });
}

function expectNoCanary(seen: { stdout: string; stderr: string }): void {
  for (const [what, canary] of Object.entries(canaries)) {
    expect(seen.stdout, `${what} reached stdout`).not.toContain(canary);
    expect(seen.stderr, `${what} reached stderr`).not.toContain(canary);
  }
}

const SEARCHES = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  const rel = (p: string): string => p.slice(fs.root.length + 1);
  attempt("walk", () => fs.access(".").walk().map((entry) => rel(entry.path)).sort());
  attempt("find", () => fs.find(".", "*.txt").map(rel).sort());
  attempt("grepRecursive", () => fs.grepRecursive(".", "needle").map((match) => rel(match.file) + ":" + match.line).sort());
  attempt("children", () => fs.access(".").children().map((entry) => entry.name).sort());
});
`;

/** The stderr lines of the warnings, by the call each begins with. */
function warningsOf(stderr: string): string[] {
  return stderr.split("\n").filter((line) => line.startsWith("tacit: warning: "));
}

describe("a search or listing that cannot read some entries", () => {
  for (const helper of ["off", "on"]) {
    it(`answers with what it read, and tacit run says on stderr what it left out and why (search helper ${helper})`, async () => {
      const r = await run(root, SEARCHES, [], { TACIT_SEARCH_HELPER: helper });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      // The answers are what they were: what could be read, nothing more, no link out of the scope.
      expect(attemptOf(found, "walk")).toEqual({ status: "ok", value: [".ssh", "a", "a/x.txt", "b", "b/unreadable.txt", "b/z.txt", "locked"] });
      expect(attemptOf(found, "find")).toEqual({ status: "ok", value: ["a/x.txt", "b/unreadable.txt", "b/z.txt"] });
      expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: ["a/x.txt:needle a", "b/z.txt:needle b"] });
      expect(attemptOf(found, "children")).toEqual({ status: "ok", value: [".ssh", "a", "b", "locked"] });
      expect(r.stdout, "a warning went into the script's output").not.toContain("tacit: warning");

      const named = (entry: string): string => JSON.stringify(path.join(root, entry));
      const warnings = warningsOf(r.stderr);
      expect(warnings, r.stderr).toHaveLength(4);
      const [walk, find, grep, children] = warnings as [string, string, string, string];
      // walk() lists .ssh (names, not contents), so its warning may name it; loops are entries it cannot report.
      expect(walk).toBe(
        `tacit: warning: walk() of ${JSON.stringify(root)}: 4 entries could not be read and are left out of its answer: ` +
          `${named(".ssh")} (permission denied), ${named("locked")} (permission denied), ${named("loop1")} (a loop of symbolic links), and 1 more. ` +
          "The answer holds the rest; do not take it for the whole tree. Search or list elsewhere, or ask the user to make these readable",
      );
      // A loop named nothing find() was asked for (*.txt): only the directories it could not enter count.
      expect(find).toContain(`find(${JSON.stringify(root)}, "*.txt"): 2 entries could not be read and are left out of its answer: ${named(".ssh")} (permission denied), ${named("locked")} (permission denied). `);
      // grepRecursive() never opens a classified directory (.ssh): the policy's, not named.
      expect(grep).toContain(
        `grepRecursive(${JSON.stringify(root)}, "needle"): 4 entries could not be read and are left out of its answer: ` +
          `${named("locked")} (permission denied), ${named("loop1")} (a loop of symbolic links), ${named("loop2")} (a loop of symbolic links), and 1 more. `,
      );
      expect(children).toContain(`children() of ${JSON.stringify(root)}: 2 entries could not be read and are left out of its answer: ${named("loop1")} (a loop of symbolic links), ${named("loop2")} (a loop of symbolic links). `);
      // Nothing the policy leaves out is named: the links out of the scope, what lies outside, the classified directory to a search.
      for (const warning of warnings) {
        expect(warning).not.toContain(outside);
        expect(warning).not.toContain("far");
        expect(warning).not.toContain("shut");
      }
      expect(grep).not.toContain(".ssh");
      expectNoCanary(r);
    }, 60_000);
  }

  it("gives the warnings in --json too, and says the same warning once however often it is given, and at most 20", async () => {
    const { dir, cleanup: remove } = realTempDir("tacit-unreadable-many-");
    try {
      for (let i = 0; i < 25; i++) mkdirSync(path.join(dir, `d${String(i).padStart(2, "0")}`, "shut"), { recursive: true });
      for (let i = 0; i < 25; i++) chmodSync(path.join(dir, `d${String(i).padStart(2, "0")}`, "shut"), 0);
      const script = `requestFileSystem(".", (fs) => {
  for (let i = 0; i < 10; i++) fs.find("d00", "*");
  for (let i = 0; i < 25; i++) fs.find("d" + String(i).padStart(2, "0"), "*");
  println("done");
});
`;
      const r = await run(dir, script, ["--json"]);
      const result = JSON.parse(r.stdout) as { stdout: string; exitCode: number; warnings: string[] };
      expect(result.exitCode, r.stdout).toBe(0);
      expect(result.stdout).toBe("done\n");
      expect(result.warnings).toHaveLength(21);
      expect(result.warnings[0]).toMatch(/^find\(".*\/d00", "\*"\): 1 entry could not be read and is left out of its answer: ".*\/d00\/shut" \(permission denied\)\. .* \(given 11 times\)$/);
      expect(result.warnings[19]).toContain('/d19", "*"): 1 entry');
      expect(result.warnings[20]).toBe("more than 20 different warnings; the rest are not shown: 5 not shown");

      const plain = await run(dir, script);
      expect(plain.stdout).toBe("done\n");
      const lines = warningsOf(plain.stderr);
      expect(lines, plain.stderr).toHaveLength(21);
      expect(lines[20]).toBe("tacit: warning: more than 20 different warnings; the rest are not shown");
    } finally {
      execFileSync("chmod", ["-R", "u+rwx", dir]);
      remove();
    }
  }, 60_000);

  it("grepRecursive() says which file it skipped for a line too long to search", async () => {
    const { dir, cleanup: remove } = realTempDir("tacit-unreadable-long-");
    try {
      writeFileSync(path.join(dir, "small.txt"), "needle\n");
      // Sparse: NUL characters past the line limit, and no newline, on no disk.
      writeFileSync(path.join(dir, "one-line.log"), "needle ");
      truncateSync(path.join(dir, "one-line.log"), LINE_LIMIT_CHARS + 1024);
      const r = await tacit(dir, `requestFileSystem(".", (fs) => println(fs.grepRecursive(".", "needle").map((m) => m.file).join(",")));`);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`${path.join(dir, "small.txt")}\n`);
      expect(warningsOf(r.stderr)).toEqual([
        `tacit: warning: grepRecursive(${JSON.stringify(dir)}, "needle"): 1 entry could not be read and is left out of its answer: ` +
          `${JSON.stringify(path.join(dir, "one-line.log"))} (a line longer than ${LINE_LIMIT_CHARS} characters). ` +
          "The answer holds the rest; do not take it for the whole tree. Search or list elsewhere, or ask the user to make these readable",
      ]);
    } finally {
      remove();
    }
  }, 60_000);
});

describe("a search whose glob has a \"/\"", () => {
  it("warns only of the directories it could not enter that could hold what the glob matches", async () => {
    // find(".", "src/*.ts") warned of an unreadable vendor/, where it could have found nothing.
    const { dir, cleanup: remove } = realTempDir("tacit-unreadable-glob-");
    try {
      const write = (file: string): void => {
        mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        writeFileSync(path.join(dir, file), "needle\n");
      };
      for (const file of ["src/a.ts", "src/deep/b.ts", "src/locked/l.ts", "vendor/v.ts", "docs/locked/d.ts"]) write(file);
      for (const locked of ["src/locked", "vendor", "docs/locked"]) chmodSync(path.join(dir, locked), 0);
      // Each glob, and the unreadable directories that could hold a path it matches.
      const cases: Array<[string, string[]]> = [
        ["src/*.ts", []],
        ["src/**/*.ts", ["src/locked"]],
        ["s*/locked/*.ts", ["src/locked"]],
        ["docs/*/d.ts", ["docs/locked"]],
        ["!src/**", ["docs/locked", "vendor"]],
        ["**/*.ts", ["docs/locked", "src/locked", "vendor"]],
        ["*.ts", ["docs/locked", "src/locked", "vendor"]],
        // A class may hold "/" ("[]/]", "[[:alpha:]/]"): these match docs/locked/d.ts, and, read
        // part by part between the "/"s, hid that docs/locked was left out. So did "|" and "(…)",
        // which picomatch read as a regex's alternation and group (they are the characters they
        // are now, see glob-literal-groups.test.ts). Such a glob counts every directory, as
        // before the glob was read at all.
        ["src/*.ts|vendor/*.ts", ["docs/locked", "src/locked", "vendor"]],
        ["d(ocs/locked|x)/*.ts", ["docs/locked", "src/locked", "vendor"]],
        ["docs[]/]locked/*.ts", ["docs/locked", "src/locked", "vendor"]],
        ["docs[[:alpha:]/]locked/*.ts", ["docs/locked", "src/locked", "vendor"]],
      ];
      const script = cases
        .map(([glob]) => `requestFileSystem(".", (fs) => { fs.find(".", ${lit(glob)}); fs.grepRecursive(".", "needle", ${lit(glob)}); });`)
        .join("\n");
      const r = await run(dir, script);
      expect(r.code, r.stderr).toBe(0);
      const expected = cases.flatMap(([glob, locked]) => {
        if (locked.length === 0) return [];
        const named = locked.map((entry) => `${JSON.stringify(path.join(dir, entry))} (permission denied)`).join(", ");
        const counted = locked.length === 1 ? "1 entry could not be read and is" : `${locked.length} entries could not be read and are`;
        const rest = `: ${counted} left out of its answer: ${named}. The answer holds the rest; do not take it for the whole tree. Search or list elsewhere, or ask the user to make these readable`;
        return [`tacit: warning: find(${JSON.stringify(dir)}, ${JSON.stringify(glob)})${rest}`, `tacit: warning: grepRecursive(${JSON.stringify(dir)}, "needle", ${JSON.stringify(glob)})${rest}`];
      });
      expect(warningsOf(r.stderr)).toEqual(expected);
    } finally {
      execFileSync("chmod", ["-R", "u+rwx", dir]);
      remove();
    }
  }, 60_000);
});

describe("a warning that would name the host's secret", () => {
  it("names the entry with the LLM key masked, as every reply to the script is", async () => {
    const { dir, cleanup: remove } = realTempDir("tacit-unreadable-key-");
    const apiKey = `sk-${makeCanary()}`;
    try {
      mkdirSync(path.join(dir, `stash-${apiKey}`));
      chmodSync(path.join(dir, `stash-${apiKey}`), 0);
      const llm = ["--llm-base-url", "http://127.0.0.1:9/v1", "--llm-api-key", apiKey, "--llm-model", "m"];
      const r = await run(dir, `requestFileSystem(".", (fs) => println(fs.access(".").walk().map((entry) => entry.name).join(",")));`, llm, { TACIT_SEARCH_HELPER: "off" });
      expect(r.code, r.stderr).toBe(0);
      const warnings = warningsOf(r.stderr);
      expect(warnings, r.stderr).toHaveLength(1);
      expect(warnings[0]).toMatch(/^tacit: warning: walk\(\) of ".*": 1 entry could not be read and is left out of its answer: ".*\/stash-[^"]+" \(permission denied\)\. /);
      expect(r.stderr).not.toContain(apiKey);
      expect(r.stdout).not.toContain(apiKey);
    } finally {
      execFileSync("chmod", ["-R", "u+rwx", dir]);
      remove();
    }
  }, 60_000);
});

describe("a warning that would name part of the host's secret", () => {
  it("masks the key before a long path is cut or quoted: neither a piece of it at a cut nor a quoted form reaches the warning", async () => {
    const { dir, cleanup: remove } = realTempDir("tacit-unreadable-cut-key-");
    // A key with a quote and a backslash (quoted, they are escaped), and loops (unreadable to anyone) whose names put
    // the key across the places where a warning cuts a path longer than 200 characters: its 100th and its 80th from the end.
    const apiKey = `sk-${makeCanary()}"\\q`;
    try {
      // The key starts at the path's 90th character, and in the second ends 20 before its end (names of at most 255 bytes).
      const names = [`${"h".repeat(90 - dir.length - 1)}${apiKey}${"t".repeat(120)}`, `${"m".repeat(120)}${apiKey}${"e".repeat(60)}`, `short-${apiKey}`];
      for (const name of names) symlinkSync(name, path.join(dir, name));
      const llm = ["--llm-base-url", "http://127.0.0.1:9/v1", "--llm-api-key", apiKey, "--llm-model", "m"];
      const r = await run(dir, `requestFileSystem(".", (fs) => println(fs.access(".").children().length));`, [...llm, "--json"]);
      const result = JSON.parse(r.stdout) as { stdout: string; warnings: string[] };
      expect(result.stdout, r.stdout).toBe("0\n");
      expect(result.warnings).toHaveLength(1);
      expect(result.warnings[0]).toMatch(/^children\(\) of ".*": 3 entries could not be read /);
      expect(result.warnings[0]).toContain("[redacted]");
      // No piece of the key's random part, whole or cut, quoted or not.
      const random = apiKey.slice(3, 3 + 36);
      for (let at = 0; at + 8 <= random.length; at += 4) expect(r.stdout + r.stderr, random.slice(at, at + 8)).not.toContain(random.slice(at, at + 8));
    } finally {
      remove();
    }
  }, 60_000);
});

describe("a search or listing of a directory that cannot be read itself", () => {
  it("fails, as children() does, instead of answering that it holds nothing", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("walk", () => fs.access("locked").walk().length);
  attempt("find", () => fs.find("locked", "*").length);
  attempt("grepRecursive", () => fs.grepRecursive("locked", "needle").length);
  attempt("children", () => fs.access("locked").children().length);
});
`;
    const r = await run(root, script);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    for (const label of ["walk", "find", "grepRecursive", "children"]) {
      expect(attemptOf(found, label), label).toEqual({ status: "Error", value: `${path.join(root, "locked")}: permission denied` });
    }
    expectNoCanary(r);
  }, 60_000);
});

describe("tacit serve", () => {
  it("puts the warnings in the tool result's text and its warnings, for execute_typescript and in a session", async () => {
    const client = await connectServe(["--no-check"], root, { node });
    try {
      const code = `requestFileSystem(".", (fs) => println(fs.grepRecursive(".", "needle").length, fs.find(".", "*.txt").length));`;
      const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
      const structured = response.structuredContent as unknown as ToolResult;
      const { output, report } = answerTexts(response);
      const text = `${output}${report}`;
      expect(structured.exitCode, text).toBe(0);
      expect(structured.stdout).toBe("2 3\n");
      expect(structured.warnings).toHaveLength(2);
      expect(structured.warnings[0]).toMatch(/^grepRecursive\(".*", "needle"\): 4 entries could not be read and are left out of its answer: ".*\/locked" \(permission denied\), /);
      expect(structured.warnings[1]).toMatch(/^find\(".*", "\*\.txt"\): 2 entries could not be read /);
      // The text the model reads: the output in its own item; how it ended, then each warning as tacit run writes it, in tacit's.
      expect(output).toBe("2 3\n");
      expect(report).toBe(`[tacit: exit 0, ${structured.durationMs} ms]\n${structured.warnings.map((warning) => `tacit: warning: ${warning}`).join("\n")}`);
      expectNoCanary({ stdout: text, stderr: JSON.stringify(structured) });

      const session = await createSession(client);
      const snippet = await runInSession(client, session, `requestFileSystem(".", (fs) => println(fs.access(".").walk().length));`);
      expect(snippet.exitCode, snippet.error ?? "").toBe(0);
      expect(snippet.stdout).toBe("7\n");
      expect(snippet.warnings).toHaveLength(1);
      expect(snippet.warnings[0]).toMatch(/^walk\(\) of ".*": 4 entries could not be read /);
      // The next snippet's answer carries its own warnings only.
      const quiet = await runInSession(client, session, `println("no search");`);
      expect(quiet.warnings).toEqual([]);
    } finally {
      await client.close();
    }
  }, 60_000);
});
