// picomatch 4.0.7 never returns from compiling a glob with a "/" that ends in two escaped
// backslashes (four backslashes after "x/a"). A script's find(".", such a glob) held the host's
// search thread at full CPU until the time limit, and an operator's --secure-output ending in two
// backslashes hung the search of tacit's own files that every grepRecursive makes, and a policy
// rule's path ending so hung tacit at its start, past SIGTERM. Escaped
// backslashes outside a class are now given to picomatch as a class holding the backslash
// (glob-classes.ts withBackslashClasses, in forPicomatch, which every picomatch compile of
// tacit's goes through), which matches the same character. Through the real CLI.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, tempDirWithHome } from "../helpers.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-glob-backslashes-");
afterAll(cleanup);

mkdirSync(path.join(dir, "x"));
writeFileSync(path.join(dir, "x", "a.txt"), "TOKEN plain\n");
// A file whose name ends in two backslashes: what the glob names.
writeFileSync(path.join(dir, "x", "a\\\\"), "TOKEN odd\n");
const TWO_ESCAPED = "\\".repeat(4);

/** `tacit run` of `code` in the temp dir, with a time limit the hang would reach. */
function run(script: string, code: string, extra: string[] = []) {
  writeFileSync(path.join(dir, script), code);
  return runCli(["run", "--no-check", "--exec-timeout-ms", "20000", ...extra, script], { cwd: dir, env });
}

describe.concurrent("globs with escaped backslashes", () => {
  it("find() with a glob ending in two escaped backslashes answers, and matches the file so named", async () => {
    const glob = `x/a${TWO_ESCAPED}`;
    const r = await run("find.ts", `requestFileSystem(".", (fs) => { println(JSON.stringify(fs.find(".", ${JSON.stringify(glob)}))); });\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([path.join(dir, "x", "a\\\\")]);
  });

  it("grepRecursive answers with a --secure-output whose name ends in two backslashes, and leaves that file out", async () => {
    const sink = path.join(dir, "out\\\\");
    // An earlier run's plaintext in the sink: the search must leave the file out, by its name.
    writeFileSync(sink, "TOKEN from an earlier run's secret\n", { mode: 0o600 });
    // The pattern is split so that the script itself holds no match.
    const r = await run("grep.ts", `requestFileSystem(".", (fs) => { println(fs.grepRecursive(".", "TOK" + "EN").map((m) => m.file).sort().join(",")); });\n`, ["--secure-output", sink]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split(",")).toEqual([path.join(dir, "x", "a.txt"), path.join(dir, "x", "a\\\\")].sort());
    expect(r.stdout).not.toContain("earlier run");
    expect(readFileSync(sink, "utf8")).toContain("TOKEN from an earlier run's secret\n");
  });

  it("a policy rule whose path ends in two escaped backslashes is compiled, and the run goes on", async () => {
    const config = path.join(dir, "policy.json");
    writeFileSync(config, JSON.stringify({ policy: { rules: [{ action: "fs.write", path: path.join(dir, "x", `a${TWO_ESCAPED}`), tier: "always-ask" }] } }));
    const r = await run("write.ts", `requestFileSystem(".", (fs) => { fs.access("written.txt").write("hi"); println("wrote"); });\n`, ["--config", config]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("wrote\n");
  });
});
