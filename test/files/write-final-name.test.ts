// A write takes its final name as it is at first, without looking at it (one lstat fewer a
// write: see FileSystemExecutor.writeNow), and looks at it in its verified directory just before
// the open. Where it is a link, or a file whose writes are judged by their content, the write is
// resolved and checked in full instead. Through the real CLI, each way a final link could slip
// past the checks is tried, and what must not change is read from outside.

import { readFileSync, readlinkSync, lstatSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, makeCanary, realTempDir, tacit, writeTree } from "./fixtures.js";

let base: string;
let app: string;
let cleanup: () => void;
const canary = makeCanary();
const manifest = JSON.stringify({ name: "app", version: "1.0.0" }) + "\n";

beforeAll(() => {
  ({ dir: base, cleanup } = realTempDir("tacit-write-final-"));
  app = path.join(base, "app");
  writeTree(base, {
    "outside/secret.txt": canary + "\n",
    "app/package.json": manifest,
    "app/plain.txt": "before\n",
    "app/.ssh/id_rsa": canary + "\n",
    // Final names that are links: out of the scope, within it, to a classified file, to the manifest npx reads.
    "app/out.txt": { symlink: path.join(base, "outside/secret.txt") },
    "app/dead-out.txt": { symlink: path.join(base, "outside/created.txt") },
    "app/inside.txt": { symlink: "plain.txt" },
    "app/key.txt": { symlink: ".ssh/id_rsa" },
    "app/notes.json": { symlink: "package.json" },
  });
});
afterAll(() => cleanup());

describe("a write whose final name is a link", () => {
  it("is resolved and checked in full: out of the scope, into a classified file or a judged manifest it is refused, and nothing there changes", async () => {
    const tacitBin = JSON.stringify({ name: "app", version: "1.0.0", bin: { tacit: "x.js" } });
    const script =
      ATTEMPT_PRELUDE +
      `requestFileSystem(".", (fs) => {\n` +
      `  attempt("out", () => fs.access("out.txt").write("overwritten"));\n` +
      `  attempt("out-append", () => fs.access("out.txt").append("appended"));\n` +
      `  attempt("dead-out", () => fs.access("dead-out.txt").write("created"));\n` +
      `  attempt("manifest", () => fs.access("notes.json").write(${lit(tacitBin)}));\n` +
      `  attempt("inside", () => fs.access("inside.txt").write("through the link\\n"));\n` +
      `});\n`;
    const r = await tacit(app, script);
    const found = attempts(r.stdout);
    expectRefused(found, ["out", "out-append", "dead-out"], /outside this file system scope/);
    expectRefused(found, ["manifest"], /declare a program named tacit/);
    // A link within the scope to an ordinary file is written through, as before.
    expect(attemptOf(found, "inside").status).toBe("ok");
    expect(readFileSync(path.join(app, "plain.txt"), "utf8")).toBe("through the link\n");
    expect(readlinkSync(path.join(app, "inside.txt"))).toBe("plain.txt");
    // Nothing outside, classified or judged changed; the links are still links.
    expect(readFileSync(path.join(base, "outside/secret.txt"), "utf8")).toBe(canary + "\n");
    expect(() => lstatSync(path.join(base, "outside/created.txt"))).toThrow();
    expect(readFileSync(path.join(app, ".ssh/id_rsa"), "utf8")).toBe(canary + "\n");
    expect(readFileSync(path.join(app, "package.json"), "utf8")).toBe(manifest);
    expect(r.stdout + r.stderr).not.toContain(canary);
  }, 60_000);

  it("into a classified file is refused where classified files may not be written, and the file is unchanged", async () => {
    writeTree(base, { "no-classified-write.json": JSON.stringify({ libraryConfig: { classifiedWrite: false } }) });
    const r = await tacit(
      app,
      ATTEMPT_PRELUDE + `requestFileSystem(".", (fs) => {\n  attempt("key", () => fs.access("key.txt").write("replaced"));\n});\n`,
      ["--config", path.join(base, "no-classified-write.json")],
    );
    expectRefused(attempts(r.stdout), ["key"], /classifiedWrite is off/);
    expect(readFileSync(path.join(app, ".ssh/id_rsa"), "utf8")).toBe(canary + "\n");
    expect(r.stdout + r.stderr).not.toContain(canary);
  }, 60_000);

  it("a plain file, new or existing, is written as before", async () => {
    const r = await tacit(
      app,
      ATTEMPT_PRELUDE +
        `requestFileSystem(".", (fs) => {\n` +
        `  attempt("new", () => fs.access("sub-new.txt").write("new\\n"));\n` +
        `  attempt("existing", () => fs.access("sub-new.txt").append("more\\n"));\n` +
        `  attempt("manifest", () => fs.access("package.json").append(" "));\n` +
        `});\n`,
    );
    const found = attempts(r.stdout);
    for (const label of ["new", "existing", "manifest"]) expect(attemptOf(found, label).status, label).toBe("ok");
    expect(readFileSync(path.join(app, "sub-new.txt"), "utf8")).toBe("new\nmore\n");
    expect(readFileSync(path.join(app, "package.json"), "utf8")).toBe(manifest + " ");
  }, 60_000);
});
