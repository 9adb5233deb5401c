// A link that leads out of the scope is refused the same way whatever lies out there. Followed
// further, its errors told a script one thing about the outside per link it made: a link into a
// loop of links outside said "too many symbolic links", one into a directory tacit may not search
// "permission denied", any other "outside this file system scope"; a listing warned of the loop
// as an entry "left out" and said nothing of the rest; and requestFileSystem on such links said
// "too many symbolic links" or "outside the allowed roots". Now every one gets the refusal of a
// link out of the scope (or of a root outside the allowed roots), and a listing leaves each out
// without a word. A link that resolves inside keeps its precise errors. Through the real CLI and a
// real Deno, run where permission bits bind (see nodeBoundByPermissions).

import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runCli, unchecked } from "../helpers.js";
import { ATTEMPT_PRELUDE, attempts, lit, nodeBoundByPermissions, realTempDir } from "./fixtures.js";

let base: string;
let cleanup: () => void;
let node: string;
let work: string;
let home: string;

/** Links in work/ that lead outside it, each to something else there. */
const OUTSIDE_LINKS = ["toFile", "toMissing", "toNotDir", "toLoop", "toLoopDir", "toLocked", "toLockedDir"];

beforeAll(() => {
  ({ dir: base, cleanup } = realTempDir("tacit-outside-link-"));
  node = nodeBoundByPermissions(base);
  work = path.join(base, "work");
  home = path.join(base, "home");
  const outside = path.join(base, "outside");
  mkdirSync(path.join(outside, "shut"), { recursive: true });
  mkdirSync(work);
  writeFileSync(path.join(outside, "file"), "outside\n");
  writeFileSync(path.join(outside, "shut", "f"), "outside\n");
  symlinkSync("loopB", path.join(outside, "loopA"));
  symlinkSync("loopA", path.join(outside, "loopB"));
  symlinkSync("../outside/file", path.join(work, "toFile"));
  symlinkSync("../outside/nothing", path.join(work, "toMissing"));
  symlinkSync("../outside/file/x", path.join(work, "toNotDir"));
  symlinkSync("../outside/loopA/x", path.join(work, "toLoop"));
  symlinkSync("../outside/loopA", path.join(work, "toLoopDir"));
  symlinkSync("../outside/shut/f", path.join(work, "toLocked"));
  symlinkSync("../outside/shut", path.join(work, "toLockedDir"));
  // Inside: a loop of its own, which keeps its own error.
  symlinkSync("inB", path.join(work, "inA"));
  symlinkSync("inA", path.join(work, "inB"));
  execFileSync("chmod", ["000", path.join(outside, "shut")]);
  // The premise: the Node tacit runs with cannot search a directory of mode 000.
  const probe = `try { require("node:fs").statSync(${lit(path.join(outside, "shut", "f"))}); console.log("searched"); } catch (e) { console.log(e.code); }`;
  expect(execFileSync(node, ["-e", probe], { encoding: "utf8" }).trim(), "the tests' tacit searches a directory of mode 000").toBe("EACCES");
});

afterAll(() => {
  execFileSync("chmod", ["-R", "u+rwx", base]);
  cleanup();
});

function run(script: string): Promise<{ stdout: string; stderr: string }> {
  return runCli(unchecked(["run", "-"]), { cwd: work, input: script, env: { TACIT_HOME: home }, node });
}

/** Every operation on `name` (and below it), each an attempt labelled `<name> <operation>`. */
const OPERATIONS = (name: string): string => `
  attempt(${lit(`${name} exists`)}, () => fs.access(${lit(name)}).exists);
  attempt(${lit(`${name} read`)}, () => fs.access(${lit(name)}).read());
  attempt(${lit(`${name} lines`)}, () => { let n = 0; fs.access(${lit(name)}).forEachLine(() => n++); return n; });
  attempt(${lit(`${name} write`)}, () => fs.access(${lit(name)}).write("x"));
  attempt(${lit(`${name} children`)}, () => fs.access(${lit(name)}).children().length);
  attempt(${lit(`${name} grep`)}, () => fs.grep(${lit(name)}, "x").length);
  attempt(${lit(`${name} find`)}, () => fs.find(${lit(name)}, "*").length);
  attempt(${lit(`${name} below`)}, () => fs.access(${lit(`${name}/y`)}).exists);
  attempt(${lit(`${name} mkdir`)}, () => fs.access(${lit(`${name}/y/z`)}).mkdir());
`;

it("every link out of the scope is refused alike, whatever lies outside; a loop inside keeps its own error", async () => {
  const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
${[...OUTSIDE_LINKS, "inA"].map(OPERATIONS).join("")}
});
`;
  const r = await run(script);
  const found = attempts(r.stdout);
  for (const name of OUTSIDE_LINKS) {
    for (const operation of ["exists", "read", "lines", "write", "children", "grep", "find", "below", "mkdir"]) {
      const label = `${name} ${operation}`;
      const attempt = found.get(label);
      expect(attempt, `${label}\n${r.stdout}\n${r.stderr}`).toBeDefined();
      expect(attempt!.status, `${label}: ${JSON.stringify(attempt!.value)}`).toBe("SecurityError");
      const target = operation === "below" ? `${name}/y` : operation === "mkdir" ? `${name}/y/z` : name;
      // The bad thing: the refusal differs by what lies outside (a loop, a directory tacit may not search).
      expect(attempt!.value, label).toBe(
        `${path.join(work, target)}: resolves (through a symbolic link) to a place outside this file system scope (${work}); links out of the scope are not followed.`,
      );
    }
  }
  const inside = found.get("inA read");
  expect(inside?.status).toBe("Error");
  expect(String(inside?.value)).toContain("too many symbolic links");
});

it("a listing leaves every link out of the scope out alike, and warns only of a loop inside", async () => {
  const r = await run(`requestFileSystem(".", (fs) => { println(fs.access(".").children().map((e) => e.name).sort().join(",")); println(fs.find(".", "*").length); println(fs.grepRecursive(".", "x").length); });\n`);
  expect(r.stdout).toBe("\n0\n0\n");
  // The bad thing: a warning names a link out of the scope as left out (it told a loop outside from the rest).
  for (const name of OUTSIDE_LINKS) expect(r.stderr).not.toContain(`/${name}"`);
  expect(r.stderr).toContain(`${JSON.stringify(path.join(work, "inA"))} (a loop of symbolic links)`);
});

it("requestFileSystem on a link out of the allowed roots is refused alike, whatever lies outside", async () => {
  const names = ["toLoopDir", "toLockedDir", "toFile", "toMissing"];
  const script = `${ATTEMPT_PRELUDE}
${names.map((name) => `attempt(${lit(name)}, () => requestFileSystem(${lit(name)}, () => 1));`).join("\n")}
`;
  const r = await run(script);
  const found = attempts(r.stdout);
  for (const name of names) {
    const attempt = found.get(name);
    expect(attempt?.status, `${name}: ${r.stdout}`).toBe("SecurityError");
    expect(attempt!.value, name).toBe(
      `requestFileSystem("${name}"): ${path.join(work, name)} is outside the allowed roots (${work}). ` +
        "Ask for a directory inside one of them, or have the operator add it with --allowed-roots (config libraryConfig.allowedRoots).",
    );
  }
});
