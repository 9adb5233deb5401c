// The FileSystem/FileEntry API end to end, through the real CLI on a real temp tree: what
// each call returns, what it changes on disk (checked from outside), the errors it gives,
// streaming a large file, and the scope's lifetime (sync and async blocks).

import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, type CliResult, expectRefused, realTempDir, tacit, writeTree } from "./fixtures.js";

let root: string;
let cleanup: () => void;

const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-files-api-"));
  writeTree(root, {
    "notes.txt": "alpha\nbeta\ngamma\n",
    "nonl.txt": "a\nb\nc",
    "crlf.txt": "x\r\ny\r\n\r\nz",
    "bin.dat": ALL_BYTES,
    "src/a.ts": "const alpha = 1;\n",
    "src/b.js": "alpha();\n",
    "src/lib/c.ts": "// beta\nexport const alpha = 3;\n",
    "src/lib/d.md": "alpha in prose\n",
    "src/empty": { dir: true },
  });
});
afterAll(() => cleanup());

/**
 * The cases below that only read the tree above and report each call on an attempt line of its
 * own label, in one run: each was a tacit run of its own (a Node host and a Deno sandbox started,
 * about 0.3 s of CPU), and none changes what another meets. Each test judges its own attempts;
 * the roots that are refused come last, after every other call.
 */
const READ_ONLY_SCRIPT = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("missing", () => fs.grepRecursive("no-such-dir", "alpha"));
  attempt("a file", () => fs.grepRecursive("src/a.ts", "alpha"));
  attempt("grep of the file", () => fs.grep("src/a.ts", "alpha").length);
});
requestFileSystem(".", (fs) => {
  attempt("find braces", () => fs.find(".", "**/*.{ts,md}"));
  attempt("grepRecursive range", () => fs.grepRecursive(".", "alpha", "f{1..3}.ts"));
  attempt("find extglob", () => fs.find(".", "!(node_modules)"));
  attempt("find class", () => fs.find("src", "*.[tm][sd]").length);
  attempt("a parenthesis in a name", () => fs.find(".", "*(1).txt").length);
});
requestFileSystem(".", (fs) => {
  attempt("grep i", () => fs.grep("src/a.ts", /ALPHA/i as unknown as string));
  attempt("grepRecursive s", () => fs.grepRecursive("src", /al.ha/s as unknown as string));
  attempt("grep g", () => fs.grep("src/a.ts", /alpha/g as unknown as string).length);
});
attempt("tilde", () => requestFileSystem("~", (fs) => fs.root));
attempt("tilde below", () => requestFileSystem("~/work", (fs) => fs.root));
attempt("root missing", () => requestFileSystem("missing-dir", (fs) => fs.root));
attempt("root a file", () => requestFileSystem("notes.txt", (fs) => fs.root));
`;
let readOnlyRun: Promise<{ r: CliResult; found: ReturnType<typeof attempts> }> | undefined;
/** READ_ONLY_SCRIPT's run (--quiet, as the refused roots' case was run), made by the first test that asks. */
function readOnlyAttempts(): Promise<{ r: CliResult; found: ReturnType<typeof attempts> }> {
  readOnlyRun ??= tacit(root, READ_ONLY_SCRIPT, ["--quiet"]).then((r) => ({ r, found: attempts(r.stdout) }));
  return readOnlyRun;
}

describe("reading, listing and searching", () => {
  it("lists a directory of more entries than the host lists on its own thread (the search worker lists it) the same way: all, sorted, absolute", async () => {
    const many = path.join(root, "many");
    mkdirSync(path.join(many, "sub"), { recursive: true });
    for (let i = 0; i < 6000; i++) writeFileSync(path.join(many, `f${String(i).padStart(4, "0")}.txt`), "");
    writeFileSync(path.join(many, "sub", "inner.txt"), "");
    try {
      const r = await tacit(root, `requestFileSystem("many", (fs) => {
  const children = fs.access(".").children().map((e) => e.path);
  const walked = fs.access(".").walk().map((e) => e.path);
  println(JSON.stringify({ children: children.length, first: children[0], last: children.at(-1), walked: walked.length, inner: walked.includes(fs.root + "/sub/inner.txt"), sorted: children.every((p, i) => i === 0 || children[i - 1]! < p) }));
});`);
      expect(r.stderr).toBe("");
      expect(JSON.parse(r.stdout)).toEqual({
        children: 6001,
        first: path.join(many, "f0000.txt"),
        last: path.join(many, "sub"),
        walked: 6002,
        inner: true,
        sorted: true,
      });
    } finally {
      rmSync(many, { recursive: true, force: true });
    }
  });


  it("names an entry by its normalized absolute path, however the name is written", async () => {
    // The stub appends a name of plain components to the root and normalizes any other (library/sandbox/fs.ts, pathBelow).
    const names = ["notes.txt", "src/lib/c.ts", "src/lib", "...", "..x", ".hidden/x", "x..", "a b/ä", "./notes.txt", "src/./a.ts", "src/../notes.txt", "src//a.ts", "src/", ".", "..", "", "../x", "src/lib/..", "/etc/passwd", "//x", "a/\n/.."];
    const script = `requestFileSystem(".", (fs) => println(JSON.stringify(${JSON.stringify(names)}.map((name) => [fs.access(name).path, fs.access(name).name]))));`;
    const r = await tacit(root, script);
    expect(r.stderr).toBe("");
    const expected = names.map((name) => path.resolve(root, name)).map((p) => [p, path.basename(p)]);
    expect(JSON.parse(r.stdout)).toEqual(expected);
  });

  it("returns what the files hold, with absolute sorted paths", async () => {
    const script = `
const out: Record<string, unknown> = {};
requestFileSystem(".", (fs) => {
  out.root = fs.root;
  const notes = fs.access("notes.txt");
  out.notes = { path: notes.path, name: notes.name, exists: notes.exists, isDirectory: notes.isDirectory, size: notes.size, isClassified: notes.isClassified };
  const src = fs.access("src");
  out.src = { path: src.path, exists: src.exists, isDirectory: src.isDirectory, isClassified: src.isClassified };
  const missing = fs.access("missing.txt");
  out.missing = { exists: missing.exists, isDirectory: missing.isDirectory };
  out.viaDots = fs.access("./src/../notes.txt").read();
  out.viaAbsolute = fs.access(fs.root + "/notes.txt").read();
  out.read = notes.read();
  out.readLines = notes.readLines();
  const bytes = fs.access("bin.dat").readBytes();
  out.bytes = { isUint8Array: bytes instanceof Uint8Array, values: Array.from(bytes) };
  const lines = (p: string) => { const seen: Array<[number, string]> = []; fs.access(p).forEachLine((line, n) => seen.push([n, line])); return seen; };
  out.forEachNotes = lines("notes.txt");
  out.forEachNoNewline = lines("nonl.txt");
  out.forEachCrlf = lines("crlf.txt");
  out.readLinesCrlf = fs.access("crlf.txt").readLines();
  out.readLinesNoNewline = fs.access("nonl.txt").readLines();
  out.children = src.children().map((e) => e.path);
  out.childNames = src.children().map((e) => e.name);
  out.walk = src.walk().map((e) => e.path);
  out.emptyChildren = fs.access("src/empty").children().length;
  out.grep = fs.grep("notes.txt", "^(al|ga)");
  out.grepRegExpSource = fs.grep("src/lib/c.ts", /const\\s+\\w+\\s*=\\s*\\d/.source);
  out.grepRecursive = fs.grepRecursive("src", "alpha");
  out.grepRecursiveTs = fs.grepRecursive("src", "alpha", "*.ts");
  out.grepRecursiveSlash = fs.grepRecursive("src", "alpha", "lib/*");
  out.find = fs.find("src", "*.ts");
  out.findSlash = fs.find(".", "src/lib/*");
  out.findDir = fs.find(".", "lib");
});
println(JSON.stringify(out));
`;
    const r = await tacit(root, script);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    const at = (p: string) => path.join(root, p);
    expect(out).toEqual({
      root,
      notes: { path: at("notes.txt"), name: "notes.txt", exists: true, isDirectory: false, size: 17, isClassified: false },
      src: { path: at("src"), exists: true, isDirectory: true, isClassified: false },
      missing: { exists: false, isDirectory: false },
      viaDots: "alpha\nbeta\ngamma\n",
      viaAbsolute: "alpha\nbeta\ngamma\n",
      read: "alpha\nbeta\ngamma\n",
      readLines: ["alpha", "beta", "gamma"],
      bytes: { isUint8Array: true, values: Array.from(ALL_BYTES) },
      forEachNotes: [[1, "alpha"], [2, "beta"], [3, "gamma"]],
      forEachNoNewline: [[1, "a"], [2, "b"], [3, "c"]],
      forEachCrlf: [[1, "x"], [2, "y"], [3, ""], [4, "z"]],
      readLinesCrlf: ["x", "y", "", "z"],
      readLinesNoNewline: ["a", "b", "c"],
      children: [at("src/a.ts"), at("src/b.js"), at("src/empty"), at("src/lib")],
      childNames: ["a.ts", "b.js", "empty", "lib"],
      walk: [at("src/a.ts"), at("src/b.js"), at("src/empty"), at("src/lib"), at("src/lib/c.ts"), at("src/lib/d.md")],
      emptyChildren: 0,
      grep: [
        { file: at("notes.txt"), lineNumber: 1, line: "alpha" },
        { file: at("notes.txt"), lineNumber: 3, line: "gamma" },
      ],
      grepRegExpSource: [{ file: at("src/lib/c.ts"), lineNumber: 2, line: "export const alpha = 3;" }],
      grepRecursive: [
        { file: at("src/a.ts"), lineNumber: 1, line: "const alpha = 1;" },
        { file: at("src/b.js"), lineNumber: 1, line: "alpha();" },
        { file: at("src/lib/c.ts"), lineNumber: 2, line: "export const alpha = 3;" },
        { file: at("src/lib/d.md"), lineNumber: 1, line: "alpha in prose" },
      ],
      grepRecursiveTs: [
        { file: at("src/a.ts"), lineNumber: 1, line: "const alpha = 1;" },
        { file: at("src/lib/c.ts"), lineNumber: 2, line: "export const alpha = 3;" },
      ],
      grepRecursiveSlash: [
        { file: at("src/lib/c.ts"), lineNumber: 2, line: "export const alpha = 3;" },
        { file: at("src/lib/d.md"), lineNumber: 1, line: "alpha in prose" },
      ],
      find: [at("src/a.ts"), at("src/lib/c.ts")],
      findSlash: [at("src/lib/c.ts"), at("src/lib/d.md")],
      findDir: [at("src/lib")],
    });
  });

  it("grepRecursive of a missing directory or of a file says so, as find() does, rather than find nothing", async () => {
    const { r, found } = await readOnlyAttempts();
    expect(r.code, r.stderr).toBe(0);
    expect(attemptOf(found, "missing")).toEqual({ status: "Error", value: `${path.join(root, "no-such-dir")}: no such file or directory` });
    expect(attemptOf(found, "a file")).toEqual({
      status: "Error",
      value: `${path.join(root, "src/a.ts")}: not a directory; grepRecursive() searches the files under a directory, grep() searches one file`,
    });
    expect(attemptOf(found, "grep of the file")).toEqual({ status: "ok", value: 1 });
  });

  it("refuses a glob with braces or an extglob, which it would take literally, rather than find nothing", async () => {
    // Taken as the characters they are, "**/*.{ts,md}" found nothing in a tree of .ts and .md files.
    const { r, found } = await readOnlyAttempts();
    expect(r.code, r.stderr).toBe(0);
    expect(attemptOf(found, "find braces")).toEqual({
      status: "TypeError",
      value: expect.stringMatching(/^find\(\): the glob "\*\*\/\*\.\{ts,md\}" has a brace alternative \(\{ts,md\}\), which tacit's globs do not expand: they take \*, \*\*, \? and \[\.\.\.\] only\. Call it once for each alternative/),
    });
    expect(attemptOf(found, "grepRecursive range")).toEqual({ status: "TypeError", value: expect.stringMatching(/^grepRecursive\(\): the glob "f\{1\.\.3\}\.ts" has a brace alternative/) });
    expect(attemptOf(found, "find extglob")).toEqual({ status: "TypeError", value: expect.stringMatching(/has an extglob \(!\(node_modules\)\)/) });
    expect(attemptOf(found, "find class")).toEqual({ status: "ok", value: 3 });
    expect(attemptOf(found, "a parenthesis in a name")).toEqual({ status: "ok", value: 0 });
  });

  it("refuses a RegExp whose flags grep would not apply (i, s, u, v), rather than search without them", async () => {
    // Sent as its source, /ALPHA/i found nothing in files holding "alpha", and the script was not told.
    const { r, found } = await readOnlyAttempts();
    expect(r.code, r.stderr).toBe(0);
    expect(attemptOf(found, "grep i")).toEqual({ status: "TypeError", value: expect.stringMatching(/^grep\(\): the pattern \/ALPHA\/i has flags \(i\) that are not applied: .*Write it without them/) });
    expect(attemptOf(found, "grepRecursive s")).toEqual({ status: "TypeError", value: expect.stringMatching(/^grepRecursive\(\): the pattern \/al\.ha\/s has flags \(s\)/) });
    expect(attemptOf(found, "grep g")).toEqual({ status: "ok", value: 1 });
  });
});

describe("writing and errors", () => {
  it("writes, appends, makes parents and deletes; errors name the path and the reason", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("mkdir parents", () => { fs.access("out/deep/er").mkdir(); return [fs.access("out").isDirectory, fs.access("out/deep/er").isDirectory]; });
  attempt("mkdir again", () => { fs.access("out/deep/er").mkdir(); return fs.access("out/deep/er").isDirectory; });
  attempt("write+append", () => { const f = fs.access("out/deep/er/f.txt"); f.write("one\\n"); f.append("two\\n"); return f.read(); });
  attempt("append creates", () => { fs.access("out/appended.txt").append("first"); return fs.access("out/appended.txt").read(); });
  attempt("write replaces", () => { const f = fs.access("out/deep/er/f.txt"); f.write("three"); return [f.read(), f.size]; });
  attempt("write unicode", () => { fs.access("out/u.txt").write("ümlaut ✓"); return fs.access("out/u.txt").size; });
  attempt("delete file", () => { const f = fs.access("out/gone.txt"); f.write("x"); f.delete(); return f.exists; });
  attempt("delete empty dir", () => { const d = fs.access("out/deep/er/empty"); d.mkdir(); d.delete(); return d.exists; });
  attempt("read missing", () => fs.access("missing.txt").read());
  attempt("readBytes missing", () => fs.access("missing.txt").readBytes());
  attempt("forEachLine missing", () => fs.access("missing.txt").forEachLine(() => {}));
  attempt("size missing", () => fs.access("missing.txt").size);
  attempt("children missing", () => fs.access("missing-dir").children());
  attempt("find missing", () => fs.find("missing-dir", "*"));
  attempt("exists missing", () => [fs.access("missing.txt").exists, fs.access("missing.txt").isDirectory, fs.access("notes.txt/below").exists, fs.access("notes.txt").exists]);
  attempt("grep missing", () => fs.grep("missing.txt", "a"));
  attempt("write without dir", () => fs.access("nodir/f.txt").write("x"));
  attempt("write the root", () => fs.access(".").write("x"));
  attempt("read a directory", () => fs.access("src").read());
  attempt("children of a file", () => fs.access("notes.txt").children());
  attempt("delete non-empty dir", () => fs.access("src").delete());
  attempt("delete missing", () => fs.access("missing.txt").delete());
  attempt("mkdir over a file", () => fs.access("notes.txt").mkdir());
  attempt("mkdir through a file", () => fs.access("notes.txt/sub/dir").mkdir());
  attempt("grep bad regex", () => fs.grep("notes.txt", "("));
  attempt("grepRecursive bad regex", () => fs.grepRecursive("src", "[a-"));
  attempt("readClassified ordinary", () => fs.readClassified("notes.txt"));
});
requestFileSystem(".", (fs) => fs.access("src/missing.ts").read());
`;
    const r = await tacit(root, script);
    // The last read is not caught: the script fails, and says why.
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${path.join(root, "src/missing.ts")}: no such file or directory`);
    const found = attempts(r.stdout);
    expect(attemptOf(found, "mkdir parents")).toEqual({ status: "ok", value: [true, true] });
    expect(attemptOf(found, "mkdir again")).toEqual({ status: "ok", value: true });
    expect(attemptOf(found, "write+append")).toEqual({ status: "ok", value: "one\ntwo\n" });
    expect(attemptOf(found, "append creates")).toEqual({ status: "ok", value: "first" });
    expect(attemptOf(found, "write replaces")).toEqual({ status: "ok", value: ["three", 5] });
    expect(attemptOf(found, "write unicode")).toEqual({ status: "ok", value: Buffer.byteLength("ümlaut ✓") });
    expect(attemptOf(found, "delete file")).toEqual({ status: "ok", value: false });
    expect(attemptOf(found, "delete empty dir")).toEqual({ status: "ok", value: false });

    const failsWith = (label: string, file: string, reason: string) => {
      const a = attemptOf(found, label);
      expect(a.status, label).toBe("Error");
      expect(a.value, label).toContain(`${path.join(root, file)}: ${reason}`);
    };
    failsWith("read missing", "missing.txt", "no such file or directory");
    failsWith("readBytes missing", "missing.txt", "no such file or directory");
    failsWith("forEachLine missing", "missing.txt", "no such file or directory");
    failsWith("size missing", "missing.txt", "no such file or directory");
    failsWith("children missing", "missing-dir", "no such file or directory");
    failsWith("find missing", "missing-dir", "no such file or directory");
    expect(attemptOf(found, "exists missing")).toEqual({ status: "ok", value: [false, false, false, true] });
    failsWith("grep missing", "missing.txt", "no such file or directory");
    failsWith("write without dir", "nodir/f.txt", `no such directory ${path.join(root, "nodir")}; make it first: fs.access(${JSON.stringify(path.join(root, "nodir"))}).mkdir() (which makes its parents too)`);
    expect(attemptOf(found, "write the root")).toEqual({ status: "Error", value: `${root}: is a directory (the scope's root)` });
    failsWith("read a directory", "src", "is a directory");
    failsWith("children of a file", "notes.txt", "not a directory");
    failsWith("delete non-empty dir", "src", "directory not empty");
    failsWith("delete missing", "missing.txt", "no such file or directory");
    failsWith("mkdir over a file", "notes.txt", "already exists and is not a directory, so no directory can be made there");
    // What is in the way is named, not the path asked for, which does not exist.
    failsWith("mkdir through a file", "notes.txt/sub/dir", `${path.join(root, "notes.txt")} already exists and is not a directory`);
    for (const label of ["grep bad regex", "grepRecursive bad regex"]) {
      const a = attemptOf(found, label);
      expect(a.status, label).toBe("Error");
      expect(a.value, label).toMatch(/^grep pattern \/.*\/ is not a valid regular expression: .+/);
    }
    expect(attemptOf(found, "grep bad regex").value).toContain("/(/");
    expect(attemptOf(found, "readClassified ordinary").value).toContain("readClassified() is for classified paths");

    // What the disk holds, seen from outside.
    expect(readFileSync(path.join(root, "out/deep/er/f.txt"), "utf8")).toBe("three");
    expect(readFileSync(path.join(root, "out/appended.txt"), "utf8")).toBe("first");
    expect(readFileSync(path.join(root, "out/u.txt"), "utf8")).toBe("ümlaut ✓");
    expect(existsSync(path.join(root, "out/gone.txt"))).toBe(false);
    expect(existsSync(path.join(root, "out/deep/er/empty"))).toBe(false);
    expect(existsSync(path.join(root, "nodir"))).toBe(false);
    expect(readFileSync(path.join(root, "notes.txt"), "utf8")).toBe("alpha\nbeta\ngamma\n");
    expect(existsSync(path.join(root, "src/a.ts"))).toBe(true);
  });
});

describe("a write whose directory is missing", () => {
  it("names the directory missing where a link leads, and making it, as the error says, lets the write through", async () => {
    const { dir, cleanup: done } = realTempDir("tacit-files-missing-dir-");
    try {
      // A dangling link whose directory does not exist yet, and a scope opened through a link to the tree.
      writeTree(dir, { "tree/dangling": { symlink: "gone/deeper/t.txt" }, "via": { symlink: "tree" } });
      const tree = path.join(dir, "tree");
      const via = path.join(dir, "via");
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem("tree", (fs) => {
  attempt("through a link", () => fs.access("dangling").write("x"));
  attempt("make it", () => { fs.access(${JSON.stringify(path.join(tree, "gone/deeper"))}).mkdir(); fs.access("dangling").write("landed"); return fs.access("dangling").read(); });
});
requestFileSystem("via", (fs) => attempt("under a linked root", () => fs.access("nodir/f.txt").write("x")));
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      // Told to make the link's own directory (the root, which exists), a script made nothing and failed again.
      expect(attemptOf(found, "through a link")).toEqual({
        status: "Error",
        value:
          `${path.join(tree, "dangling")}: no such directory ${path.join(tree, "gone/deeper")} (a symbolic link on the way leads to ${path.join(tree, "gone/deeper/t.txt")}); ` +
          `make it first: fs.access(${JSON.stringify(path.join(tree, "gone/deeper"))}).mkdir() (which makes its parents too)`,
      });
      expect(attemptOf(found, "make it")).toEqual({ status: "ok", value: "landed" });
      expect(readFileSync(path.join(tree, "gone/deeper/t.txt"), "utf8")).toBe("landed");
      // A scope opened through a link names paths under its root as the script named it.
      expect(attemptOf(found, "under a linked root")).toEqual({
        status: "Error",
        value: `${path.join(via, "nodir/f.txt")}: no such directory ${path.join(via, "nodir")}; make it first: fs.access(${JSON.stringify(path.join(via, "nodir"))}).mkdir() (which makes its parents too)`,
      });
    } finally {
      done();
    }
  });
});

describe("a root that is not an existing directory", () => {
  it("is refused with what to do; a root of \"~\" is said not to be expanded", async () => {
    const { r, found } = await readOnlyAttempts();
    expect(r.code, r.stderr).toBe(0);
    const advice = `. Ask for a directory that exists (a relative root is taken from the working directory, ${root}), or make it first with mkdir() in a scope on a directory above it`;
    const tilde = ` (tacit does not expand "~": it is taken as a directory named "~" there; give the home directory's path)`;
    expect(attemptOf(found, "tilde")).toEqual({ status: "Error", value: `requestFileSystem("~"): ${path.join(root, "~")} is not an existing directory${tilde}${advice}` });
    expect(attemptOf(found, "tilde below")).toEqual({ status: "Error", value: `requestFileSystem("~/work"): ${path.join(root, "~/work")} is not an existing directory${tilde}${advice}` });
    expect(attemptOf(found, "root missing")).toEqual({ status: "Error", value: `requestFileSystem("missing-dir"): ${path.join(root, "missing-dir")} is not an existing directory${advice}` });
    expect(attemptOf(found, "root a file")).toEqual({ status: "Error", value: `requestFileSystem("notes.txt"): ${path.join(root, "notes.txt")} is not an existing directory${advice}` });
  });
});

describe("forEachLine streams", () => {
  it("counts the lines of a 50 MiB file under a 128 MiB heap limit; read() refuses it", async () => {
    const { dir, cleanup: done } = realTempDir("tacit-files-big-");
    try {
      const line = "0123456789abcdef".repeat(4) + "\n"; // 65 bytes
      const block = Buffer.from(line.repeat(16_384)); // ~1 MiB
      const copies = 50;
      const fd = openSync(path.join(dir, "big.txt"), "w");
      for (let i = 0; i < copies; i++) writeSync(fd, block);
      closeSync(fd);
      const lines = 16_384 * copies;
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  let count = 0, chars = 0, last = 0, wrong = 0;
  fs.access("big.txt").forEachLine((line, n) => { count++; chars += line.length; if (n !== count) wrong++; last = n; });
  println(count, chars, last, wrong);
  attempt("read", () => fs.access("big.txt").read().length);
});
`;
      const r = await tacit(dir, script, ["--memory-limit-mb", "128"]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout.split("\n")[0]).toBe(`${lines} ${lines * 64} ${lines} 0`);
      const read = attemptOf(attempts(r.stdout), "read");
      expect(read.status).toBe("Error");
      expect(read.value).toContain("use forEachLine()");
    } finally {
      done();
    }
  });
});

describe("scope revocation", () => {
  it("refuses a capability used after its sync block; an async block keeps it until its promise settles", async () => {
    const script = `${ATTEMPT_PRELUDE}
const leakedFs = requestFileSystem(".", (fs) => fs);
const leakedEntry = requestFileSystem(".", (fs) => fs.access("notes.txt"));
attempt("sync fs.read", () => leakedFs.access("notes.txt").read());
attempt("sync entry.read", () => leakedEntry.read());
attempt("sync entry.exists", () => leakedEntry.exists);
attempt("sync find", () => leakedFs.find(".", "*"));
attempt("sync grepRecursive", () => leakedFs.grepRecursive(".", "a"));
attempt("sync write", () => leakedFs.access("late-sync.txt").write("x"));
attempt("sync mkdir", () => leakedFs.access("late-dir").mkdir());

let thrownFs: FileSystem | null = null;
try {
  requestFileSystem(".", (fs) => { thrownFs = fs; throw new Error("boom"); });
} catch {}
attempt("after a throwing block", () => thrownFs!.access("notes.txt").read());

let later: string[] = [];
const asyncFs = await requestFileSystem(".", async (fs) => {
  await new Promise((r) => setTimeout(r, 5));
  attempt("async during", () => fs.access("notes.txt").readLines()[0]);
  setTimeout(() => {
    try { fs.access("late-async.txt").write("x"); later.push("not refused"); }
    catch (e) { later.push((e instanceof SecurityError ? "SecurityError " : "Error ") + (e as Error).message); }
  }, 30);
  return fs;
});
attempt("async after", () => asyncFs.access("notes.txt").read());
await new Promise((r) => setTimeout(r, 100));
attempt("async timer after settle", () => later);

let rejectedFs: FileSystem | null = null;
try {
  await requestFileSystem(".", async (fs) => { rejectedFs = fs; await new Promise((r) => setTimeout(r, 5)); throw new Error("async boom"); });
} catch {}
attempt("after a rejected block", () => rejectedFs!.access("notes.txt").read());
`;
    const r = await tacit(root, script);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const found = attempts(r.stdout);
    expectRefused(
      found,
      ["sync fs.read", "sync entry.read", "sync entry.exists", "sync find", "sync grepRecursive", "sync write", "sync mkdir", "after a throwing block", "async after", "after a rejected block"],
      /outside its requestFileSystem scope/,
    );
    expect(attemptOf(found, "async during")).toEqual({ status: "ok", value: "alpha" });
    const later = attemptOf(found, "async timer after settle").value as string[];
    expect(later).toHaveLength(1);
    expect(later[0]).toMatch(/^SecurityError .*outside its requestFileSystem scope/);
    for (const name of ["late-sync.txt", "late-dir", "late-async.txt"]) expect(existsSync(path.join(root, name)), name).toBe(false);
  });
});
