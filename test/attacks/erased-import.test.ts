// The rewriter erases an import that binds nothing at run time (`import "tacit"`, `import type
// { … } from "tacit"`). Erased to blanks, it no longer ended the statement before it: with no
// semicolon there, Deno read that statement and the one after as one, a call (or a member
// access) that the validator and the type checker, which read the script as written, never saw.
// `f === f.constructor`, then `(("…" as any))()` past an erased import, ran as
// `f === f.constructor("…")()`: the Function constructor, called with a string.

import { describe, expect, it } from "vitest";
import { connectServe, createSession, runInSession, runScript, tempDir } from "../helpers.js";

const NO_CACHE = { env: { TACIT_TYPECHECK_CACHE: "off" } };

describe.concurrent("an import the rewriter erases", () => {
  it("still ends the statement before it, as the checks read it", async () => {
    const code = [
      "let calls = 0;",
      "const g: any = () => { calls++; return 0; };",
      "const h = g",
      'import "tacit"',
      "(1)",
      "const k = g",
      'import type { FileSystem } from "tacit"',
      "(2)",
      "println(calls, typeof h, typeof k);",
    ].join("\n");
    const r = await runScript(code, [], NO_CACHE);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("0 function function\n");
    expect(r.code).toBe(0);
  });

  it("does not let a script call what the validator saw only compared (`.constructor`)", async () => {
    const code = [
      "const f: any = () => 1;",
      "const probe = f === f.constructor",
      'import "tacit"',
      '(("println(\'code from a string ran\')" as any))();',
    ].join("\n");
    const r = await runScript(code, [], NO_CACHE);
    // What the checks saw: a string called, which is no function.
    expect(r.stderr).toContain("is not a function");
    expect(r.stderr).not.toContain("Code generation from strings");
    expect(r.stdout).toBe("");
    expect(r.code).not.toBe(0);
  });

  it("in a session's snippet too", async () => {
    const { dir, cleanup } = tempDir("tacit-erased-import-");
    const client = await connectServe(["--quiet"], dir);
    try {
      const session = await createSession(client);
      await runInSession(client, session, "let calls = 0;\nconst g: any = () => { calls++; return 0; };");
      const result = await runInSession(client, session, 'const h = g\nimport "tacit"\n(1)\nprintln(calls, typeof h);');
      expect(result.error ?? "").toBe("");
      expect(result.stdout).toBe("0 function\n");
    } finally {
      await client.close();
      cleanup();
    }
  });
});
