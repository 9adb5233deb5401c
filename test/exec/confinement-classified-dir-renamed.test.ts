// A classified file whose directory a confined command renamed to a classified name while it runs
// (tacit serve, two sessions at once). writeClassified() judges a file in a running confined
// command's roots by its own change time (2eae0c8); but renaming a directory changes the change
// time of the directory alone, not of the files in it: src/data/credentials, there long before
// the command started and not classified then (so not covered in its view), became
// src/.aws/credentials with its old change time, session two's writeClassified() filled it, and
// the command printed the secret. Through the real CLI, a real Deno, the MCP SDK client, real
// confined processes.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { connectServe, createSession, runInSession } from "../helpers.js";
import { ATTEMPT_PRELUDE, attempts, confinementDir, expectRefused, makeCanary, writeTree } from "./fixtures.js";

describe("a file in a directory a confined command renamed to a classified name while it runs", () => {
  it("is not filled by another session's writeClassified()", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-confine-dir-renamed-");
    const canary = makeCanary();
    writeTree(dir, { "home/.keep": "", "project/.env": `${canary}\n`, "project/src/data/credentials": "old\n", "project/src/deep/a/credentials": "old\n" });
    const project = path.join(dir, "project");
    // The files' change times well before the command starts (a second of slack is allowed).
    await new Promise((r) => setTimeout(r, 1200));
    const client = await connectServe(["--command-permissions", "sh", "--confine-commands"], project, { env: { HOME: path.join(dir, "home") } });
    ctx.onTestFinished(() => client.close());
    const [waiter, writer] = [await createSession(client), await createSession(client)];
    const waiting = runInSession(client, waiter, `requestExecPermission(["sh"], (proc) => {
  println(JSON.stringify(proc.exec("sh", ["-c", "mv src/data src/.aws; mkdir src/.ssh && mv src/deep src/.ssh/x; : > started; " +
    "until [ -e go ]; do sleep 0.05; done; cat src/.aws/credentials src/.ssh/x/a/credentials"], { timeoutMs: 30000 })));
});`);
    while (!existsSync(path.join(project, "started"))) await new Promise((r) => setTimeout(r, 50));
    const written = await runInSession(client, writer, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("renamed dir", () => fs.writeClassified("src/.aws/credentials", fs.readClassified(".env")));
  // Its directory (a) kept its change time; the one above it (x) was renamed.
  attempt("renamed above", () => fs.writeClassified("src/.ssh/x/a/credentials", fs.readClassified(".env")));
});`);
    writeFileSync(path.join(project, "go"), "");
    const read = await waiting;
    expect(read.stdout).not.toContain(canary);
    expect(read.error ?? "").not.toContain(canary);
    expectRefused(attempts(written.stdout), ["renamed dir", "renamed above"], /writeClassified\(\) refused: .*confined command \(exec\("sh"\).*--confine-commands/);
    for (const file of ["src/.aws/credentials", "src/.ssh/x/a/credentials"]) expect(readFileSync(path.join(project, file), "utf8")).not.toContain(canary);
  });
});
