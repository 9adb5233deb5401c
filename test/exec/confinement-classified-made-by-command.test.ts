// A classified file a confined command makes while it runs (tacit serve, two sessions at once).
// Its view covers the classified files there were when it started, and writeClassified() refuses
// to make a new one in its roots while it runs (818d540); but a file the command itself made at a
// classified name "exists already", so session two's writeClassified() filled it, and the command,
// which made it and sees it, printed the secret to its session. Through the real CLI, a real Deno,
// the MCP SDK client, real confined processes.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { connectServe, createSession, runInSession } from "../helpers.js";
import { ATTEMPT_PRELUDE, attempts, expectRefused, makeCanary, writeTree } from "./fixtures.js";
import { confinementDir } from "./fixtures.js";

describe("a classified file a confined command made while it runs", () => {
  it("is not filled by another session's writeClassified()", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-confine-made-");
    const canary = makeCanary();
    writeTree(dir, { "home/.keep": "", "project/.env": `${canary}\n`, "project/src/index.ts": "export {};\n" });
    const project = path.join(dir, "project");
    const client = await connectServe(["--command-permissions", "sh", "--confine-commands"], project, { env: { HOME: path.join(dir, "home") } });
    ctx.onTestFinished(() => client.close());
    const [waiter, writer] = [await createSession(client), await createSession(client)];
    // Session one's command makes the file at a classified name, says it runs, and once told, reads it.
    const waiting = runInSession(client, waiter, `requestExecPermission(["sh"], (proc) => {
  println(JSON.stringify(proc.exec("sh", ["-c", ": > src/.env.copy; mv src/index.ts src/.env.moved; : > started; until [ -e go ]; do sleep 0.05; done; " +
    "i=0; until [ -s src/.env.copy ] || [ $i -ge 20 ]; do sleep 0.05; i=$((i+1)); done; cat src/.env.copy src/.env.moved"], { timeoutMs: 30000 })));
});`);
    while (!existsSync(path.join(project, "started"))) await new Promise((r) => setTimeout(r, 50));
    const copy = await runInSession(client, writer, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("copy", () => fs.writeClassified("src/.env.copy", fs.readClassified(".env")));
  // A file there before the command started, renamed to a classified name by it: not covered either.
  attempt("moved", () => fs.writeClassified("src/.env.moved", fs.readClassified(".env")));
});`);
    writeFileSync(path.join(project, "go"), "");
    const read = await waiting;
    expect(read.stdout).not.toContain(canary);
    expect(read.error ?? "").not.toContain(canary);
    expectRefused(attempts(copy.stdout), ["copy", "moved"], /writeClassified\(\) refused: .*confined command \(exec\("sh"\).*--confine-commands/);
    for (const file of ["src/.env.copy", "src/.env.moved"]) expect(readFileSync(path.join(project, file), "utf8")).not.toContain(canary);
  });
});
