// The type-check verdict cache (runner/typecheck-cache.ts): a script that passed is not checked
// again, for the exact same text and checker identity only; entries others could write are
// ignored; and a forged entry gets nothing past the validator, which runs on every script.

import { chmodSync, existsSync, lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TypeCheckCache } from "../../runner/typecheck-cache.js";
import { typeCheck, typeCheckCacheIn } from "../../runner/typecheck.js";
import { runScript, tempDir } from "../helpers.js";

const home = tempDir("tacit-typecheck-cache-");
afterAll(home.cleanup);

describe("the type-check verdict cache", () => {
  it("remembers a pass for the exact script and identity only", () => {
    const cache = new TypeCheckCache(path.join(home.dir, "unit"), "identity-1");
    expect(cache.passed("println(1);")).toBe(false);
    cache.remember("println(1);");
    expect(cache.passed("println(1);")).toBe(true);
    expect(cache.passed("println(1); ")).toBe(false);
    expect(new TypeCheckCache(path.join(home.dir, "unit"), "identity-2").passed("println(1);")).toBe(false);
  });

  it("ignores an entry others can write, and one whose content does not match its name", () => {
    const dir = path.join(home.dir, "unsafe");
    const cache = new TypeCheckCache(dir, "id");
    cache.remember("a();");
    const [entry] = readdirSync(dir);
    chmodSync(path.join(dir, entry!), 0o666);
    expect(cache.passed("a();")).toBe(false);
    chmodSync(path.join(dir, entry!), 0o600);
    expect(cache.passed("a();")).toBe(true);
    // The file named for "a();" claims another script: not a pass for either.
    writeFileSync(path.join(dir, entry!), JSON.stringify({ identity: "id", script: "b();" }), { mode: 0o600 });
    expect(cache.passed("a();")).toBe(false);
    expect(cache.passed("b();")).toBe(false);
  });

  it("keeps at most 256 entries", () => {
    const dir = path.join(home.dir, "many");
    const cache = new TypeCheckCache(dir, "id");
    for (let i = 0; i < 270; i++) cache.remember(`println(${i});`);
    expect(readdirSync(dir).filter((name) => name.endsWith(".json")).length).toBe(256);
    expect(cache.passed("println(269);")).toBe(true);
  });

  it("is filled by a passing check and never by a failing one", async () => {
    const cache = typeCheckCacheIn(path.join(home.dir, "checks"));
    expect((await typeCheck('const n: number = 1;\nprintln(n);\n', 30_000, cache)).ok).toBe(true);
    expect(cache.passed('const n: number = 1;\nprintln(n);\n')).toBe(true);
    const bad = 'const n: number = "one";\n';
    expect((await typeCheck(bad, 30_000, cache)).ok).toBe(false);
    expect(cache.passed(bad)).toBe(false);
    expect(existsSync(cache.dir)).toBe(true);
  });

  it("through the CLI: a remembered pass skips the checker, and nothing gets past the validator", async () => {
    const tacitHome = path.join(home.dir, "cli");
    const cache = typeCheckCacheIn(tacitHome);
    // Forged passes: one for a script with a type error, one for a script the validator refuses.
    const typeError = 'const n: number = "not checked";\nprintln(n);\n';
    const forbidden = 'Deno.writeTextFileSync("/tmp/x", "y");\n';
    cache.remember(typeError);
    cache.remember(forbidden);
    const env = { TACIT_HOME: tacitHome };

    const skipped = await runScript(typeError, [], { env });
    expect(skipped.stderr).toBe("");
    expect(skipped.stdout).toBe("not checked\n");
    expect(skipped.code).toBe(0);

    const refused = await runScript(forbidden, [], { env });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("ambient-authority");

    // Turned off, the checker runs and finds the error.
    const checked = await runScript(typeError, [], { env: { ...env, TACIT_TYPECHECK_CACHE: "off" } });
    expect(checked.code).not.toBe(0);
    expect(checked.stderr).toContain("TS2322");
  });
});

/**
 * A program that runs tacit as `node` would, after planting a link to `victim` at the name the
 * run writes `entry` under first (its pid is the shell's: exec keeps it), as another user who
 * can write the cache directory could.
 */
function plantingLauncher(dir: string, cacheDir: string, entry: string, victim: string): string {
  const launcher = path.join(dir, "plant-then-run.sh");
  const quoted = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
  writeFileSync(launcher, `#!/bin/sh\nln -s ${quoted(victim)} ${quoted(path.join(cacheDir, entry))}.$$.tmp\nexec ${quoted(process.execPath)} "$@"\n`, { mode: 0o700 });
  return launcher;
}

/** The name of the entry `script` is remembered under in `tacitHome`'s cache (made, read, removed). */
function entryName(tacitHome: string, script: string): string {
  const cache = typeCheckCacheIn(tacitHome);
  const before = new Set(existsSync(cache.dir) ? readdirSync(cache.dir) : []);
  cache.remember(script);
  const made = readdirSync(cache.dir).filter((name) => !before.has(name));
  expect(made).toHaveLength(1);
  rmSync(path.join(cache.dir, made[0]!));
  return made[0]!;
}

describe("the type-check cache directory, against a link planted in it", () => {
  it("a link at the name an entry is first written under is not written through", async () => {
    const tacitHome = path.join(home.dir, "planted-link");
    const script = 'println("checked once");\n';
    const entry = entryName(tacitHome, script);
    const cacheDir = path.join(tacitHome, "typecheck-cache");
    const victim = path.join(home.dir, "planted-link-victim.txt");
    writeFileSync(victim, "the victim's own text\n");
    const run = await runScript(script, [], { env: { TACIT_HOME: tacitHome }, node: plantingLauncher(home.dir, cacheDir, entry, victim) });
    expect(run).toMatchObject({ code: 0, stdout: "checked once\n", stderr: "" });
    // Before, the run wrote its entry through the link: the victim held the cache entry, and the
    // link, renamed to the entry's name, passed every later run of the script.
    expect(readFileSync(victim, "utf8")).toBe("the victim's own text\n");
    expect(lstatSync(path.join(cacheDir, entry)).isFile()).toBe(true);
  });

  it("a cache directory others can write is neither read nor written", async () => {
    const tacitHome = path.join(home.dir, "shared-dir");
    const typeError = 'const n: number = "a type error";\nprintln(n);\n';
    const entry = entryName(tacitHome, typeError);
    const cacheDir = path.join(tacitHome, "typecheck-cache");
    // A pass for the script with a type error, remembered there: another user could have put it in place.
    typeCheckCacheIn(tacitHome).remember(typeError);
    chmodSync(cacheDir, 0o777);
    const victim = path.join(home.dir, "shared-dir-victim.txt");
    writeFileSync(victim, "the victim's own text\n");
    const run = await runScript(typeError, [], { env: { TACIT_HOME: tacitHome }, node: plantingLauncher(home.dir, cacheDir, entry, victim) });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("TS2322");
    expect(readFileSync(victim, "utf8")).toBe("the victim's own text\n");
  });

  it("a tacit home others can write is not used for the cache either", async () => {
    const tacitHome = path.join(home.dir, "shared-home");
    const typeError = 'const n: number = "a type error too";\nprintln(n);\n';
    // A pass remembered in a private cache directory, in a home that others can write: they
    // could have put that directory there, or swap it for a link between check and write.
    typeCheckCacheIn(tacitHome).remember(typeError);
    chmodSync(tacitHome, 0o777);
    const run = await runScript(typeError, [], { env: { TACIT_HOME: tacitHome } });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("TS2322");
  });
});
