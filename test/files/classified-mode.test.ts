// A file tacit creates for classified plaintext is owner-only (0600) from the open() that
// creates it: writeClassified made it 0666 less the umask (0644 under the usual 022), so a
// secret copied with writeClassified was readable by every user of the machine. An existing
// file keeps its mode; tacit never chmods. So is a directory mkdir() makes at a classified path
// (0700): under umask 000 it was 0777, where any user could rename the secrets in it and plant
// files of their own.

import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, unchecked } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, makeCanary, realTempDir, tacit, writeTree } from "./fixtures.js";

let root: string;
let cleanup: () => void;
const canary = makeCanary();
const mode = (name: string): number => statSync(path.join(root, name)).mode & 0o777;

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-files-classified-mode-"));
  writeTree(root, { ".env": `TOKEN=${canary}\n`, ".env.existing": "old\n" });
  chmodSync(path.join(root, ".env.existing"), 0o644);
});
afterAll(() => cleanup());

describe("files tacit creates at classified paths", () => {
  it("writeClassified creates a new file 0600 (computed, classified and written values alike); an existing file keeps its mode", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  attempt("computed", () => fs.writeClassified(".env.copy", secret.map((s) => s.toUpperCase())));
  attempt("classify", () => fs.writeClassified(".env.literal", classify("value")));
  attempt("entry", () => fs.access(".env.entry").writeClassified(secret));
  attempt("existing", () => fs.writeClassified(".env.existing", secret));
  attempt("plain write at a classified path", () => fs.access(".env.plain").write("not secret"));
});
`;
    const r = await tacit(root, script);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(canary);
    const found = attempts(r.stdout);
    for (const label of ["computed", "classify", "entry", "existing", "plain write at a classified path"]) expect(attemptOf(found, label).status, label).toBe("ok");
    expect(readFileSync(path.join(root, ".env.copy"), "utf8")).toBe(`TOKEN=${canary.toUpperCase()}\n`);
    expect(readFileSync(path.join(root, ".env.entry"), "utf8")).toBe(`TOKEN=${canary}\n`);
    for (const name of [".env.copy", ".env.literal", ".env.entry", ".env.plain"]) expect(mode(name).toString(8), name).toBe("600");
    expect(readFileSync(path.join(root, ".env.existing"), "utf8")).toBe(`TOKEN=${canary}\n`);
    expect(mode(".env.existing").toString(8)).toBe("644");
  }, 30_000);

  it("an ordinary file a script writes keeps the usual mode", async () => {
    const r = await tacit(root, 'requestFileSystem(".", (fs) => fs.access("notes.txt").write("hello"));');
    expect(r.code, r.stderr).toBe(0);
    expect(mode("notes.txt") & 0o600).toBe(0o600);
    expect(mode("notes.txt")).toBe(0o666 & ~process.umask());
  }, 30_000);

  it("mkdir() makes a directory at a classified path 0700, its parents too where they are classified, even under umask 000", async () => {
    const permissiveNode = path.join(root, "node-under-umask-000");
    writeFileSync(permissiveNode, `#!/bin/sh\numask 000\nexec ${JSON.stringify(process.execPath)} "$@"\n`, { mode: 0o755 });
    const script = 'requestFileSystem(".", (fs) => { fs.access("made/.ssh/keys").mkdir(); fs.access("plain/dir").mkdir(); fs.access(".aws").mkdir(); });';
    const r = await runCli(unchecked(["run", "-"]), { cwd: root, input: script, node: permissiveNode });
    expect(r.code, r.stderr).toBe(0);
    for (const name of ["made/.ssh", "made/.ssh/keys", ".aws"]) expect(mode(name).toString(8), name).toBe("700");
    // An ordinary directory keeps the mode the umask gives it, as mkdir(1) does.
    for (const name of ["made", "plain", "plain/dir"]) expect(mode(name).toString(8), name).toBe("777");
  }, 30_000);
});
