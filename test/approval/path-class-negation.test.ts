// A rule's path glob with a class's "!": "[!_]" is any character but "_", as a shell and
// gitignore read it. picomatch 4 read it as the class of "!" and "_", so an always-ask rule on
// "deploy/[!_]*" (everything in deploy but the drafts) matched deploy/_draft.txt and not
// deploy/prod.sh, which a script then wrote with nobody asked. Through the real CLI, with no
// terminal to ask on: a matching write is refused and nothing is written.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { unattended, worlds } from "./fixtures.js";

const world = worlds("tacit-path-class-");

describe("a rule's path glob with [!…]", () => {
  it("matches every name but those the class leaves out: the write it covers is asked (refused here), the other runs", async () => {
    const w = world();
    w.file("deploy/prod.sh", "echo original\n");
    const config = w.config([{ action: "fs.write", path: "deploy/[!_]*", tier: "always-ask" }]);
    const script = w.script(`
for (const name of ["deploy/prod.sh", "deploy/_draft.txt"]) {
  try {
    requestFileSystem(".", (fs) => fs.access(name).write("written by the script\\n"));
    println(name + " written");
  } catch (e) {
    println(name + " refused: " + (e instanceof SecurityError));
  }
}
`);
    const run = await unattended(w, ["run", "--config", config, script]);
    expect(run.code, run.all).toBe(0);
    expect(run.stdout).toBe("deploy/prod.sh refused: true\ndeploy/_draft.txt written\n");
    expect(readFileSync(w.at("deploy/prod.sh"), "utf8")).toBe("echo original\n");
    expect(readFileSync(w.at("deploy/_draft.txt"), "utf8")).toBe("written by the script\n");
  });
});
