// --confine-commands and a name in the roots that is not UTF-8 (runner/exec/confinement.ts,
// listing). The walk that finds the classified files to cover read directories by names decoded as
// UTF-8: a name that is not (a Latin-1 "caf\xe9", say) came back with U+FFFD in its place, a path
// that leads elsewhere. A script made a directory named "caf\uFFFD" with the file API beside a
// project's "caf\xe9" holding a .env; the command's walk listed that empty directory for the other,
// its check of the walked directories agreed, and a confined `cat "caf\xe9/.env"` printed the secret.
// (A confined `sh` could also rename a directory holding a .env to "\xff" beside an empty "\uFFFD",
// for the next command: see confinement-not-utf8-repository.test.ts.) The command is now refused,
// naming the directory, before anything runs.

import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, confinementDir, lit, makeCanary, tacit } from "./fixtures.js";

describe("a confined command and a name that is not UTF-8", () => {
  it("cannot read a classified file the walk cannot name, behind a directory named as the walk reads that name", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-exec-not-utf8-");
    const project = path.join(dir, "project");
    const home = path.join(dir, "home");
    mkdirSync(project);
    mkdirSync(home);
    const canary = makeCanary();
    // The project's own directory, named in Latin-1 (an old archive's).
    const latin1 = Buffer.concat([Buffer.from(`${project}/caf`), Buffer.from([0xe9])]);
    mkdirSync(latin1);
    writeFileSync(Buffer.concat([latin1, Buffer.from("/.env")]), `API_KEY=${canary}\n`);
    const read = `cat "caf$(printf '\\351')/.env"`;
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
attempt("decoy", () => requestFileSystem(".", (fs) => fs.access("caf\\uFFFD").mkdir()));
attempt("read", () => requestExecPermission(["sh"], (p) => p.exec("sh", ["-c", ${lit(read)}])));
`, ["--command-permissions", "sh", "--confine-commands"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(canary);
    const found = attempts(r.stdout);
    expect(attemptOf(found, "decoy").status).toBe("ok");
    const { status, value } = attemptOf(found, "read");
    expect(status, JSON.stringify(value)).not.toBe("ok");
    expect(String(value)).toContain("is not UTF-8");
    expect(String(value)).toContain("caf\\xe9");
  });
});
