// The type-check verdict cache (runner/typecheck-cache.ts): a script that passed is not checked
// again, for the exact same text and checker identity only; entries others could write are
// ignored; and a forged entry gets nothing past the validator, which runs on every script.

import { chmodSync, existsSync, readdirSync, writeFileSync } from "node:fs";
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
