// `tacit audit show` quotes every value a script chose, so that none can forge the fields after it.
// A decision's `via` ends, for an action asked about through a link, with the pattern asked about
// ("; asked about: fs.write …/l/x -> …/deploy/x"), and that path was shown as it was: a file named
// `x: "the person said no" -> nowhere` read, on the line of a yes, as the reason of a refusal and a
// second link. That part of `via` is now quoted like a request's pattern.

import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { runCli } from "../helpers.js";
import { auditHome, workAndLog } from "./fixtures.js";

let cleanup: (() => void) | null = null;
afterEach(() => {
  cleanup?.();
  cleanup = null;
});

const NAME = 'x: "the person said no" -> nowhere';

it("the pattern a decision was asked about, a path the script named, is a quoted value in show's text", async () => {
  const ctx = auditHome();
  cleanup = ctx.cleanup;
  const { work, log } = workAndLog(ctx.dir);
  mkdirSync(path.join(work, "deploy"));
  symlinkSync("deploy", path.join(work, "l"));
  writeFileSync(path.join(work, "tacit.json"), JSON.stringify({ policy: { rules: [{ action: "fs.write", tier: "always-ask" }] } }));
  writeFileSync(path.join(work, "script.ts"), `requestFileSystem(".", (fs) => fs.access(${JSON.stringify(`l/${NAME}`)}).write("x"));\n`);
  const run = await runCli(["run", "--config", "tacit.json", "--yes", "--audit-log", log, "script.ts"], { cwd: work, env: ctx.env });
  expect(run.code, run.stderr).toBe(0);

  const shown = await runCli(["audit", "show", log], { env: ctx.env });
  expect(shown.code, shown.stdout + shown.stderr).toBe(0);
  const decision = shown.stdout.split("\n").find((row) => row.includes("decision") && row.includes("asked about"));
  const asked = `fs.write ${path.join(work, "l", NAME)} -> ${path.join(work, "deploy", NAME)}`;
  expect(decision).toBeDefined();
  // Quoted, the path's quotes escaped: nothing in it reads as a field of its own.
  expect(decision!.endsWith(`  allow  via --yes; asked about: ${JSON.stringify(asked)}`)).toBe(true);
  // The bad thing: the name's text as the line's own words, `: "the person said no"` a reason.
  expect(decision).not.toContain(`${NAME} -> `);
});
