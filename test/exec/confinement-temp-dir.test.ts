// tacit's temporary directory inside the allowed roots, with commands confined
// (runner/exec/confinement.ts, exposedTempRoot). Type checks keep their settings, the script and
// (tacit serve's) the checker's launcher in directories tacit makes there (temp-dirs.ts), and the
// checker, which runs unconfined, reads them: a tsconfig.json rewritten with noEmit off and an
// outDir, beside a .ts file of the writer's, has it write a file of the writer's choosing anywhere
// (checked by hand with tacit's tsc: `-p` on such settings wrote elsewhere/cli/main.js). Scripts
// are refused those directories by path; a confined command was not, with TMPDIR in a root (or
// /tmp itself one): `sh` rewrote the settings another run's check had written there. They are
// made after the command starts, so no cover can be planned for them: such a command is refused.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeNamespaceWrapper } from "../../runner/exec/pid-namespace.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, realTempDir, tacit } from "./fixtures.js";

let dir: string;
let cleanup: () => void;

beforeAll(() => {
  // Not under /tmp: a confined command's /tmp is its own.
  ({ dir, cleanup } = realTempDir("tacit-confine-temp-", "/var/tmp"));
});
afterAll(() => cleanup());

const namespace = probeNamespaceWrapper(["/usr/bin/unshare", "/bin/unshare"], () => undefined);

/** What another run's one-shot check had written in its directory, the settings its checker is about to read. */
const SETTINGS = JSON.stringify({ compilerOptions: { noEmit: true }, files: ["script.ts"] });
const PLANTED = JSON.stringify({ compilerOptions: { noEmit: false, outDir: "/var/tmp/planted" }, files: ["script.ts"] });

let made = 0;
function layout(tmpInside: boolean): { project: string; settings: string; env: Record<string, string> } {
  const base = path.join(dir, `case-${++made}`);
  const project = path.join(base, "project");
  const home = path.join(base, "home");
  const tmp = tmpInside ? path.join(project, "tmp") : path.join(base, "tmp");
  const checkDir = path.join(tmp, "tacit-check-Ab12Cd");
  mkdirSync(home, { recursive: true });
  mkdirSync(project, { recursive: true });
  mkdirSync(checkDir, { recursive: true, mode: 0o700 });
  const settings = path.join(checkDir, "tsconfig.json");
  writeFileSync(settings, SETTINGS);
  return { project, settings, env: { HOME: home, TMPDIR: tmp } };
}

function rewriting(settings: string): string {
  return `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("rewrite", () => { const r = proc.exec("sh", ["-c", 'printf %s "$1" > "$2"', "sh", ${lit(PLANTED)}, ${lit(settings)}]); return { exitCode: r.exitCode, stderr: r.stderr }; });
});
`;
}

describe.skipIf(namespace?.ownProc !== true)("a confined command, with tacit's temporary directory", () => {
  it("in the allowed roots: refused, nothing run, a type check's settings there as tacit wrote them", async () => {
    const { project, settings, env } = layout(true);
    const r = await tacit(project, rewriting(settings), ["--command-permissions", "sh", "--confine-commands"], env);
    expect(r.code, r.stderr).toBe(0);
    // Refused as every command that cannot be confined is: an error of the effect, not of the policy.
    const rewrite = attemptOf(attempts(r.stdout), "rewrite");
    expect(rewrite.status, JSON.stringify(rewrite.value)).toBe("Error");
    expect(String(rewrite.value)).toMatch(
      /refused, nothing was run: .*tacit's temporary directory \S+\/project\/tmp lies in the allowed roots.*set TMPDIR to a directory outside the allowed roots/,
    );
    expect(readFileSync(settings, "utf8")).toBe(SETTINGS);
  });

  it("in a hidden entry of a home that is the root (~/.cache/tmp), covered whole: runs, and cannot reach it", async () => {
    const base = path.join(dir, `case-${++made}`);
    const home = path.join(base, "home");
    const tmp = path.join(home, ".cache", "tmp");
    const checkDir = path.join(tmp, "tacit-check-Ab12Cd");
    mkdirSync(checkDir, { recursive: true, mode: 0o700 });
    const settings = path.join(checkDir, "tsconfig.json");
    writeFileSync(settings, SETTINGS);
    // Started in the home, which makes it the allowed root.
    const r = await tacit(home, rewriting(settings), ["--command-permissions", "sh", "--confine-commands"], { HOME: home, TMPDIR: tmp });
    expect(r.code, r.stderr).toBe(0);
    const rewrite = attemptOf(attempts(r.stdout), "rewrite");
    expect(rewrite.status, JSON.stringify(rewrite.value)).toBe("ok");
    expect((rewrite.value as { exitCode: number }).exitCode, "the command's write under the covered ~/.cache").not.toBe(0);
    expect(readFileSync(settings, "utf8")).toBe(SETTINGS);
  });

  it("outside the allowed roots: runs, and cannot reach it", async () => {
    const { project, settings, env } = layout(false);
    const r = await tacit(project, rewriting(settings), ["--command-permissions", "sh", "--confine-commands"], env);
    expect(r.code, r.stderr).toBe(0);
    const rewrite = attemptOf(attempts(r.stdout), "rewrite");
    expect(rewrite.status, JSON.stringify(rewrite.value)).toBe("ok");
    expect((rewrite.value as { exitCode: number }).exitCode, "the command's write outside the roots").not.toBe(0);
    expect(readFileSync(settings, "utf8")).toBe(SETTINGS);
  });
});
