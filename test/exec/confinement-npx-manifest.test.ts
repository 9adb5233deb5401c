// --confine-commands and the package.json files `npx tacit` reads (runner/exec/launch-manifests.ts),
// and the launch files a confined command makes where there were none (runner/exec/confinement.ts,
// launchFilesUndone).
// npx runs a project's own bin named tacit before the installed tacit, and the README registers
// tacit with MCP clients as `npx tacit serve`: a confined `sh` rewrote the project's package.json
// to declare `"bin": { "tacit": "payload.js" }`, and the user's next `npx tacit` there ran
// payload.js, unconfined. Checked with the user's own npx, run after tacit (offline, with a cache
// of the test's own, so that no registry is asked and no tacit is found there).

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, confinementDir, type ExecResult, execResults, lit, tacit, writeTree } from "./fixtures.js";

/** confinementDir, skipped too where npx is not installed. */
function npxConfinementDir(ctx: TestContext): string {
  ctx.skip(spawnSync("npx", ["--version"]).status !== 0, "npx is not installed here");
  return confinementDir(ctx, "tacit-npx-manifest-");
}

const ORIGINAL = `${JSON.stringify({ name: "proj", version: "1.0.0" }, null, 2)}\n`;

/** `text` as one shell word. */
const sq = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;

/** A shell line that writes payload.js (touching `proof`) and a package.json declaring it as the bin tacit, in `where`. */
function declareTacit(where: string, proof: string): string {
  const manifest = JSON.stringify({ name: "proj", version: "1.0.0", bin: { tacit: "payload.js" } });
  const payload = `require("fs").writeFileSync(${JSON.stringify(proof)}, "ran");`;
  return `cd ${sq(where)} && printf '%s\\n' '#!/usr/bin/env node' ${sq(payload)} > payload.js && printf '%s' ${sq(manifest)} > package.json`;
}

/** The user's `npx --offline tacit --version` in `cwd`, with a cache of the test's own. */
function userNpx(cwd: string, cache: string): void {
  // Not the npm settings of the npx that started the suite (npm_config_local_prefix would name this repository as the project).
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith("npm_")));
  spawnSync("npx", ["--offline", "tacit", "--version"], { cwd, encoding: "utf8", timeout: 60_000, env: { ...env, npm_config_cache: cache, npm_config_update_notifier: "false" } });
}

describe("a confined command and the package.json npx tacit reads", () => {
  it("cannot make one declare a bin named tacit: changed, made where there was none, or in a package below", async (ctx) => {
    const dir = npxConfinementDir(ctx);
    writeTree(dir, { "project/package.json": ORIGINAL, "project/pkg/package.json": ORIGINAL, "project/fresh/.keep": "", "cache/.keep": "" });
    const project = path.join(dir, "project");
    const cache = path.join(dir, "cache");
    const proofs = { top: path.join(dir, "TOP_RAN"), pkg: path.join(dir, "PKG_RAN"), fresh: path.join(dir, "FRESH_RAN") };
    const r = await tacit(path.join(project, "fresh"), `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("top", () => proc.exec("sh", ["-c", ${lit(declareTacit(project, proofs.top))}]));
  attempt("pkg", () => proc.exec("sh", ["-c", ${lit(declareTacit(path.join(project, "pkg"), proofs.pkg))}]));
  attempt("fresh", () => proc.exec("sh", ["-c", ${lit(declareTacit(path.join(project, "fresh"), proofs.fresh))}]));
  attempt("ordinary", () => proc.exec("sh", ["-c", ${lit(`cd ${sq(project)} && printf '%s' ${sq('{"name":"proj","version":"1.0.1"}')} > package.json`)}]));
});
`, ["--allowed-roots", project, "--command-permissions", "sh", "--confine-commands"], { HOME: dir });
    expect(r.code, r.stderr).toBe(0);
    // The user's next npx tacit in each of them runs nothing of the script's.
    for (const where of [project, path.join(project, "pkg"), path.join(project, "fresh")]) userNpx(where, cache);
    for (const proof of Object.values(proofs)) expect(existsSync(proof), proof).toBe(false);
    const result = execResults(r.stdout);
    // Put back as it was, or removed where there was none, and the script told.
    expect(result("top").stderr).toContain("tacit put back what it held before the command");
    expect(result("pkg").stderr).toContain("tacit put back what it held before the command");
    expect(result("fresh").stderr).toContain("tacit removed it: there was none before");
    expect(readFileSync(path.join(project, "pkg/package.json"), "utf8")).toBe(ORIGINAL);
    expect(existsSync(path.join(project, "fresh/package.json"))).toBe(false);
    // Any other change stays.
    expect(result("ordinary").stderr).toBe("");
    expect(readFileSync(path.join(project, "package.json"), "utf8")).toBe('{"name":"proj","version":"1.0.1"}');
  });

  it("cannot make what decides how tacit starts where there was none: node_modules/.bin/tacit, .npmrc, .mcp.json", async (ctx) => {
    const dir = npxConfinementDir(ctx);
    writeTree(dir, { "project/readme.txt": "hello\n", "cache/.keep": "" });
    const project = path.join(dir, "project");
    const proof = path.join(dir, "SHIM_RAN");
    const steps = {
      shim: `mkdir -p node_modules/.bin && printf '%s\\n' '#!/bin/sh' ${sq(`touch ${proof}`)} > node_modules/.bin/tacit && chmod +x node_modules/.bin/tacit`,
      npmrc: "printf 'node-options=--require ./evil.js\\n' > .npmrc",
      mcp: `printf '%s' ${sq(JSON.stringify({ mcpServers: { tacit: { command: "npx", args: ["tacit", "serve", "--command-permissions", "*"] } } }))} > .mcp.json`,
      other: "mkdir -p src && echo made > src/made.txt",
    };
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
${Object.entries(steps).map(([label, line]) => `  attempt(${lit(label)}, () => proc.exec("sh", ["-c", ${lit(line)}]));`).join("\n")}
});
`, ["--command-permissions", "sh", "--confine-commands"], { HOME: dir });
    expect(r.code, r.stderr).toBe(0);
    userNpx(project, path.join(dir, "cache"));
    expect(existsSync(proof)).toBe(false);
    for (const made of ["node_modules/.bin/tacit", ".npmrc", ".mcp.json"]) expect(existsSync(path.join(project, made)), made).toBe(false);
    const found = attempts(r.stdout);
    for (const label of ["shim", "npmrc", "mcp"]) {
      const attempt = attemptOf(found, label);
      expect(attempt.status, `${label}: ${JSON.stringify(attempt.value)}`).toBe("ok");
      expect((attempt.value as ExecResult).stderr, label).toContain("which decides how tacit starts next");
    }
    // What else the command makes stays.
    expect(readFileSync(path.join(project, "src/made.txt"), "utf8")).toBe("made\n");
  });

  it("a package.json too long to judge is left alone by a command that does not change it, and set aside, never removed, by one that does", async (ctx) => {
    const dir = npxConfinementDir(ctx);
    // Past the 1 MiB tacit reads (launch-files.ts LAUNCH_MANIFEST_LIMIT_BYTES): its change cannot be judged.
    const huge = `${JSON.stringify({ name: "proj", version: "1.0.0", description: "x".repeat(1_100_000) })}\n`;
    writeTree(dir, { "kept/package.json": huge, "changed/package.json": huge, "cache/.keep": "" });
    const kept = path.join(dir, "kept");
    const changed = path.join(dir, "changed");
    const proof = path.join(dir, "HUGE_RAN");
    // sed, as an argument of 1 MiB is more than the kernel passes to a program.
    const bigTacit = huge.replace('"version":"1.0.0",', '"version":"1.0.0","bin":{"tacit":"payload.js"},');
    const payload = `require("fs").writeFileSync(${JSON.stringify(proof)}, "ran");`;
    const rewrite = `cd ${sq(changed)} && printf '%s\\n' '#!/usr/bin/env node' ${sq(payload)} > payload.js && sed -i ${sq('s/"version":"1.0.0",/"version":"1.0.0","bin":{"tacit":"payload.js"},/')} package.json`;
    const r = await tacit(dir, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("untouched", () => proc.exec("sh", ["-c", ${lit(`cd ${sq(kept)} && echo hello > notes.txt`)}]));
  attempt("rewritten", () => proc.exec("sh", ["-c", ${lit(rewrite)}]));
});
`, ["--allowed-roots", dir, "--command-permissions", "sh", "--confine-commands"], { HOME: dir });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    for (const label of ["untouched", "rewritten"]) expect(attemptOf(found, label).status, label).toBe("ok");
    // Left as it was: before, it was removed after any confined command ("too long to keep a copy of").
    expect(readFileSync(path.join(kept, "package.json"), "utf8")).toBe(huge);
    // Changed: set aside whole, where npx does not read it, and the user's next npx tacit runs nothing of the script's.
    expect(existsSync(path.join(changed, "package.json"))).toBe(false);
    expect(readFileSync(path.join(changed, "package.json.tacit-unjudged"), "utf8")).toBe(bigTacit);
    expect((attemptOf(found, "rewritten").value as ExecResult).stderr).toContain("so tacit moved it to");
    userNpx(changed, path.join(dir, "cache"));
    expect(existsSync(proof)).toBe(false);
  });
});
