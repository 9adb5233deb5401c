// The sandbox's and the pure evaluator's main modules are each one bundled file
// (rolldown.config.mjs), so that a boot parses one file instead of several: Deno is handed no
// other module of tacit's, and what agent code sees of the library (its names, SecurityError)
// is what the unbundled files gave it.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bootstrapPath, pureEvaluatorPath } from "../../runner/paths.js";
import { runScript, tempDirWithHome } from "../helpers.js";

describe("the bundled main modules Deno runs", () => {
  it.each([
    ["the sandbox", bootstrapPath],
    ["the pure evaluator", pureEvaluatorPath],
  ])("%s's names no other module: Deno has nothing of tacit's to load but this file", (_what, file) => {
    const text = readFileSync(file, "utf8");
    // A static import or re-export names a module Deno would read; import(…) of a blob: URL does
    // not, nor does one of Deno's own built-ins (the pure evaluator's node:vm), which is no file.
    expect(text).not.toMatch(/(?:^|[;}\s])(?:import|export)\s*(?:[\w*{$]|["'`])[^;]*?\bfrom\s*["'`](?!node:[a-z_]+["'`])/);
    expect(text).not.toMatch(/(?:^|[;}\s])import\s*["'`]/);
  });

  it("keeps the library's names as agent code sees them (not mangled)", async () => {
    const { dir, env, cleanup } = tempDirWithHome("sandbox-bundle-");
    try {
      const script = [
        "try {",
        '  requestFileSystem("/", () => undefined);',
        "} catch (e) {",
        "  println(e instanceof SecurityError, (e as Error).name, (e as Error).constructor.name);",
        "}",
        "println(println.name, requestFileSystem.name, classify.name, SecurityError.name);",
      ].join("\n");
      const run = await runScript(script, [], { cwd: dir, env });
      expect(run).toMatchObject({
        code: 0,
        stdout: "true SecurityError SecurityError\nprintln requestFileSystem classify SecurityError\n",
      });
    } finally {
      cleanup();
    }
  });
});
